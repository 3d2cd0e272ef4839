/**
 * A command of the repository — the test command of a refinery's test stage and of every fix
 * cycle's retest — run as the agent would run it (docs/runner.md#isolation): it executes code the
 * agents wrote, so it gets the agent's user and the agent's environment, never the runner's. With
 * `runAs`, the work tree and a scratch folder (its `HOME` and `TMPDIR`) are handed over for the run,
 * every process of the agent's user is killed when it ends (a daemon it left included), and the
 * folders are taken back. Its output is untrusted text that goes into the next prompt: only the last
 * `maxOutputBytes` are kept, and a line never grows past that either.
 */
import { mkdirSync } from "node:fs";
import path from "node:path";
import { asAgentUser, handOver, killAgentProcesses, signalAgentGroup, takeBack, type AgentUser } from "./isolation.js";
import { runProcess } from "./process.js";

export interface RepoCommandOptions {
  /** A shell command line (`sh -c`). */
  command: string;
  cwd: string;
  /** The agent's environment (already picked from the allowlist; no keys, no tokens). */
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  signal?: AbortSignal;
  /** The agent's OS user: the command runs as it. */
  runAs?: AgentUser;
  /** A folder of the runner's for the command's `HOME` and `TMPDIR` when it runs as the agent's user. */
  scratchDir: string;
  /** Output kept, stdout and stderr each (default 256 KiB): the tail. */
  maxOutputBytes?: number;
}

export interface RepoCommandResult {
  /** The exit code; 1 when it was killed or could not start. */
  code: number;
  /** The tail of stdout, then `[stderr]` and the tail of stderr. */
  output: string;
  /** Why Forge stopped it, if it did. */
  stopped?: "timeout" | "idle" | "aborted";
  /** Processes of the agent's user that no kill could end (expected: none). */
  survivors?: number[];
}

/** The last `max` characters of what was appended, never more held in memory. */
class Tail {
  private text = "";
  cut = false;
  constructor(private readonly max: number) {}
  add(line: string): void {
    this.text += `${line.length > this.max ? line.slice(-this.max) : line}\n`;
    if (this.text.length > 2 * this.max) this.trim();
  }
  toString(): string {
    this.trim();
    return this.cut ? `[… earlier output cut]\n${this.text}` : this.text;
  }
  private trim(): void {
    if (this.text.length <= this.max) return;
    this.text = this.text.slice(-this.max);
    this.cut = true;
  }
}

export async function runRepoCommand(o: RepoCommandOptions): Promise<RepoCommandResult> {
  const max = o.maxOutputBytes ?? 256 * 1024;
  const out = new Tail(max);
  const err = new Tail(max);
  const u = o.runAs && process.getuid?.() !== o.runAs.uid ? o.runAs : undefined;
  let command = "sh";
  let args = ["-c", o.command];
  let env: NodeJS.ProcessEnv = { ...o.env };
  const dirs = [o.cwd, o.scratchDir];
  if (u) {
    const home = path.join(o.scratchDir, "home");
    const tmp = path.join(o.scratchDir, "tmp");
    mkdirSync(home, { recursive: true });
    mkdirSync(tmp, { recursive: true });
    env = { ...env, HOME: home, TMPDIR: tmp, USER: u.user, LOGNAME: u.user };
    ({ command, args } = asAgentUser(u, command, args, env));
    await handOver(u, dirs);
  }
  let survivors: number[] = [];
  let result: RepoCommandResult;
  try {
    const r = await runProcess({
      command,
      args,
      cwd: o.cwd,
      env,
      timeoutMs: o.timeoutMs,
      maxLineBytes: max,
      ...(o.signal ? { signal: o.signal } : {}),
      ...(u ? { signalGroup: (pgid: number, sig: NodeJS.Signals) => void signalAgentGroup(u, pgid, sig) } : {}),
      onStdoutLine: (l) => out.add(l),
      onStderrLine: (l) => err.add(l),
    });
    const errText = err.toString();
    result = {
      code: r.spawnError || r.code === null ? 1 : r.code,
      output: `${out.toString()}${errText ? `\n[stderr]\n${errText}` : ""}${r.spawnError ? `\n[could not start: ${r.spawnError.message}]` : ""}`,
      ...(r.stopped ? { stopped: r.stopped } : {}),
    };
  } finally {
    if (u) {
      survivors = await killAgentProcesses(u);
      await takeBack(u, dirs);
    }
  }
  return survivors.length ? { ...result, survivors } : result;
}
