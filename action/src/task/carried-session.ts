/**
 * Where a resumed attempt finds the agent CLI's conversation it continues: in the record folder of
 * the attempt it resumes, on the branch it checked out (src/agent/agent-sessions.ts carried it there,
 * masked: `agent/stages/<nn>-<stage>/agent-session/<adapter>-…<id>.jsonl`). The checkout is
 * agent-written: nothing here follows a link, and the file is only ever handed to the agent's own CLI.
 */
import { lstat, readdir } from "node:fs/promises";
import path from "node:path";
import { AGENT_SESSION_DIR } from "../../../src/agent/agent-sessions.js";

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

async function isRealDir(dir: string): Promise<boolean> {
  const st = await lstat(dir).catch(() => undefined);
  return st?.isDirectory() === true;
}
