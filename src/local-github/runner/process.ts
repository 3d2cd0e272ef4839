// Child processes for steps: each in its own process group, so cancellation reaches whatever
// the step started (SIGTERM, then SIGKILL after a grace period), and a runner "dying" can take
// the whole group down at once.
import { spawn, type ChildProcess } from "node:child_process";

export type StopReason = "cancelled" | "timed_out" | "killed";

export interface ProcessResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** Why the runner stopped the process, if it did. */
  stoppedBy: StopReason | null;
  /** The process could not start (e.g. the shell is missing). */
  spawnError?: Error;
}

export interface RunProcessOptions {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** Called once per complete output line (stdout and stderr interleaved, as the runner logs them). */
  onLine: (line: string) => void;
  timeoutMs?: number;
  /** Aborting stops the process: SIGTERM, then SIGKILL after killGraceMs. */
  signal?: AbortSignal;
  killGraceMs: number;
  /** Run as this user (the runner must be root). */
  runAs?: { uid: number; gid: number };
  /** Receives the child as soon as it exists, so a runner kill can reach it. */
  onSpawn?: (child: ChildProcess) => void;
}

export function killGroup(pid: number | undefined, sig: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, sig);
  } catch {
    // ESRCH: the group is gone already.
  }
}

export function runProcess(opts: RunProcessOptions): Promise<ProcessResult> {
  return new Promise((resolve) => {
    let stoppedBy: StopReason | null = null;
    let settled = false;
    let child: ChildProcess;
    try {
      child = spawn(opts.command, opts.args, {
        cwd: opts.cwd,
        env: opts.env,
        detached: true, // own process group: pid === pgid
        ...(opts.runAs ? { uid: opts.runAs.uid, gid: opts.runAs.gid } : {}),
        stdio: ["ignore", "pipe", "pipe"],
      });
    } catch (err) {
      resolve({ exitCode: null, signal: null, stoppedBy: null, spawnError: err as Error });
      return;
    }
    opts.onSpawn?.(child);

    const buffers = { out: "", err: "" };
    const feed = (which: "out" | "err", chunk: Buffer) => {
      buffers[which] += chunk.toString("utf8");
      let nl: number;
      while ((nl = buffers[which].indexOf("\n")) >= 0) {
        const line = buffers[which].slice(0, nl).replace(/\r$/, "");
        buffers[which] = buffers[which].slice(nl + 1);
        opts.onLine(line);
      }
    };
    child.stdout!.on("data", (c: Buffer) => feed("out", c));
    child.stderr!.on("data", (c: Buffer) => feed("err", c));

    let graceTimer: NodeJS.Timeout | undefined;
    const stop = (reason: StopReason) => {
      if (stoppedBy || settled) return;
      stoppedBy = reason;
      killGroup(child.pid, "SIGTERM");
      // eslint-disable-next-line no-restricted-globals -- a kill grace bounds a real process
      graceTimer = setTimeout(() => killGroup(child.pid, "SIGKILL"), opts.killGraceMs);
      graceTimer.unref();
    };
    const timeout =
      opts.timeoutMs !== undefined && Number.isFinite(opts.timeoutMs)
        ? // eslint-disable-next-line no-restricted-globals -- a step's timeout bounds a real process
          setTimeout(() => stop("timed_out"), Math.max(0, opts.timeoutMs))
        : undefined;
    const onAbort = () => stop("cancelled");
    if (opts.signal?.aborted) queueMicrotask(onAbort);
    else opts.signal?.addEventListener("abort", onAbort, { once: true });

    let exitCode: number | null = null;
    let exitSignal: NodeJS.Signals | null = null;
    const finish = (spawnError?: Error) => {
      if (settled) return;
      settled = true;
      if (timeout) clearTimeout(timeout);
      if (graceTimer) clearTimeout(graceTimer);
      opts.signal?.removeEventListener("abort", onAbort);
      for (const which of ["out", "err"] as const) {
        if (buffers[which] !== "") opts.onLine(buffers[which]);
        buffers[which] = "";
      }
      child.stdout?.destroy();
      child.stderr?.destroy();
      resolve({ exitCode, signal: exitSignal, stoppedBy, ...(spawnError ? { spawnError } : {}) });
    };
    child.on("error", (err) => finish(err));
    child.on("exit", (code, sig) => {
      exitCode = code;
      exitSignal = sig;
      // Wait briefly for the pipes to drain; a background grandchild may hold them open forever.
      // eslint-disable-next-line no-restricted-globals -- a real process's pipes drain in real time
      const t = setTimeout(() => finish(), 200);
      t.unref();
    });
    child.on("close", () => finish());
  });
}
