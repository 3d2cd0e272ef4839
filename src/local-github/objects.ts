// Object reads and writes without a git process per call.
//
// Reads go through one long-lived `git cat-file --batch` (contents) and one `--batch-check` (type
// and size) per repository; requests are pipelined and answered in order. Blobs and trees are
// written as loose objects by the simulator itself (zlib-deflated `<type> <size>\0<body>`, written
// to a temporary file and renamed into place, as git does), so building a tree costs no process.
// Objects are immutable and git looks loose objects up by file on every miss, so these readers see
// objects written by any process (hash-object, commit-tree, receive-pack) as soon as they exist.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdir, rename, writeFile, access, unlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { deflateSync } from "node:zlib";

export interface ObjectInfo {
  type: string;
  size: number;
}

interface Pending {
  resolve(v: { info: ObjectInfo; body?: Buffer } | undefined): void;
  reject(e: Error): void;
}

const env = { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_TERMINAL_PROMPT: "0", LC_ALL: "C", HOME: tmpdir() };

/** One `git cat-file --batch[-check]` process answering requests in order. */
class BatchReader {
  private child: ChildProcessWithoutNullStreams | undefined;
  private queue: Pending[] = [];
  private buf: Buffer = Buffer.alloc(0);
  /** header of the object whose body is being read */
  private current: { info: ObjectInfo; pending: Pending } | undefined;

  constructor(
    readonly gitDir: string,
    readonly withBody: boolean,
  ) {}

  private start(): ChildProcessWithoutNullStreams {
    const child = spawn("git", ["cat-file", this.withBody ? "--batch" : "--batch-check"], { env: { ...env, GIT_DIR: this.gitDir } });
    child.stdout.on("data", (d: Buffer) => this.onData(d));
    child.stderr.on("data", () => undefined);
    child.stdin.on("error", () => undefined);
    const fail = (why: string) => {
      if (this.child !== child) return;
      this.child = undefined;
      this.buf = Buffer.alloc(0);
      this.current = undefined;
      const q = this.queue.splice(0);
      for (const p of q) p.reject(new Error(`git cat-file in ${this.gitDir} ${why}`));
    };
    child.on("error", (e) => fail(e.message));
    child.on("close", (code) => fail(`exited (${code})`));
    child.unref();
    (child.stdout as unknown as { unref?: () => void }).unref?.();
    (child.stderr as unknown as { unref?: () => void }).unref?.();
    (child.stdin as unknown as { unref?: () => void }).unref?.();
    this.child = child;
    return child;
  }

  read(name: string): Promise<{ info: ObjectInfo; body?: Buffer } | undefined> {
    if (/[\n\r]/.test(name)) return Promise.resolve(undefined);
    const child = this.child ?? this.start();
    return new Promise((resolve, reject) => {
      this.queue.push({ resolve, reject });
      child.stdin.write(`${name}\n`);
    });
  }

  private onData(d: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
    for (;;) {
      if (this.current) {
        const need = this.current.info.size + 1; // body and a newline
        if (this.buf.length < need) return;
        const body = Buffer.from(this.buf.subarray(0, this.current.info.size));
        this.buf = this.buf.subarray(need);
        const { info, pending } = this.current;
        this.current = undefined;
        pending.resolve({ info, body });
        continue;
      }
      const nl = this.buf.indexOf(10);
      if (nl < 0) return;
      const line = this.buf.subarray(0, nl).toString("utf8");
      this.buf = this.buf.subarray(nl + 1);
      const pending = this.queue.shift();
      if (!pending) continue;
      const parts = line.split(" ");
      if (parts.length === 3 && /^[0-9a-f]{40}$/.test(parts[0]!)) {
        const info = { type: parts[1]!, size: Number(parts[2]) };
        if (this.withBody) this.current = { info, pending };
        else pending.resolve({ info });
      } else pending.resolve(undefined); // "<name> missing" / "ambiguous"
    }
  }

  close(): void {
    const c = this.child;
    this.child = undefined;
    if (c) {
      c.stdin.end();
      c.kill();
    }
    for (const p of this.queue.splice(0)) p.reject(new Error("closed"));
  }
}

