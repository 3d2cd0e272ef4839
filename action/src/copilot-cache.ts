/**
 * Copilot CLI unpacks itself on its first start: ~235 MB (1.0.102) into `$XDG_CACHE_HOME/copilot`,
 * about 3 s. An isolated agent has a HOME of its own per session (src/agent/spawn/run.ts), so every
 * session would unpack it again into its session folder. Instead the runner unpacks it once per job,
 * as its own user, into a folder of the job's that every session reads: mode 755, so the agent's
 * user reads and runs it and cannot change it (a session that has it unpacked writes nothing there;
 * checked as an unprivileged user against the real CLI).
 */
import { execFile } from "node:child_process";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const execP = promisify(execFile);

export interface CopilotCache {
  /** XDG_CACHE_HOME for every Copilot CLI session of the job. */
  dir: string;
  close(): Promise<void>;
}

/**
 * Unpacks Copilot CLI (`binary --version`) into a new folder of the job's; undefined, with a warning,
 * when that fails (each session then unpacks it for itself; a missing CLI is reported by the session).
 */
export async function warmCopilotCache(
  env: NodeJS.ProcessEnv,
  warn: (message: string) => void,
  binary = "copilot",
): Promise<CopilotCache | undefined> {
  let dir: string | undefined;
  try {
    // The system temp folder (1777), not RUNNER_TEMP: the agent user may not pass through the runner's home.
    dir = await mkdtemp(path.join(tmpdir(), "forge-copilot-cache-"));
    await chmod(dir, 0o755);
    await execP(binary, ["--version"], {
      env: {
        PATH: env.PATH ?? "/usr/bin:/bin",
        HOME: env.HOME ?? dir,
        XDG_CACHE_HOME: dir,
        COPILOT_OFFLINE: "true",
        COPILOT_AUTO_UPDATE: "false",
      },
      timeout: 120_000,
    });
    const made = dir;
    return { dir: made, close: () => rm(made, { recursive: true, force: true }) };
  } catch (err) {
    if (dir) await rm(dir, { recursive: true, force: true });
    warn(`Copilot CLI could not be unpacked once for the job (each session unpacks it, ~235 MB): ${(err as Error).message.split("\n")[0]}`);
    return undefined;
  }
}
