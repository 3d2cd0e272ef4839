/**
 * Where a resumed attempt finds the agent CLI's conversation it continues: in the record folder of
 * the attempt it resumes, on the branch it checked out (src/agent/agent-sessions.ts carried it there,
 * masked: `agent/stages/<nn>-<stage>/agent-session/<adapter>-…<id>.jsonl`). The checkout is
 * agent-written: nothing here follows a link, and the file is only ever handed to the agent's own CLI.
 */
import { lstat, readdir } from "node:fs/promises";
import path from "node:path";
import { AGENT_SESSION_DIR } from "../../../src/agent/agent-sessions.js";
import { readAgentText } from "../../../src/agent/agent-files.js";
import { NOTES_FILE } from "../../../src/agent/stages/prompt.js";

/** The carried conversation of `session` under `recordRel` in `workspace`: the newest stage's, or none. */
export async function carriedSessionFile(
  workspace: string,
  recordRel: string,
  session: { adapter: string; id: string },
): Promise<string | undefined> {
  const stages = path.join(workspace, recordRel, "agent", "stages");
  if (!(await isRealDir(path.join(workspace, recordRel, "agent"))) || !(await isRealDir(stages))) return undefined;
  const dirs = (await readdir(stages, { withFileTypes: true }).catch(() => [])).filter((e) => e.isDirectory()).map((e) => e.name);
  for (const dir of dirs.sort().reverse()) {
    const folder = path.join(stages, dir, AGENT_SESSION_DIR);
    if (!(await isRealDir(folder))) continue;
    const files = await readdir(folder, { withFileTypes: true }).catch(() => []);
    const hit = files.find((f) => f.isFile() && f.name.startsWith(`${session.adapter}-`) && f.name.endsWith(`${session.id}.jsonl`));
    if (hit) return path.join(folder, hit.name);
  }
  return undefined;
}

/** How much of an earlier attempt's progress notes a resumed attempt inherits: the last 64 KiB. */
export const MAX_CARRIED_NOTES_CHARS = 64 * 1024;

/**
 * The progress notes of the attempt a resumed one continues (docs/runner.md#progress-notes): its
 * record's `agent/progress-notes.md`, masked when the record was written, read without following a
 * link; the end of it when long. None when absent or refused.
 */
export async function carriedNotes(workspace: string, recordRel: string, warn?: (m: string) => void): Promise<string | undefined> {
  const dir = path.join(workspace, recordRel, "agent");
  if (!(await isRealDir(dir))) return undefined;
  const text = await readAgentText(workspace, path.join(dir, NOTES_FILE), warn, { maxBytes: 4 * MAX_CARRIED_NOTES_CHARS });
  if (text === undefined || text.trim() === "") return undefined;
  return text.length > MAX_CARRIED_NOTES_CHARS ? `[… the start cut …]\n${text.slice(-MAX_CARRIED_NOTES_CHARS)}` : text;
}

async function isRealDir(dir: string): Promise<boolean> {
  const st = await lstat(dir).catch(() => undefined);
  return st?.isDirectory() === true;
}
