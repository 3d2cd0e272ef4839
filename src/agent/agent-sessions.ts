/**
 * The agent CLI's conversation, carried from one job to the next (docs/executor.md#resuming): after
 * a session, the runner copies the one file the CLI keeps the conversation in — Claude Code's
 * `<config dir>/projects/<cwd>/<id>.jsonl`, Codex's `<CODEX_HOME>/sessions/…/rollout-…-<id>.jsonl`,
 * Gemini CLI's `<GEMINI_CLI_HOME>/.gemini/tmp/<project>/chats/session-<time>-<id's first 8>.jsonl`,
 * Qwen Code's `<QWEN_HOME>/projects/<cwd>/chats/<id>.jsonl` —
 * Copilot CLI's `<COPILOT_HOME>/session-state/<id>/events.jsonl` (the rest of that folder — its
 * checkpoints, file snapshots, locks — it does without: a resume reads the events alone) —
 * into the session folder's `agent-session/`, masked; nothing else of the CLI's home (its settings,
 * its keys, its caches) goes with it. opencode keeps its conversations in a SQLite database, not
 * carried: a resumed opencode attempt starts its session afresh (the adapter's page says so). A resumed attempt's job puts that file back where the CLI looks
 * for it, in the new session's home, before `--resume` / `exec resume` asks for it.
 *
 * The file is the agent's (its process wrote it): it is read without following a link, bounded, and
 * only ever handed to the agent's own CLI as its conversation.
 */
import { mkdir, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { readAgentFile } from "./agent-files.js";
import type { Masker } from "./secrets.js";
import type { AdapterName } from "./types.js";

/** Where a session's carried conversation goes, inside the session folder. */
export const AGENT_SESSION_DIR = "agent-session";

/** A conversation larger than this is not carried (the next attempt starts its session afresh). */
export const MAX_CARRIED_SESSION_BYTES = 8_000_000;

/** A session id as a file name may hold it: what the checkpoint's SESSION_ID allows. */
const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

function claudeConfigDir(env: NodeJS.ProcessEnv): string | undefined {
  return env.CLAUDE_CONFIG_DIR || (env.HOME ? path.join(env.HOME, ".claude") : undefined);
}

function codexHome(env: NodeJS.ProcessEnv): string | undefined {
  return env.CODEX_HOME || (env.HOME ? path.join(env.HOME, ".codex") : undefined);
}

/** Gemini CLI's own folder: GEMINI_CLI_HOME stands for the home directory (the adapter sets it per session). */
function geminiDir(env: NodeJS.ProcessEnv): string | undefined {
  const home = env.GEMINI_CLI_HOME || env.HOME;
  return home ? path.join(home, ".gemini") : undefined;
}

/** Copilot CLI's own folder: COPILOT_HOME (the adapter sets it per session), else ~/.copilot. */
function copilotDir(env: NodeJS.ProcessEnv): string | undefined {
  return env.COPILOT_HOME || (env.HOME ? path.join(env.HOME, ".copilot") : undefined);
}

/** Gemini CLI names a project's folder by its directory's name: lower case, every run of other characters a dash. */
export const geminiProjectDir = (cwd: string) =>
  (path.basename(cwd) || "project")
    .toLowerCase()
    .replace(/[^a-z0-9]/g, "-")
    .replace(/-+/g, "-")
    .replace(/^-|-$/g, "") || "project";

/** Qwen Code's own folder: QWEN_HOME (the adapter sets it per session), else `~/.qwen`. */
function qwenDir(env: NodeJS.ProcessEnv): string | undefined {
  return env.QWEN_HOME || (env.HOME ? path.join(env.HOME, ".qwen") : undefined);
}

/** Claude Code names a project's folder by its working directory, every character but letters and digits a dash. */
export const claudeProjectDir = (cwd: string) => cwd.replace(/[^A-Za-z0-9]/g, "-");

/** Files named `name` (or ending so) under `dir`, at most `depth` folders down; links are never followed. */
async function findFile(dir: string, match: (name: string) => boolean, depth: number): Promise<string | undefined> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const e of entries) if (e.isFile() && match(e.name)) return path.join(dir, e.name);
  if (depth <= 0) return undefined;
  for (const e of entries) {
    if (!e.isDirectory()) continue;
    const found = await findFile(path.join(dir, e.name), match, depth - 1);
    if (found) return found;
  }
  return undefined;
}

