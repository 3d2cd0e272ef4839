/**
 * What the headless CLI adapters share (Codex, Gemini CLI, opencode, Qwen Code, Copilot CLI): the
 * agent's environment, the folders it may write outside the checkout, reading one JSON event per
 * stdout line (HeadlessParser: turns, running tools, errors, the outcome), the session's own CLI home
 * (kept out of the record the runner publishes), and merging Forge's settings over the runner's own.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { pickEnv } from "../env.js";
import { oneLine, type AdapterInput, type AdapterOutcome, type OutputParser, type ProgressDraft } from "./types.js";

export type Json = Record<string, unknown>;
export const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** One stdout line as a JSON object, or a progress event holding the line as it is (`undefined` for a blank line). */
export function readJsonLine(line: string): { event: Json } | { drafts: ProgressDraft[] } {
  const t = line.trim();
  if (!t) return { drafts: [] };
  try {
    const parsed: unknown = t.startsWith("{") ? JSON.parse(t) : undefined;
    if (isObject(parsed)) return { event: parsed };
  } catch {
    // Not JSON: the line as it is.
  }
  return { drafts: [{ kind: "output", summary: oneLine(line) }] };
}

/** A stderr line as a progress event. */
export const stderrDrafts = (line: string): ProgressDraft[] => (line.trim() ? [{ kind: "stderr", summary: oneLine(line) }] : []);

/** A JSON file's object; undefined when the file is missing, unreadable or not an object. */
export function readJsonObject(file: string | undefined): Json | undefined {
  if (!file || !existsSync(file)) return undefined;
  try {
    const parsed: unknown = JSON.parse(readFileSync(file, "utf8"));
    return isObject(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The agent's environment: the host's variables its CLI reads (`names`, patterns as pickEnv takes
 * them) and those the configuration passes, then Forge's, then the caller's own.
 */
export function agentEnv(
  input: Pick<AdapterInput, "parentEnv" | "passEnv" | "forgeEnv" | "extraEnv">,
  names: readonly string[],
): Record<string, string> {
  return { ...pickEnv(input.parentEnv, [...names, ...input.passEnv]), ...input.forgeEnv, ...input.extraEnv };
}

/**
 * Directories outside `cwd` where Forge expects the agent to write: the session directory and the
 * report files' folders (each once, none inside `cwd` or inside another).
 */
export function sessionWritableDirs(cwd: string, forgeEnv: Record<string, string> = {}, more: Array<string | undefined> = []): string[] {
  const dirs = [forgeEnv.FORGE_SESSION_DIR, forgeEnv.FORGE_SIGNAL_DIR, ...more];
  for (const file of [
    forgeEnv.FORGE_WALKTHROUGH_PATH,
    forgeEnv.FORGE_QUESTION_FILE,
    forgeEnv.FORGE_CHANGE_REQUEST_FILE,
    forgeEnv.FORGE_REFINEMENT_FILE,
  ]) {
    if (file) dirs.push(path.dirname(path.resolve(cwd, file)));
  }
  const inside = (dir: string, root: string) => {
    const rel = path.relative(root, dir);
    return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
  };
  const out: string[] = [];
  for (const d of dirs) {
    if (!d) continue;
    const abs = path.resolve(cwd, d);
    if (inside(abs, cwd) || out.some((o) => inside(abs, o))) continue;
    out.push(abs);
  }
  return out;
}

/** `over` over `base`, key by key, objects merged. */
export function mergeJson(base: Json, over: Json): Json {
  const out: Json = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = isObject(v) && isObject(base[k]) ? mergeJson(base[k], v) : v;
  return out;
}

/**
 * The session's CLI home: the session folder's `home/`, the same folder that is its HOME when it runs
 * as its own OS user — kept out of the record the runner publishes (action/src/task/files.ts
 * `inAgentHome`): a CLI's settings, its instruction files and raw conversation are not the work.
 */
export function sessionHome(input: Pick<AdapterInput, "forgeEnv" | "cwd">): string {
  return path.join(input.forgeEnv.FORGE_SESSION_DIR ?? input.cwd, "home");
}

/** A one-line summary of a tool call: its name and the file, command or pattern it works on. */
export function toolCallSummary(name: string, params: unknown): string {
  const p = isObject(params) ? params : {};
  const target =
    p.file_path ?? p.filePath ?? p.absolute_path ?? p.path ?? p.command ?? p.pattern ?? p.dir_path ?? p.url ?? p.query ?? p.description;
  return oneLine(`${name}${typeof target === "string" ? ` ${target}` : ""}`, 160);
}

/** Claude Code's tool names (Forge's per-kind lists, src/agent/hierarchy.ts) mapped through `map`; `Bash(git:*)` counts as Bash. */
export function mapTools(allowedTools: readonly string[], map: Readonly<Record<string, readonly string[]>>): string[] {
  const out = new Set<string>();
  for (const t of allowedTools) for (const g of map[t.replace(/\(.*$/, "")] ?? []) out.add(g);
  return [...out];
}

/** What a parser learnt that its outcome reports, besides whether the session ended well. */
export interface OutcomeFields {
  result?: string;
  model?: string;
  sessionId?: string;
  costUsd?: number;
  apiErrorStatus?: number;
}

/**
 * The parser of a CLI that prints one JSON event per stdout line: a line that is no JSON object is
 * progress as it is, stderr is progress, and the parser keeps the model turns, the tool calls still
 * running (for the idle limit) and the errors the CLI reported. `event` reads one event; `outcome`
 * builds what `finish` returns: the errors, else `missingEnd` when the CLI exited 0 without the
 * event that ends a session well (`ended`).
 */
export abstract class HeadlessParser implements OutputParser {
  protected turnCount = 0;
  protected readonly errors: string[] = [];
  protected readonly running = new Set<string>();

  protected abstract event(e: Json): ProgressDraft[];
  abstract finish(exitCode: number | null): AdapterOutcome;

  stdoutLine(line: string): ProgressDraft[] {
    const read = readJsonLine(line);
    return "drafts" in read ? read.drafts : this.event(read.event);
  }

  stderrLine(line: string): ProgressDraft[] {
    return stderrDrafts(line);
  }

  turns(): number {
    return this.turnCount;
  }

  busy(): boolean {
    return this.running.size > 0;
  }

  protected outcome(
    ok: boolean,
    fields: OutcomeFields,
    end: { exitCode: number | null; ended: boolean; missingEnd: string },
  ): AdapterOutcome {
    const outcome: AdapterOutcome = { ok, turns: this.turnCount };
    if (fields.result !== undefined) outcome.result = fields.result;
    if (fields.model) outcome.model = fields.model;
    if (fields.sessionId) outcome.sessionId = fields.sessionId;
    if (fields.costUsd) outcome.costUsd = fields.costUsd;
    if (fields.apiErrorStatus !== undefined) outcome.apiErrorStatus = fields.apiErrorStatus;
    if (this.errors.length > 0) outcome.errorText = this.errors.join("\n");
    else if (end.exitCode === 0 && !end.ended) outcome.errorText = end.missingEnd;
    return outcome;
  }
}
