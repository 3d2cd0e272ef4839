// Remote actions the sim runner provides natively, since it cannot download any.
//
// actions/checkout is reproduced in what Forge depends on: it fetches the ref with the token sent
// as `AUTHORIZATION: basic base64(x-access-token:<token>)` through `http.extraheader`, checks out
// the commit on a local branch of the same name, and (persist-credentials: true, its default)
// leaves that header in the local git config so later steps can `git push`.
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import type { ProcessResult } from "./process.js";

export interface ExecResult extends ProcessResult {
  /** The command's output lines (already logged). */
  lines: string[];
}

export interface BuiltinActionContext {
  /** The step's inputs after `with:` and the action's defaults. */
  inputs: Record<string, string>;
  workspace: string;
  repository: string;
  ref: string;
  sha: string;
  serverUrl: string;
  /** Clone URL of the workflow's repository. */
  gitUrl: string;
  token: string;
  /** Runs a command in the step's environment, logging its output. Non-zero exit codes are returned, not thrown. */
  exec(command: string, args: string[], opts?: { cwd?: string }): Promise<ExecResult>;
  log(line: string): void;
  /** Registers a value to be masked in every later log line. */
  mask(secret: string): void;
}

export interface BuiltinAction {
  /** Inputs and defaults, like an action.yml's `inputs:`. Defaults may use `${{ }}`. */
  inputs: Record<string, { default?: string; required?: boolean }>;
  run(ctx: BuiltinActionContext): Promise<{ outputs?: Record<string, string> } | void>;
}

export class ActionFailedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ActionFailedError";
  }
}

/** `AUTHORIZATION: basic …` as actions/checkout configures it. */
export function checkoutAuthHeader(token: string): string {
  return `AUTHORIZATION: basic ${Buffer.from(`x-access-token:${token}`, "utf8").toString("base64")}`;
}

async function git(ctx: BuiltinActionContext, args: string[], cwd: string): Promise<ExecResult> {
  return ctx.exec("git", args, { cwd });
}

async function mustGit(ctx: BuiltinActionContext, args: string[], cwd: string): Promise<void> {
  const r = await git(ctx, args, cwd);
  if (r.stoppedBy) throw new ActionFailedError(`git ${args[0] === "-c" ? args[2] : args[0]} was stopped (${r.stoppedBy})`);
  if (r.exitCode !== 0) {
    const shown = args.map((a) => (a.startsWith("http.extraheader=") ? "http.extraheader=***" : a));
    throw new ActionFailedError(`The process 'git' failed with exit code ${r.exitCode ?? r.signal}: git ${shown.join(" ")}`);
  }
}

