/**
 * What the headless CLI adapters share (Gemini CLI, opencode, Qwen Code, Codex): reading one JSON
 * event per stdout line, the session's own CLI home (kept out of the record the runner publishes),
 * merging Forge's settings over the runner's own, and the text-then-tools bookkeeping of a model turn.
 */
import path from "node:path";
import { oneLine, type AdapterInput, type ProgressDraft } from "./types.js";

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
