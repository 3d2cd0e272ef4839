// The local GitHub's git processes are started by a small helper process, not by this one.
//
// Starting a process from Node forks the whole caller first; the caller here is the local GitHub —
// often sharing its process with an App, a runner and a test suite — whose hundreds of megabytes make
// each fork cost milliseconds of its event loop (a 100-task run spawned about 2,200 git processes:
// 22 s of the loop). A helper holding only itself forks in a fraction of that, on its own thread of
// execution. Requests and answers travel over the helper's IPC channel; the helper leaves when the
// channel closes, and is started again on the next request when it is gone.
import { spawn, type ChildProcess } from "node:child_process";

export interface GitRun {
  stdout: Buffer;
  stderr: string;
  code: number;
}

interface Request {
  id: number;
  args: string[];
  env: Record<string, string>;
  input?: string | Buffer;
}

type Answer = { id: number; code: number | null; stdout: Uint8Array; stderr: string } | { id: number; error: string };

/** The helper's program: run `git` with the request's arguments, answer its exit code and output. */
const HELPER = `
const { spawn } = require("node:child_process");
process.on("message", (m) => {
  let done = false;
  const answer = (a) => { if (!done) { done = true; process.send({ id: m.id, ...a }); } };
  const child = spawn("git", m.args, { env: { ...process.env, ...m.env } });
  const out = [], err = [];
  child.stdout.on("data", (d) => out.push(d));
  child.stderr.on("data", (d) => err.push(d));
  child.on("error", (e) => answer({ error: e.message }));
  child.on("close", (code) => answer({ code, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString("utf8") }));
  child.stdin.on("error", () => undefined);
  child.stdin.end(m.input);
});
process.on("disconnect", () => process.exit(0));
`;

const pending = new Map<number, { resolve(r: GitRun): void; reject(e: Error): void }>();
let helper: ChildProcess | undefined;
let nextId = 1;

/** Keep this process alive only while an answer is awaited. */
function hold(child: ChildProcess): void {
  const busy = pending.size > 0;
  const channel = child.channel as { ref?(): void; unref?(): void } | undefined | null;
  if (busy) {
    child.ref();
    channel?.ref?.();
  } else {
    child.unref();
    channel?.unref?.();
  }
}

function start(env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(process.execPath, ["-e", HELPER], {
    stdio: ["ignore", "ignore", "inherit", "ipc"],
    serialization: "advanced",
    env: { ...env, NODE_OPTIONS: "" },
  });
  child.on("message", (a: Answer) => {
    const p = pending.get(a.id);
    if (!p) return;
    pending.delete(a.id);
    hold(child);
    if ("error" in a) p.reject(new Error(`git ${a.error}`));
    else
      p.resolve({ stdout: Buffer.from(a.stdout.buffer, a.stdout.byteOffset, a.stdout.byteLength), stderr: a.stderr, code: a.code ?? -1 });
  });
  const gone = (why: string) => {
    if (helper === child) helper = undefined;
    for (const [id, p] of pending) {
      pending.delete(id);
      p.reject(new Error(`the local GitHub's git helper ${why}`));
    }
  };
  child.on("error", (e) => gone(`failed: ${e.message}`));
  child.on("exit", (code, signal) => gone(`exited (${signal ?? code})`));
  return child;
}

/**
 * Run `git args` through the helper, `env` added to the helper's environment (`baseEnv`, given when
 * the helper starts). Resolves with the exit code whatever it is; rejects only when git could not run.
 */
export function spawnGit(
  baseEnv: NodeJS.ProcessEnv,
  args: string[],
  env: Record<string, string>,
  input?: string | Buffer,
): Promise<GitRun> {
  const child = helper ?? (helper = start(baseEnv));
  const request: Request = { id: nextId++, args, env, ...(input !== undefined ? { input } : {}) };
  return new Promise((resolve, reject) => {
    pending.set(request.id, { resolve, reject });
    hold(child);
    child.send(request, (e) => {
      if (!e) return;
      pending.delete(request.id);
      hold(child);
      reject(e);
    });
  });
}