const checkout: BuiltinAction = {
  inputs: {
    repository: { default: "${{ github.repository }}" },
    ref: { default: "" },
    token: { default: "${{ github.token }}" },
    path: { default: "" },
    "fetch-depth": { default: "1" },
    "persist-credentials": { default: "true" },
    clean: { default: "true" },
    "fetch-tags": { default: "false" },
  },
  async run(ctx) {
    const repository = ctx.inputs.repository || ctx.repository;
    const url = repository === ctx.repository ? ctx.gitUrl : `${ctx.serverUrl.replace(/\/$/, "")}/${repository}.git`;
    const target = path.resolve(ctx.workspace, ctx.inputs.path ?? "");
    const rel = path.relative(ctx.workspace, target);
    if (rel.startsWith("..") || path.isAbsolute(rel)) {
      throw new ActionFailedError(`Repository path '${target}' is not under '${ctx.workspace}'`);
    }
    const token = ctx.inputs.token ?? "";
    const header = checkoutAuthHeader(token);
    ctx.mask(token);
    ctx.mask(header.slice("AUTHORIZATION: basic ".length));
    const auth = token ? ["-c", `http.extraheader=${header}`] : [];

    // What to fetch: an explicit `ref` input, else the workflow's own ref and sha.
    let ref = ctx.inputs.ref ?? "";
    let sha = "";
    if (ref === "" && repository === ctx.repository) {
      ref = ctx.ref;
      sha = ctx.sha;
    }
    if (/^[0-9a-f]{40}$/i.test(ref)) {
      sha = ref;
      ref = "";
    }
    let refspec: string;
    let checkoutArgs: (fetched: string) => string[];
    if (ref === "") {
      refspec = sha ? `+${sha}:refs/remotes/origin/forge-sim-sha` : "+HEAD:refs/remotes/origin/HEAD";
      checkoutArgs = (c) => ["checkout", "--force", "--detach", c];
    } else if (ref.startsWith("refs/tags/")) {
      refspec = `+${ref}:${ref}`;
      checkoutArgs = (c) => ["checkout", "--force", "--detach", c];
    } else if (ref.startsWith("refs/heads/") || !ref.startsWith("refs/")) {
      const branch = ref.replace(/^refs\/heads\//, "");
      refspec = `+refs/heads/${branch}:refs/remotes/origin/${branch}`;
      checkoutArgs = (c) => ["checkout", "--force", "-B", branch, c];
    } else {
      refspec = `+${ref}:refs/remotes/origin/${ref.replace(/^refs\//, "")}`;
      checkoutArgs = (c) => ["checkout", "--force", "--detach", c];
    }
    const fetchedRef = refspec.slice(refspec.indexOf(":") + 1);

    await mkdir(target, { recursive: true });
    if (!existsSync(path.join(target, ".git"))) {
      await mustGit(ctx, ["init", "-q", target], ctx.workspace);
      await mustGit(ctx, ["remote", "add", "origin", url], target);
    } else {
      await mustGit(ctx, ["remote", "set-url", "origin", url], target);
      if (ctx.inputs.clean !== "false") await git(ctx, ["clean", "-ffdx"], target);
    }
    const depth = Number(ctx.inputs["fetch-depth"] ?? "1");
    const fetchFlags = [
      "fetch",
      "--no-recurse-submodules",
      "--prune",
      ...(ctx.inputs["fetch-tags"] === "true" ? ["--tags"] : ["--no-tags"]),
    ];
    if (depth > 0) fetchFlags.push(`--depth=${depth}`);
    ctx.log(`Fetching ${ref || sha || "the default branch"} from ${repository}`);
    await mustGit(ctx, [...auth, ...fetchFlags, "origin", refspec], target);

    let commit = fetchedRef;
    if (sha) {
      // The branch may have moved since the run was created: GitHub checks out the run's sha.
      const has = await git(ctx, ["cat-file", "-e", `${sha}^{commit}`], target);
      if (has.exitCode !== 0) await mustGit(ctx, [...auth, ...fetchFlags, "origin", sha], target);
      commit = sha;
    }
    await mustGit(ctx, checkoutArgs(commit), target);

    if (ctx.inputs["persist-credentials"] !== "false" && /^https?:\/\//.test(url) && token) {
      // actions/checkout writes `http.https://github.com/.extraheader`; here the key is the sim's origin.
      const origin = new URL(url).origin;
      await mustGit(ctx, ["config", "--local", `http.${origin}/.extraheader`, header], target);
    }
    const head = await git(ctx, ["rev-parse", "HEAD"], target);
    const headSha = head.lines.find((l) => /^[0-9a-f]{40}$/.test(l.trim()))?.trim() ?? "";
    return { outputs: { ref, commit: headSha } };
  },
};

/** A stand-in for actions/setup-node: the runner's own Node is the only Node there is. */
const setupNode: BuiltinAction = {
  inputs: { "node-version": { default: "" }, cache: { default: "" }, "node-version-file": { default: "" } },
  async run(ctx) {
    const want = ctx.inputs["node-version"] ?? "";
    ctx.log(`Using the runner's Node ${process.version}${want ? ` for node-version '${want}'` : ""}`);
    return { outputs: { "node-version": process.version } };
  },
};

/** Built-in actions by name (without `@ref`). */
export const BUILTIN_ACTIONS: Record<string, BuiltinAction> = {
  "actions/checkout": checkout,
  "actions/setup-node": setupNode,
};
