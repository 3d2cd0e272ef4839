/**
 * The work repository's control files are the runner's (docs/runner.md#the-runners-git). The agent
 * owns the checkout while it works, `.git` included: it can write `.git/config` (filter, textconv and
 * merge drivers, `diff.external`, `core.pager`, `core.editor`, `core.sshCommand`, `include.path`,
 * `includeIf`, `core.worktree`, `extensions.worktreeConfig`), `.git/config.worktree`, `commondir`,
 * `info/attributes`, `info/grafts`, `objects/info/alternates`, and put links where git writes
 * (`COMMIT_EDITMSG`, `MERGE_MSG`). Git reaches a program only through configuration — an attribute
 * (`filter=x`, `diff=x`, `merge=x`), in `.git/info/attributes` or in a tree's `.gitattributes`, names
 * a driver that only config defines — so configuration being the runner's is what keeps every driver
 * from running.
 *
 * At the first git command of the job (before any agent ran) the runner takes its snapshot: where
 * the repository is, and its configuration reduced to an allowlist of keys that name no program
 * (format version, object format, `remote.*.url`/`fetch`…), kept in memory and in a private folder.
 * Before every later git command in the work repository, `guardRepository`:
 * - refuses a `.git` (or common dir) that is no longer a real directory, and takes away write
 *   access of group and others to it (a surviving agent process of another uid cannot swap files in);
 * - writes the runner's configuration back over whatever is there (a new file renamed into place:
 *   no link is followed, no descriptor the agent kept open reaches it);
 * - removes `config.worktree`, `commondir`, `info/attributes`, `info/grafts` and every link directly
 *   in the git dir, `info/` and `objects/info/`;
 * - writes the runner's list of alternates back.
 * The git command then runs with `GIT_DIR` and `GIT_WORK_TREE` set (no discovery: a `.git` file or a
 * parent repository changes nothing), no global or system configuration, `GIT_NO_REPLACE_OBJECTS`
 * (replace refs and grafts are the agent's), and reflogs off (git appends to them through links).
 */
