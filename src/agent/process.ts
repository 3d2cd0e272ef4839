/**
 * Running an agent process: line-by-line output, a wall-clock limit, an idle limit (no output on
 * stdout or stderr for N ms), cancellation, and a kill that reaches the whole process group (agent
 * CLIs start shells and tools of their own).
 */
import { spawn } from "node:child_process";

export interface RunProcessOptions {
  command: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Written to stdin, then closed; stdin is closed at once when absent. */
  stdin?: string;
  timeoutMs?: number;
  idleTimeoutMs?: number;
  /** The idle limit while `isBusy()` says a tool is running (default: idleTimeoutMs). */
  busyIdleTimeoutMs?: number;
  isBusy?: () => boolean;
  signal?: AbortSignal;
  onStdoutLine?: (line: string) => void;
  onStderrLine?: (line: string) => void;
  /** Grace between SIGTERM and SIGKILL (default 2 s). */
  killGraceMs?: number;
  /** A line longer than this is passed on in pieces of this size (default: no limit). */
  maxLineBytes?: number;
  /** Signals the child's process group when this process may not (it runs as another user). */
  signalGroup?: (pgid: number, signal: NodeJS.Signals) => void;
}

export interface ProcessOutcome {
  /** Exit code, or null when killed by a signal. */
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Why Forge stopped it, if it did. */
  stopped?: "timeout" | "idle" | "aborted";
  /** The process could not be started at all (ENOENT, EACCES). */
  spawnError?: Error;
  durationMs: number;
  /** Time from the last output to the kill, for idle stops. */
  silentMs?: number;
}

export function runProcess(options: RunProcessOptions): Promise<ProcessOutcome> {
  const t0 = Date.now();
  return new Promise((resolve) => {
    let settled = false;
    let stopped: ProcessOutcome["stopped"];
    let lastOutput = Date.now();
    let silentMs: number | undefined;
    const timers: NodeJS.Timeout[] = [];

    // detached: the child leads its own process group, so a kill reaches its children too.
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(options.command, options.args, {
        cwd: options.cwd,
        env: options.env,
        stdio: ["pipe", "pipe", "pipe"],
        detached: process.platform !== "win32",
      });
    } catch (err) {
      resolve({ code: null, signal: null, spawnError: err as Error, durationMs: Date.now() - t0 });
      return;
    }

    const finish = (outcome: Omit<ProcessOutcome, "durationMs">) => {
      if (settled) return;
      settled = true;
      for (const t of timers) clearTimeout(t);
      clearInterval(idleCheck);
      options.signal?.removeEventListener("abort", onAbort);
      resolve({ ...outcome, durationMs: Date.now() - t0 });
    };

    const killGroup = (sig: NodeJS.Signals) => {
      if (child.pid === undefined) return;
      if (options.signalGroup) {
        options.signalGroup(child.pid, sig);
        return;
      }
      try {
        if (process.platform !== "win32") process.kill(-child.pid, sig);
        else child.kill(sig);
      } catch {
        try {
          child.kill(sig);
        } catch {
          /* already gone */
        }
      }
    };

    const stop = (why: NonNullable<ProcessOutcome["stopped"]>) => {
      if (stopped || settled) return;
      stopped = why;
      if (why === "idle") silentMs = Date.now() - lastOutput;
      killGroup("SIGTERM");
      const hard = setTimeout(() => killGroup("SIGKILL"), options.killGraceMs ?? 2_000);
      hard.unref();
      timers.push(hard);
    };

    const onAbort = () => stop("aborted");
    if (options.signal?.aborted) queueMicrotask(onAbort);
    else options.signal?.addEventListener("abort", onAbort, { once: true });

    if (options.timeoutMs !== undefined && options.timeoutMs > 0) timers.push(setTimeout(() => stop("timeout"), options.timeoutMs));

    const idle = options.idleTimeoutMs;
    const idleCheck = setInterval(
      () => {
        if (idle === undefined || idle <= 0) return;
        const limit = options.isBusy?.() ? Math.max(idle, options.busyIdleTimeoutMs ?? idle) : idle;
        if (Date.now() - lastOutput >= limit) stop("idle");
      },
      idle !== undefined && idle > 0 ? Math.max(20, Math.min(1_000, Math.floor(idle / 10))) : 60_000,
    );

    const lineReader = (onLine?: (line: string) => void) => {
      let buf = "";
      return {
        data(chunk: Buffer) {
          lastOutput = Date.now();
          buf += chunk.toString("utf8");
          let nl: number;
          while ((nl = buf.indexOf("\n")) >= 0) {
            const line = buf.slice(0, nl).replace(/\r$/, "");
            buf = buf.slice(nl + 1);
            onLine?.(line);
          }
          const max = options.maxLineBytes;
          while (max !== undefined && buf.length > max) {
            onLine?.(buf.slice(0, max));
            buf = buf.slice(max);
          }
        },
        end() {
          if (buf.length > 0) onLine?.(buf);
          buf = "";
        },
      };
    };
    const out = lineReader(options.onStdoutLine);
    const err = lineReader(options.onStderrLine);
    child.stdout!.on("data", out.data);
    child.stderr!.on("data", err.data);
    child.stdin!.on("error", () => undefined); // EPIPE when the child does not read stdin
    child.stdin!.end(options.stdin ?? "");

    child.on("error", (e) => finish({ code: null, signal: null, spawnError: e }));
    // A grandchild left running in the background may hold stdout open after the agent exited:
    // give the pipes a moment to drain, then end the group and settle on the exit status.
    child.on("exit", (code, signal) => {
      const drain = setTimeout(() => {
        killGroup("SIGKILL");
        out.end();
        err.end();
        finish({ code, signal, ...(stopped ? { stopped } : {}), ...(silentMs !== undefined ? { silentMs } : {}) });
      }, 2_000);
      drain.unref();
      timers.push(drain);
    });
    child.on("close", (code, signal) => {
      out.end();
      err.end();
      finish({ code, signal, ...(stopped ? { stopped } : {}), ...(silentMs !== undefined ? { silentMs } : {}) });
    });
  });
}