const readers = new Map<string, { full: BatchReader; check: BatchReader }>();

function readersOf(gitDir: string): { full: BatchReader; check: BatchReader } {
  let r = readers.get(gitDir);
  if (!r) {
    r = { full: new BatchReader(gitDir, true), check: new BatchReader(gitDir, false) };
    readers.set(gitDir, r);
  }
  return r;
}

/** Reads an object (any name cat-file accepts); undefined when absent. One retry if the reader died. */
export async function readObject(gitDir: string, name: string): Promise<{ type: string; body: Buffer } | undefined> {
  for (let attempt = 0; ; attempt++) {
    try {
      const r = await readersOf(gitDir).full.read(name);
      return r ? { type: r.info.type, body: r.body! } : undefined;
    } catch (e) {
      if (attempt > 0) throw e;
    }
  }
}

export async function objectInfo(gitDir: string, name: string): Promise<ObjectInfo | undefined> {
  for (let attempt = 0; ; attempt++) {
    try {
      return (await readersOf(gitDir).check.read(name))?.info;
    } catch (e) {
      if (attempt > 0) throw e;
    }
  }
}

/** Stops the readers of every repository under `root`. */
export function closeReaders(root: string): void {
  for (const [dir, r] of readers) {
    if (!dir.startsWith(root)) continue;
    r.full.close();
    r.check.close();
    readers.delete(dir);
  }
}

/** Writes a loose object unless it exists; returns its id. */
export async function writeObject(gitDir: string, type: "blob" | "tree" | "commit", body: Buffer): Promise<string> {
  const header = Buffer.from(`${type} ${body.length}\0`);
  const sha = createHash("sha1").update(header).update(body).digest("hex");
  const dir = join(gitDir, "objects", sha.slice(0, 2));
  const file = join(dir, sha.slice(2));
  if (await exists(file)) return sha;
  if (await objectInfo(gitDir, sha)) return sha; // packed
  await mkdir(dir, { recursive: true });
  const tmp = join(dir, `tmp_obj_forge_${randomBytes(6).toString("hex")}`);
  await writeFile(tmp, deflateSync(Buffer.concat([header, body])), { mode: 0o444 });
  try {
    await rename(tmp, file);
  } catch (e) {
    await unlink(tmp).catch(() => undefined);
    if (!(await exists(file))) throw e;
  }
  return sha;
}

async function exists(p: string): Promise<boolean> {
  try {
    await access(p);
    return true;
  } catch {
    return false;
  }
}

export interface RawTreeEntry {
  mode: string;
  name: string;
  sha: string;
}

/** Parses a tree object's body. */
export function parseTree(body: Buffer): RawTreeEntry[] {
  const out: RawTreeEntry[] = [];
  let i = 0;
  while (i < body.length) {
    const sp = body.indexOf(32, i);
    const nul = body.indexOf(0, sp);
    const mode = body.subarray(i, sp).toString("latin1");
    const name = body.subarray(sp + 1, nul).toString("utf8");
    const sha = body.subarray(nul + 1, nul + 21).toString("hex");
    out.push({ mode: mode.padStart(6, "0"), name, sha });
    i = nul + 21;
  }
  return out;
}

/** Serializes entries in git's order (a tree sorts as if its name ended in "/"). */
export function serializeTree(entries: RawTreeEntry[]): Buffer {
  const key = (e: RawTreeEntry) => Buffer.from(e.mode === "040000" ? `${e.name}/` : e.name, "utf8");
  const sorted = [...entries].sort((a, b) => Buffer.compare(key(a), key(b)));
  const parts: Buffer[] = [];
  for (const e of sorted) {
    parts.push(Buffer.from(`${e.mode === "040000" ? "40000" : e.mode} ${e.name}\0`, "utf8"), Buffer.from(e.sha, "hex"));
  }
  return Buffer.concat(parts);
}

export function typeOfMode(mode: string): "blob" | "tree" | "commit" {
  return mode === "040000" ? "tree" : mode === "160000" ? "commit" : "blob";
}