import { randomBytes } from "node:crypto";
import { chmod, lstat, mkdir, readdir, rename, rm, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { readAgentFileSync } from "../../src/agent/agent-files.js";
import { GitError } from "../../src/core/git-error.js";

/** Configuration keys of the checkout's own `.git/config` the runner keeps: none names a program. */
const KEEP_CONFIG =
  /^(core\.(repositoryformatversion|filemode|bare|symlinks|ignorecase|precomposeunicode)|extensions\.(objectformat|refstorage|partialclone)|remote\.[^\n]+\.(url|fetch|promisor|partialclonefilter)|branch\.[^\n]+\.(remote|merge))$/i;

export interface RepoSnapshot {
  /** The work tree's top level. */
  workTree: string;
  gitDir: string;
  commonDir: string;
  /** The runner's `config`, byte for byte. */
  config: string;
  /** The runner's `objects/info/alternates` lines. */
  alternates: string[];
}

/** Runs a git command with the runner's hardened environment, in `cwd`, without the guard. */
export type RawGit = (args: string[], cwd: string) => Promise<{ code: number; stdout: string; stderr: string }>;

/**
 * The runner's snapshot of the work repository, taken before any agent ran. `privateDir` is the
 * runner's own folder (outside the checkout). Undefined when `dir` is not in a repository yet.
 */
export async function snapshotRepository(raw: RawGit, dir: string, privateDir: string): Promise<RepoSnapshot | undefined> {
  const r = await raw(["rev-parse", "--show-toplevel", "--absolute-git-dir", "--git-common-dir"], dir);
  if (r.code !== 0) return undefined;
  const [workTree, gitDir, common] = r.stdout.split("\n").map((l) => l.trim());
  if (!workTree || !gitDir || !common) return undefined;
  const commonDir = path.resolve(dir, common);
  const listed = await raw(["config", "--file", path.join(commonDir, "config"), "--null", "--list"], dir);
  await mkdir(privateDir, { recursive: true, mode: 0o700 });
  const copy = path.join(privateDir, "config");
  await writeFile(copy, "", { mode: 0o600 });
  for (const entry of listed.code === 0 ? listed.stdout.split("\0") : []) {
    const nl = entry.indexOf("\n");
    const key = nl < 0 ? entry : entry.slice(0, nl);
    if (!key || !KEEP_CONFIG.test(key)) continue;
    const set = await raw(["config", "--file", copy, "--add", key, nl < 0 ? "true" : entry.slice(nl + 1)], privateDir);
    if (set.code !== 0)
      throw new GitError(`could not copy ${key} of the work repository's config: ${set.stderr.trim()}`, ["config"], set.code, set.stderr);
  }
  const config = readAgentFileSync(privateDir, copy)?.toString("utf8") ?? "";
  const alternates = (readAgentFileSync(commonDir, path.join(commonDir, "objects/info/alternates"))?.toString("utf8") ?? "")
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  return { workTree, gitDir, commonDir, config, alternates };
}

/** A real directory (not a link), write access of group and others taken away; else the runner refuses to go on. */
async function ownDir(dir: string): Promise<void> {
  const st = await lstat(dir).catch(() => undefined);
  if (!st || st.isSymbolicLink() || !st.isDirectory())
    throw new GitError(`the work repository's ${dir} is no longer a directory (replaced by a link or a file)`, [], null, "");
  if (st.mode & 0o022) await chmod(dir, st.mode & 0o7755).catch(() => undefined);
}

/** A real directory at `dir` (a link or a file there is removed first). */
async function realDir(dir: string): Promise<void> {
  const st = await lstat(dir).catch(() => undefined);
  if (st?.isDirectory()) return;
  if (st) await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
}

/** Every link directly in `dir` removed (git writes files there through whatever link it finds). */
async function dropLinks(dir: string): Promise<void> {
  for (const e of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    if (e.isSymbolicLink()) await unlink(path.join(dir, e.name)).catch(() => undefined);
  }
}

/**
 * Writes `text` at `file` unless it is there already: a new file beside it, renamed into place, so
 * a link at `file` is replaced, not followed.
 */
export async function replaceFile(file: string, text: string): Promise<void> {
  let current: string | undefined;
  try {
    current = readAgentFileSync(path.dirname(file), file)?.toString("utf8");
  } catch {
    current = undefined;
  }
  if (current === text) return;
  const st = await lstat(file).catch(() => undefined);
  if (st?.isDirectory()) await rm(file, { recursive: true, force: true });
  const tmp = `${file}.forge-${randomBytes(6).toString("hex")}`;
  await writeFile(tmp, text, { flag: "wx", mode: 0o644 });
  await rename(tmp, file);
}

/** Before a git command in the work repository: its control files are the runner's again. */
export async function guardRepository(s: RepoSnapshot): Promise<void> {
  const dirs = [...new Set([s.gitDir, s.commonDir])];
  for (const d of dirs) await ownDir(d);
  for (const d of dirs) await dropLinks(d);
  await replaceFile(path.join(s.commonDir, "config"), s.config);
  const gone = [
    ...dirs.map((d) => path.join(d, "config.worktree")),
    path.join(s.commonDir, "info/attributes"),
    path.join(s.commonDir, "info/grafts"),
    ...(s.gitDir === s.commonDir ? [path.join(s.gitDir, "commondir")] : []),
  ];
  for (const f of gone) await rm(f, { recursive: true, force: true });
  await realDir(path.join(s.commonDir, "info"));
  await dropLinks(path.join(s.commonDir, "info"));
  const objectsInfo = path.join(s.commonDir, "objects", "info");
  await realDir(objectsInfo);
  await dropLinks(objectsInfo);
  const alternates = path.join(objectsInfo, "alternates");
  if (s.alternates.length) await replaceFile(alternates, `${s.alternates.join("\n")}\n`);
  else await rm(alternates, { recursive: true, force: true });
}
