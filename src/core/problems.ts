/**
 * What is wrong with something Forge reads — a plan's files, `.github/forge.yml`, `.forge/stages.yml`,
 * a walkthrough, a journal, the action's inputs — in one shape and one wording: a schema's complaints
 * become problems here (`zodProblems`), and every problem is written `file[:line] field — message`
 * (`formatProblem`). A plan's problems add the rule they break (`Problem`, plan/problem.ts).
 */
import type { z } from "zod";

/** One thing wrong with a file, or with another named input (an action input, an environment variable). */
export interface FileProblem {
  /** The file (or input) as the reader should find it: `.github/forge.yml`, `tasks/a.md` in a plan folder. */
  file: string;
  /** 1-based line in `file`, when known. */
  line?: number;
  /** The field concerned, as a path: `dependencies[2]`, `nodes[4].agentType`, `## Context`. */
  field?: string;
  message: string;
}

/** `dependencies[2].from` from a zod or YAML path. */
export function fieldPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else out += out === "" ? String(key) : `.${String(key)}`;
  }
  return out;
}

/** A schema complaint, kept as data: `path` is zod's path. */
export interface SchemaIssue {
  path: PropertyKey[];
  code: string;
  message: string;
}

/** zod issues as data; an unknown key becomes one issue at that key's path. */
export function toIssues(error: z.ZodError): SchemaIssue[] {
  const out: SchemaIssue[] = [];
  for (const issue of error.issues) {
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) out.push({ path: [...issue.path, key], code: issue.code, message: "unknown field" });
    } else {
      out.push({ path: [...issue.path], code: issue.code, message: issue.message });
    }
  }
  return out;
}

/** A schema's complaints about `file`, one problem each: the field as a path (none for the whole document), zod's message. */
export function zodProblems(error: z.ZodError | readonly SchemaIssue[], file: string): FileProblem[] {
  const issues = "issues" in error ? toIssues(error) : error;
  return issues.map((i) => {
    const field = fieldPath(i.path);
    return { file, ...(field !== "" && { field }), message: i.message };
  });
}

/** `file[:line] field — message`; in Markdown the location is code (`` `file:line` field — message ``). */
export function formatProblem(p: FileProblem, options: { markdown?: boolean } = {}): string {
  const at = p.line !== undefined ? `${p.file}:${p.line}` : p.file;
  const where = options.markdown ? `\`${at}\`` : at;
  return p.field !== undefined ? `${where} ${p.field} — ${p.message}` : `${where} — ${p.message}`;
}
