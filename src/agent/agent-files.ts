/**
 * Reading a file the agent wrote, as the runner (docs/runner.md#files-the-agent-wrote). The agent
 * owns its folders (the session folder, the checkout) and can put a link where the runner expects a
 * report — its question, walkthrough, Change Request, answers, spend file — pointing at a file only
 * the runner may read (`/proc/self/environ` holds the job token; a key file). Read through, that
 * file would be committed in `result.json` and posted on the pull request.
 *
 * So every such read goes through `readAgentFile(root, file)`: the file must lie inside `root`
 * (the folder the runner handed the agent), no component below `root` may be a link, the last one
 * is opened with `O_NOFOLLOW` (and `O_NONBLOCK`: a FIFO never blocks the runner), what was opened
 * must be a regular file, and — on Linux — the opened descriptor's own path (`/proc/self/fd/<n>`)
 * must still lie inside `root`, so a directory swapped for a link between the checks and the open
 * is caught too. A missing file is `undefined`; a refused one throws `AgentFileRefusedError`.
 */
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readlinkSync,
  readSync,
  realpathSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import path from "node:path";

/** A file the runner would not read: a link, outside its folder, not a regular file, or too large. */
export class AgentFileRefusedError extends Error {
  constructor(
    /** The path as the runner asked for it. */
    readonly file: string,
    readonly reason: string,
  ) {
    super(`refused to read ${file}: ${reason}`);
    this.name = "AgentFileRefusedError";
  }
}

export interface AgentFileOptions {
  /** Larger files are refused (default 64 MB). */
  maxBytes?: number;
}

const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | (constants.O_NOCTTY ?? 0);

function code(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

/** The file's path relative to `root`; refused when it leaves `root`. */
function inside(root: string, file: string): string {
  const rel = path.relative(path.resolve(root), path.resolve(root, file));
  if (rel === "" || rel === ".." || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel))
    throw new AgentFileRefusedError(file, `it is not inside ${root}`);
  return rel;
}

/** Every directory between `root` and the file, checked without following links; false when one is missing. */
function walkDirs(root: string, rel: string, file: string): boolean {
  let dir = path.resolve(root);
  for (const part of rel.split(path.sep).slice(0, -1)) {
    dir = path.join(dir, part);
    let st;
    try {
      st = lstatSync(dir);
    } catch (err) {
      if (code(err) === "ENOENT") return false;
      throw err;
    }
    if (st.isSymbolicLink()) throw new AgentFileRefusedError(file, `${path.relative(root, dir)} is a symbolic link`);
    if (!st.isDirectory()) return false;
  }
  return true;
}

/** Where the descriptor really is (Linux); undefined where the system does not say. */
function openedPath(fd: number): string | undefined {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return undefined;
  }
}

/** The bytes of an agent-written file inside `root`, never through a link; undefined when it does not exist. */
export function readAgentFileSync(root: string, file: string, opts: AgentFileOptions = {}): Buffer | undefined {
  const rel = inside(root, file);
  let rootReal: string;
  try {
    if (lstatSync(root).isSymbolicLink()) throw new AgentFileRefusedError(file, `${root} is a symbolic link`);
    rootReal = realpathSync(root);
  } catch (err) {
    if (code(err) === "ENOENT") return undefined;
    throw err;
  }
  if (!walkDirs(root, rel, file)) return undefined;
  let fd: number;
  try {
    fd = openSync(path.join(path.resolve(root), rel), OPEN_FLAGS);
  } catch (err) {
    const c = code(err);
    if (c === "ENOENT" || c === "ENOTDIR") return undefined;
    if (c === "ELOOP" || c === "EMLINK") throw new AgentFileRefusedError(file, "it is a symbolic link");
    throw err;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new AgentFileRefusedError(file, "it is not a regular file");
    const real = openedPath(fd);
    if (real !== undefined && real !== path.join(rootReal, rel))
      throw new AgentFileRefusedError(file, `it resolves to ${real}, outside ${root}`);
    const max = opts.maxBytes ?? DEFAULT_MAX_BYTES;
    if (st.size > max) throw new AgentFileRefusedError(file, `it is larger than ${max} bytes`);
    const buf = Buffer.alloc(st.size);
    let off = 0;
    while (off < buf.length) {
      const n = readSync(fd, buf, off, buf.length - off, off);
      if (n === 0) break;
      off += n;
    }
    return buf.subarray(0, off);
  } finally {
    closeSync(fd);
  }
}

/**
 * Refuses a folder the runner is about to write into when a component of it below `root` is a link
 * (the runner would write wherever the agent pointed it).
 */
export function assertNoLinks(root: string, dir: string): void {
  const rel = inside(root, path.join(dir, "x"));
  walkDirs(root, rel, dir);
}

/** Every link under `dir` (relative paths, `/`-separated), found without following one. */
export function findLinks(dir: string, prefix = ""): string[] {
  const out: string[] = [];
  let entries;
  try {
    entries = readdirSync(path.join(dir, prefix), { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isSymbolicLink()) out.push(rel);
    else if (e.isDirectory()) out.push(...findLinks(dir, rel));
  }
  return out;
}

/**
 * Writes a file of the runner's into a folder the agent had (its session folder): the folders on the
 * way are created where missing and refused where they are links, a link at the file itself is
 * removed, and the file is opened with `O_NOFOLLOW` — the runner's text never lands where a link of
 * the agent's points (a file of the runner's, `$GITHUB_ENV`).
 */
export async function writeInAgentFolder(root: string, file: string, data: string | Buffer): Promise<void> {
  const rel = inside(root, file);
  let dir = path.resolve(root);
  for (const part of rel.split(path.sep).slice(0, -1)) {
    dir = path.join(dir, part);
    const st = lstatSync(dir, { throwIfNoEntry: false });
    if (!st) mkdirSync(dir);
    else if (st.isSymbolicLink() || !st.isDirectory()) throw new AgentFileRefusedError(file, `${path.relative(root, dir)} is not a folder`);
  }
  const target = path.join(path.resolve(root), rel);
  if (lstatSync(target, { throwIfNoEntry: false })?.isSymbolicLink()) unlinkSync(target);
  const fd = openSync(target, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o644);
  try {
    const buf = typeof data === "string" ? Buffer.from(data, "utf8") : data;
    for (let off = 0; off < buf.length;) off += writeSync(fd, buf, off, buf.length - off);
  } finally {
    closeSync(fd);
  }
}

/** `readAgentFileSync`, for async callers. */
export async function readAgentFile(root: string, file: string, opts: AgentFileOptions = {}): Promise<Buffer | undefined> {
  return readAgentFileSync(root, file, opts);
}

/**
 * An agent-written text file, or undefined when it is missing or unreadable — or refused, which
 * `warn` is told (the runner goes on as if the agent had not written it).
 */
export async function readAgentText(
  root: string,
  file: string,
  warn?: (message: string) => void,
  opts: AgentFileOptions = {},
): Promise<string | undefined> {
  try {
    return (await readAgentFile(root, file, opts))?.toString("utf8");
  } catch (err) {
    // Other errors (unreadable, a directory's races) read as absent, as a plain read's did.
    if (err instanceof AgentFileRefusedError) warn?.(`${err.message}; treated as absent`);
    return undefined;
  }
}
