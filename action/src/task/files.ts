/**
 * File helpers of the task job: existence, listing, the links the agent left, and the copy of the
 * session into the record folder. The session folder was the agent's: nothing here follows a link.
 */
import { existsSync } from "node:fs";
import { lstat, mkdir, readdir, rm, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { readAgentFile } from "../../../src/agent/agent-files.js";
import { AGENT_SESSION_DIR, MAX_CARRIED_SESSION_BYTES } from "../../../src/agent/agent-sessions.js";

/** Transcripts and other session files above this are cut (head and tail kept) in the record commit. */
const MAX_RECORD_FILE_BYTES = 1_000_000;

/** Whether anything is at `file` — a link counts, wherever it points (it is never followed). */
export async function exists(file: string): Promise<boolean> {
  return lstat(file).then(
    () => true,
    () => false,
  );
}

export async function listFiles(dir: string, prefix = ""): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(path.join(dir, prefix), { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...(await listFiles(dir, rel)));
    else if (e.isFile()) out.push(path.join(dir, rel));
  }
  return out;
}

/**
 * Removes every link under `dir` (the agent's session folder, once the agent has ended): the runner
 * then writes its reports there without writing through a link of the agent's. Returns their paths.
 */
export async function dropLinks(dir: string, prefix = ""): Promise<string[]> {
  const out: string[] = [];
  const entries = await readdir(path.join(dir, prefix), { withFileTypes: true }).catch(() => []);
  for (const e of entries) {
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isSymbolicLink()) {
      await unlink(path.join(dir, rel)).catch(() => undefined);
      out.push(rel);
    } else if (e.isDirectory()) out.push(...(await dropLinks(dir, rel)));
  }
  return out;
}

/**
 * Whether `rel` (inside `root`) lies in an agent session's own HOME or TMPDIR (`<session>/home/`,
 * `<session>/tmp/`, src/agent/spawn/run.ts): the CLI's settings, caches and credentials live there.
 * None of it is published; the one file a resumed attempt needs, the conversation, travels apart,
 * masked (`agent-session/`, src/agent/agent-sessions.ts).
 */
export function inAgentHome(root: string, rel: string): boolean {
  const parts = rel.split(/[\\/]/);
  for (let i = 0; i < parts.length - 1; i++) {
    if (parts[i] !== "home" && parts[i] !== "tmp") continue;
    const session = path.join(root, ...parts.slice(0, i));
    if (existsSync(path.join(session, "transcript.log")) || existsSync(path.join(session, "events.ndjson"))) return true;
  }
  return false;
}

/**
 * Removes every agent session's own HOME and TMPDIR under `root` (what `inAgentHome` keeps out of the
 * record: the CLIs' settings, caches, conversations), once the job has recorded and uploaded what it
 * publishes. Returns what could not be removed (a file of another OS user's, say), as messages.
 */
export async function removeAgentHomes(root: string, prefix = ""): Promise<string[]> {
  const problems: string[] = [];
  const entries = await readdir(path.join(root, prefix), { withFileTypes: true }).catch(() => []);
  for (const e of entries) {
    if (!e.isDirectory()) continue;
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    if (inAgentHome(root, `${rel}/x`)) {
      await rm(path.join(root, rel), { recursive: true, force: true }).catch((err: unknown) => {
        problems.push(`${rel}: ${(err as Error).message}`);
      });
    } else problems.push(...(await removeAgentHomes(root, rel)));
  }
  return problems;
}

/** Copies the session folder into the record folder; oversized files keep their head and tail. */
export async function copyForRecord(from: string, to: string): Promise<void> {
  await rm(to, { recursive: true, force: true });
  await mkdir(to, { recursive: true });
  for (const file of await listFiles(from)) {
    const rel = path.relative(from, file);
    if (path.basename(rel).includes(".tmp.") || inAgentHome(from, rel)) continue;
    const dest = path.join(to, rel);
    await mkdir(path.dirname(dest), { recursive: true });
    // Read without following a link (a file swapped for one since the listing is skipped).
    const buf = await readAgentFile(from, file, { maxBytes: Number.MAX_SAFE_INTEGER }).catch(() => undefined);
    if (!buf) continue;
    const size = buf.length;
    // A carried conversation (agent-session/) is kept whole or not at all: a cut one is no conversation.
    if (rel.split(/[\\/]/).includes(AGENT_SESSION_DIR)) {
      if (size <= MAX_CARRIED_SESSION_BYTES) await writeFile(dest, buf);
      continue;
    }
    if (size <= MAX_RECORD_FILE_BYTES) await writeFile(dest, buf);
    else {
      const half = Math.floor(MAX_RECORD_FILE_BYTES / 2);
      await writeFile(
        dest,
        Buffer.concat([
          buf.subarray(0, half),
          Buffer.from(`\n[… ${size - 2 * half} bytes cut by the Forge runner …]\n`),
          buf.subarray(size - half),
        ]),
      );
    }
  }
}
