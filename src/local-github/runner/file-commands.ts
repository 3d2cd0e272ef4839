// Environment files (GITHUB_OUTPUT, GITHUB_ENV, GITHUB_STATE, GITHUB_PATH, GITHUB_STEP_SUMMARY)
// and the `::command::` lines a step prints, as the Actions runner reads them.
//
// Format ("Workflow commands for GitHub Actions" → Environment files): each entry is either
// `name=value` on one line or the multiline form
//   name<<DELIMITER
//   line…
//   DELIMITER
// which `@actions/core` writes with a random `ghadelimiter_<uuid>` delimiter.

import { randomUUID } from "node:crypto";
import { chown, writeFile } from "node:fs/promises";
import path from "node:path";

/** The step's file commands: one fresh file each (GITHUB_OUTPUT, GITHUB_ENV, …), read after it ran. */
export interface StepFiles {
  GITHUB_OUTPUT: string;
  GITHUB_ENV: string;
  GITHUB_PATH: string;
  GITHUB_STEP_SUMMARY: string;
  GITHUB_STATE: string;
}

/** Creates a step's files, empty, in `dir`; the step's user's when it has one (`RunJobOptions.runAs`). */
export async function createStepFiles(dir: string, runAs?: { uid: number; gid: number }): Promise<StepFiles> {
  const files: StepFiles = {
    GITHUB_OUTPUT: path.join(dir, `set_output_${randomUUID()}`),
    GITHUB_ENV: path.join(dir, `set_env_${randomUUID()}`),
    GITHUB_PATH: path.join(dir, `add_path_${randomUUID()}`),
    GITHUB_STEP_SUMMARY: path.join(dir, `step_summary_${randomUUID()}`),
    GITHUB_STATE: path.join(dir, `save_state_${randomUUID()}`),
  };
  await Promise.all(Object.values(files).map((f) => writeFile(f, "")));
  if (runAs) await Promise.all(Object.values(files).map((f) => chown(f, runAs.uid, runAs.gid)));
  return files;
}

export class FileCommandError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "FileCommandError";
  }
}

/** Parse a key/value env file (GITHUB_OUTPUT, GITHUB_ENV, GITHUB_STATE). Later keys win. */
export function parseKeyValueFile(text: string, fileName: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const lines = text.split(/\r?\n/);
  // A trailing newline leaves one empty string at the end.
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line === "") continue;
    const eq = line.indexOf("=");
    const heredoc = line.indexOf("<<");
    if (heredoc > 0 && (eq < 0 || heredoc < eq)) {
      const name = line.slice(0, heredoc);
      const delimiter = line.slice(heredoc + 2);
      if (name === "") throw new FileCommandError(`Invalid format '${line}' in ${fileName}: name must not be empty`);
      if (delimiter === "") throw new FileCommandError(`Invalid format '${line}' in ${fileName}: delimiter must not be empty`);
      const value: string[] = [];
      let closed = false;
      for (i++; i < lines.length; i++) {
        if (lines[i] === delimiter) {
          closed = true;
          break;
        }
        value.push(lines[i]!);
      }
      if (!closed) throw new FileCommandError(`Matching delimiter not found '${delimiter}' in ${fileName}`);
      out.push([name, value.join("\n")]);
      continue;
    }
    if (eq <= 0) throw new FileCommandError(`Invalid format '${line}' in ${fileName}`);
    out.push([line.slice(0, eq), line.slice(eq + 1)]);
  }
  return out;
}

/** GITHUB_PATH: one directory per line. */
export function parsePathFile(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== "");
}

export interface WorkflowCommand {
  command: string;
  properties: Record<string, string>;
  value: string;
}

// `::command key=v,key2=v2::message`, with %25 %0D %0A (and %3A %2C in properties) escapes.
const COMMAND_RE = /^\s*::([A-Za-z-]+)(?: ([^:]*))?::(.*)$/;

function unescapeData(s: string): string {
  return s.replace(/%0D/gi, "\r").replace(/%0A/gi, "\n").replace(/%25/g, "%");
}

function unescapeProperty(s: string): string {
  return unescapeData(s).replace(/%3A/gi, ":").replace(/%2C/gi, ",");
}

export function parseWorkflowCommand(line: string): WorkflowCommand | null {
  const m = COMMAND_RE.exec(line);
  if (!m) return null;
  const properties: Record<string, string> = {};
  for (const part of (m[2] ?? "").split(",")) {
    if (!part) continue;
    const eq = part.indexOf("=");
    if (eq > 0) properties[part.slice(0, eq).trim()] = unescapeProperty(part.slice(eq + 1));
  }
  return { command: m[1]!, properties, value: unescapeData(m[3] ?? "") };
}

/** Replaces every registered secret in a log line with `***`, as GitHub's log masking does. */
export class Masker {
  private readonly secrets = new Set<string>();

  add(secret: string | undefined | null): void {
    if (!secret) return;
    const s = secret.trim();
    // GitHub masks each line of a multi-line secret separately.
    for (const part of s.split(/\r?\n/)) if (part.trim().length > 0) this.secrets.add(part.trim());
  }

  mask(text: string): string {
    if (this.secrets.size === 0) return text;
    // Longest first, so a secret that contains another is masked whole.
    const sorted = [...this.secrets].sort((a, b) => b.length - a.length);
    let out = text;
    for (const s of sorted) out = out.split(s).join("***");
    return out;
  }
}