/** The file the CLI keeps session `id`'s conversation in, in the environment the session ran with. */
export async function sessionFileOf(adapter: AdapterName, env: NodeJS.ProcessEnv, id: string): Promise<string | undefined> {
  if (!SAFE_ID.test(id)) return undefined;
  if (adapter === "claude") {
    const dir = claudeConfigDir(env);
    return dir ? findFile(path.join(dir, "projects"), (n) => n === `${id}.jsonl`, 1) : undefined;
  }
  if (adapter === "codex") {
    const dir = codexHome(env);
    return dir ? findFile(path.join(dir, "sessions"), (n) => n.startsWith("rollout-") && n.endsWith(`-${id}.jsonl`), 4) : undefined;
  }
  if (adapter === "gemini") {
    const dir = geminiDir(env);
    const short = id.slice(0, 8);
    return dir ? findFile(path.join(dir, "tmp"), (n) => n.startsWith("session-") && n.endsWith(`-${short}.jsonl`), 2) : undefined;
  }
  if (adapter === "qwen") {
    const dir = qwenDir(env);
    return dir ? findFile(path.join(dir, "projects"), (n) => n === `${id}.jsonl`, 2) : undefined;
  }
  if (adapter === "copilot") {
    const dir = copilotDir(env);
    return dir ? findFile(path.join(dir, "session-state", id), (n) => n === "events.jsonl", 0) : undefined;
  }
  return undefined;
}

/**
 * Copies session `id`'s conversation into `<sessionDir>/agent-session/`, masked; the copy's path, or
 * why none was made. `root` is the folder the CLI's home lies in (the session's, or the runner's):
 * the file is read only inside it.
 */
export async function carrySession(
  adapter: AdapterName,
  env: NodeJS.ProcessEnv,
  id: string,
  sessionDir: string,
  masker: Masker,
): Promise<{ file?: string; why?: string }> {
  const file = await sessionFileOf(adapter, env, id);
  if (!file) return { why: "the CLI left no conversation file" };
  const buf = await readAgentFile(path.dirname(file), file, { maxBytes: MAX_CARRIED_SESSION_BYTES }).catch((e: unknown) => e as Error);
  if (buf instanceof Error) return { why: `its conversation was not carried: ${buf.message}` };
  if (!buf) return { why: "its conversation file could not be read" };
  // Gemini CLI's file names hold only the id's first 8 characters: the copy is named by the whole id.
  // Copilot CLI's file is named by its folder, the id.
  const name = adapter === "gemini" ? `session-${id}.jsonl` : adapter === "copilot" ? `${id}.jsonl` : path.basename(file);
  const dest = path.join(sessionDir, AGENT_SESSION_DIR, `${adapter}-${name}`);
  await mkdir(path.dirname(dest), { recursive: true });
  await writeFile(dest, scrubSession(buf.toString("utf8"), masker));
  return { file: dest };
}

/**
 * What of a conversation file may travel: every secret the job registered and every token shape
 * masked, line by line — a line that is no longer JSON after masking is dropped rather than carried
 * broken (the CLI skips what it cannot read, but would stop at a line it half reads).
 */
export function scrubSession(text: string, masker: Masker): string {
  const out: string[] = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    const masked = masker.mask(line);
    try {
      JSON.parse(masked);
      out.push(masked);
    } catch {
      // Masking broke it (a secret inside an escape), or it was never JSON: not carried.
    }
  }
  return out.length ? `${out.join("\n")}\n` : "";
}

/**
 * Puts a carried conversation back where the CLI looks for session `id` when it runs with `env` in
 * `cwd`: Claude Code's project folder of `cwd`, Codex's sessions folder (by the date in its name),
 * Gemini CLI's chats folder of the project `cwd` (the session's home is new: no other project took its name),
 * Copilot CLI's `session-state/<id>/events.jsonl`.
 */
export async function restoreSession(
  adapter: AdapterName,
  carried: Buffer,
  carriedName: string,
  env: NodeJS.ProcessEnv,
  cwd: string,
  id: string,
): Promise<string | undefined> {
  if (!SAFE_ID.test(id)) return undefined;
  let dest: string | undefined;
  if (adapter === "claude") {
    const dir = claudeConfigDir(env);
    if (dir) dest = path.join(dir, "projects", claudeProjectDir(cwd), `${id}.jsonl`);
  } else if (adapter === "codex") {
    const dir = codexHome(env);
    const name = carriedName.replace(/^codex-/, "");
    const date = /^rollout-(\d{4})-(\d{2})-(\d{2})T/.exec(name);
    if (dir && date && name.endsWith(`-${id}.jsonl`)) dest = path.join(dir, "sessions", date[1]!, date[2]!, date[3]!, name);
  } else if (adapter === "gemini") {
    const dir = geminiDir(env);
    if (dir) dest = path.join(dir, "tmp", geminiProjectDir(cwd), "chats", `session-${id}.jsonl`);
  } else if (adapter === "qwen") {
    // Qwen Code names a project's folder as Claude Code does.
    const dir = qwenDir(env);
    if (dir) dest = path.join(dir, "projects", claudeProjectDir(cwd), "chats", `${id}.jsonl`);
  } else if (adapter === "copilot") {
    const dir = copilotDir(env);
    if (dir) dest = path.join(dir, "session-state", id, "events.jsonl");
  }
  if (!dest) return undefined;
  await mkdir(path.dirname(dest), { recursive: true });
  await writeFile(dest, carried);
  return dest;
}
