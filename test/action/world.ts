/**
 * A throwaway "GitHub" for the job pipeline: a real bare repository (file://) holding a plan, an
 * integration branch, the run's state branch with its journal and the task branch; a workspace
 * cloned from it the way actions/checkout does (shallow, no credentials); and an in-memory
 * JobGitHub whose file reads come from the bare repository and whose pull requests are recorded.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { startRun } from "../../src/core/decide/index.js";
import type { Journal } from "../../src/core/journal.js";
import { stateBranch } from "../../src/core/layout.js";
import { forgeConfigSchema, type ForgeConfig } from "../../src/core/schemas/config.js";
import { Git, type GitOptions } from "../../action/src/git.js";
import { NoCommitsError, type JobGitHub, type PullRef } from "../../action/src/github.js";

export const RUN = "r1";
export const PLAN = "p1";
export const INTEGRATION = `forge/${RUN}/_integration`;
export const SCRIPTED_AGENT = path.resolve("src/fake-agents/bin/forge-scripted-agent.mjs");

const gitEnv = {
  ...process.env,
  GIT_AUTHOR_NAME: "Test",
  GIT_AUTHOR_EMAIL: "t@example.invalid",
  GIT_COMMITTER_NAME: "Test",
  GIT_COMMITTER_EMAIL: "t@example.invalid",
  GIT_CONFIG_NOSYSTEM: "1",
  LC_ALL: "C",
};

export function sh(cwd: string, args: string[], input?: string): string {
  return execFileSync("git", args, { cwd, env: gitEnv, input, encoding: "utf8", stdio: ["pipe", "pipe", "pipe"] }).trim();
}

export interface TaskSpec {
  id: string;
  title?: string;
  type?: "1" | "2" | "3" | "refinery";
  dependencies?: string[];
  /** Markdown after the frontmatter (Description/Context/Instructions and directives). */
  body?: string;
  spec?: string;
}

export function taskFile(t: TaskSpec): string {
  const fm = [
    "---",
    `id: ${t.id}`,
    `title: ${JSON.stringify(t.title ?? `Task ${t.id}`)}`,
    `type: ${t.type ?? "1"}`,
    `dependencies: [${(t.dependencies ?? []).join(", ")}]`,
    "acceptance_criteria:",
    "  - it works",
    "estimated_complexity: small",
    ...(t.spec ? [`spec: ${t.spec}`] : []),
    "---",
  ].join("\n");
  return `${fm}\n${t.body ?? "## Description\n\nDo it.\n\n## Context\n\nNone.\n\n## Instructions\n\nWrite src/out.txt.\n"}`;
}

export interface World {
  dir: string;
  origin: string;
  originUrl: string;
  workspace: string;
  temp: string;
  planCommit: string;
  journal: Journal;
  github: FakeGitHub;
  git: Git;
  branch: string;
  /** Writes a new journal on the state branch. */
  writeJournal(j: Journal): void;
  /** A file on a branch of the bare repository. */
  show(ref: string, file: string): string | undefined;
  cleanup(): void;
}

export interface WorldOptions {
  tasks?: TaskSpec[];
  /** The task the job runs (default: the first). */
  taskId?: string;
  files?: Record<string, string>;
  /** Edit the journal before it is written. */
  journal?: (j: Journal) => void;
  /**
   * An empty bare repository to use as the origin (the local GitHub's, so the job's git can reach it
   * over HTTP), and what the job's git is given besides its work tree (its remote, token, clock).
   */
  origin?: string;
  git?: Omit<GitOptions, "dir" | "identity">;
}

export function makeWorld(options: WorldOptions = {}): World {
  const dir = mkdtempSync(path.join(tmpdir(), "forge-action-"));
  const origin = options.origin ?? path.join(dir, "origin.git");
  const originUrl = `file://${origin}`;
  sh(dir, ["init", "--bare", "--quiet", "--initial-branch=main", origin]);
  const seed = path.join(dir, "seed");
  sh(dir, ["init", "--quiet", "--initial-branch=main", seed]);
  const tasks = options.tasks ?? [{ id: "t1" }];
  const files: Record<string, string> = {
    "README.md": "# demo\n",
    "AGENTS.md": "Use two spaces.\n",
    ".github/workflows/ci.yml": "name: ci\non: push\njobs: {}\n",
    [`.forge/plans/${PLAN}/plan.md`]: "# Plan\n\nBuild the demo.\n",
    [`.forge/plans/${PLAN}/specs/spec.md`]: "# Spec\n\nOutputs are text.\n",
    ...Object.fromEntries(tasks.map((t) => [`.forge/plans/${PLAN}/tasks/${t.id}.md`, taskFile(t)])),
    ...options.files,
  };
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(seed, rel)), { recursive: true });
    writeFileSync(path.join(seed, rel), text);
  }
  sh(seed, ["add", "-A"]);
  sh(seed, ["commit", "--quiet", "-m", "plan"]);
  const planCommit = sh(seed, ["rev-parse", "HEAD"]);
  sh(seed, ["remote", "add", "origin", originUrl]);
  sh(seed, ["push", "--quiet", "origin", "main", `main:refs/heads/${INTEGRATION}`]);

  const config = forgeConfigSchema.parse({});
  const decision = startRun(
    {
      runId: RUN,
      planId: PLAN,
      planCommit,
      dagHash: "0".repeat(64),
      nodes: tasks.map((t) => ({
        id: t.id,
        kind: t.type === "refinery" ? "refinery" : "task",
        agentType: t.type ?? "1",
        title: t.title ?? `Task ${t.id}`,
        dependencies: t.dependencies ?? [],
      })),
      integrationBranch: INTEGRATION,
      baseBranch: "main",
    },
    Date.parse("2026-11-22T08:00:00Z"),
    config,
  );
  const journal = decision.journal;
  options.journal?.(journal);
  const taskId = options.taskId ?? tasks[0]!.id;
  const state = journal.tasks.find((t) => t.id === taskId)!;
  const branch = state.attempt?.branch ?? `forge/${RUN}/${taskId}/${state.attempts || 1}`;
  // The App's PrepareBranch: the task branch cut from the integration head.
  sh(seed, ["push", "--quiet", "origin", `main:refs/heads/${branch}`]);

  const writeJournal = (j: Journal) => {
    const blob = sh(seed, ["hash-object", "-w", "--stdin"], `${JSON.stringify(j, null, 2)}\n`);
    const tree = sh(seed, ["mktree"], `100644 blob ${blob}\tjournal.json\n`);
    const parent = (() => {
      try {
        return sh(origin, ["rev-parse", "--verify", "--quiet", `refs/heads/${stateBranch(RUN)}`]);
      } catch {
        return "";
      }
    })();
    const commit = sh(seed, ["commit-tree", tree, ...(parent ? ["-p", parent] : []), "-m", "journal"]);
    sh(seed, ["push", "--quiet", "--force", "origin", `${commit}:refs/heads/${stateBranch(RUN)}`]);
  };
  writeJournal(journal);

  // actions/checkout: a shallow clone of the dispatched ref, without credentials.
  const workspace = path.join(dir, "work");
  sh(dir, ["clone", "--quiet", "--depth=1", `--branch=${branch}`, originUrl, workspace]);
  const temp = path.join(dir, "temp");
  mkdirSync(temp);
  const show = (ref: string, file: string) => {
    try {
      return execFileSync("git", ["show", `${ref}:${file}`], {
        cwd: origin,
        env: gitEnv,
        encoding: "utf8",
        stdio: ["pipe", "pipe", "pipe"],
      });
    } catch {
      return undefined;
    }
  };
  const github = new FakeGitHub(origin, show);
  const git = new Git({
    dir: workspace,
    remote: originUrl,
    // Its private folder in the world's own (a test may empty `temp`, as a new runner's, under the same Git).
    tempDir: dir,
    ...options.git,
    identity: { name: "github-actions[bot]", email: "41898282+github-actions[bot]@users.noreply.github.com" },
  });
  return {
    dir,
    origin,
    originUrl,
    workspace,
    temp,
    planCommit,
    journal,
    github,
    git,
    branch,
    writeJournal,
    show,
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export interface FakePull extends PullRef {
  head: string;
  base: string;
  title: string;
  body: string;
  /** Bodies in the order they were written. */
  bodies: string[];
  headShaAtOpen: string;
  labels: string[];
}

export class FakeGitHub implements JobGitHub {
  pulls: FakePull[] = [];
  calls: string[] = [];
  /** Make the next N readiness calls fail (GraphQL missing, as on the local GitHub). */
  failReady = false;
  /** createPull calls that fail before one succeeds (a push or a call lost while the agent works). */
  failCreates = 0;
  /** Every createPull refused with this message (GitHub Actions may not create pull requests in the repository). */
  refuseCreates: string | undefined;
  constructor(
    private readonly origin: string,
    private readonly showFile: (ref: string, file: string) => string | undefined,
  ) {}

  async readFile(file: string, ref: string) {
    this.calls.push(`readFile ${ref} ${file}`);
    // No ref: the default branch, as GitHub answers.
    return this.showFile(ref || "HEAD", file);
  }
  async findOpenPull(head: string, base: string) {
    this.calls.push(`findOpenPull ${head}`);
    return this.pulls.find((p) => p.head === head && p.base === base);
  }
  async createPull(p: { head: string; base: string; title: string; body: string; draft: boolean }) {
    this.calls.push(`createPull ${p.head}`);
    if (this.refuseCreates) throw new Error(this.refuseCreates);
    if (this.failCreates > 0) {
      this.failCreates--;
      throw new Error("Server Error");
    }
    const head = sh(this.origin, ["rev-parse", `refs/heads/${p.head}`]);
    const base = sh(this.origin, ["rev-parse", `refs/heads/${p.base}`]);
    let ancestor = true;
    try {
      sh(this.origin, ["merge-base", "--is-ancestor", head, base]);
    } catch {
      ancestor = false;
    }
    if (ancestor) throw new NoCommitsError(`Validation Failed: No commits between ${p.base} and ${p.head}`);
    const pr: FakePull = {
      number: this.pulls.length + 1,
      nodeId: `PR_${this.pulls.length + 1}`,
      url: `https://github.example/pull/${this.pulls.length + 1}`,
      draft: p.draft,
      head: p.head,
      base: p.base,
      title: p.title,
      body: p.body,
      bodies: [p.body],
      headShaAtOpen: head,
      labels: [],
    };
    this.pulls.push(pr);
    return { ...pr };
  }
  async updatePull(number: number, p: { title?: string; body?: string }) {
    this.calls.push(`updatePull ${number}`);
    const pr = this.pulls.find((x) => x.number === number)!;
    if (p.title !== undefined) pr.title = p.title;
    if (p.body !== undefined) {
      pr.body = p.body;
      pr.bodies.push(p.body);
    }
  }
  async addLabels(number: number, labels: string[]) {
    this.calls.push(`addLabels ${number} ${labels.join(",")}`);
    const pr = this.pulls.find((x) => x.number === number)!;
    pr.labels = [...new Set([...pr.labels, ...labels])];
  }
  async markReadyForReview(pull: PullRef) {
    this.calls.push(`markReady ${pull.number}`);
    if (this.failReady) throw new Error("GraphQL is not available");
    this.pulls.find((x) => x.number === pull.number)!.draft = false;
  }

  /** Check runs the job wrote (its live check run), when `withChecks` gave it the permission. */
  checkRuns: {
    id: number;
    name: string;
    headSha: string;
    outputs: { title: string; summary: string; conclusion?: string; at: number }[];
  }[] = [];
  createCheckRun?: JobGitHub["createCheckRun"];
  updateCheckRun?: JobGitHub["updateCheckRun"];
  /** The job's token may write check runs (`checks: write`); `refuse` answers 403 as GitHub does without it. */
  withChecks(refuse = false): this {
    this.createCheckRun = async (c) => {
      this.calls.push(`createCheckRun ${c.name}`);
      if (refuse) throw new Error("Resource not accessible by integration (403)");
      const run = {
        id: this.checkRuns.length + 1,
        name: c.name,
        headSha: c.headSha,
        outputs: [{ title: c.title, summary: c.summary, at: Date.now() }],
      };
      this.checkRuns.push(run);
      return run.id;
    };
    this.updateCheckRun = async (id, c) => {
      this.calls.push(`updateCheckRun ${id}`);
      this.checkRuns[id - 1]!.outputs.push({ ...c, at: Date.now() });
    };
    return this;
  }
}

/** A config with short liveness intervals for tests. */
/**
 * The config of the action's tests. The task sentinel is off here: these tests' agents are shell
 * scripts written for the stages each test is about, and no sentinel of theirs could grade. The
 * sentinel's own job test turns it on with the config's default (stage-pushes.test.ts).
 */
export function testConfig(overrides: Record<string, unknown> = {}): ForgeConfig {
  return forgeConfigSchema.parse({
    heartbeat_interval_seconds: 0.2,
    stale_threshold_seconds: 0.4,
    sentinel: { enabled: false },
    ...overrides,
  });
}

/** A command agent written as a shell script in the world's folder. */
export function scriptAgent(world: World, name: string, script: string): string {
  const file = path.join(world.dir, `${name}.sh`);
  writeFileSync(file, `#!/bin/sh\nset -e\n${script}\n`, { mode: 0o755 });
  return file;
}

/** A walkthrough the agent would write (the runner fills the measured facts). */
export function agentWalkthrough(
  extra: Record<string, unknown> = {},
  body = "## Summary\n\nDone.\n\n## Approach\n\nDirect.\n\n## Issues Encountered\n\nNone.\n\n## Testing\n\nRan it.\n",
): string {
  const fm: Record<string, unknown> = {
    status: "completed",
    confidence: 0.9,
    files_changed: [{ path: "src/out.txt", reason: "the output" }],
    tests: [{ name: "out.exists", result: "pass" }],
    risks: ["none really"],
    followups: ["fix the flaky bug later"],
    ...extra,
  };
  const yaml = Object.entries(fm)
    .map(([k, v]) => `${k}: ${JSON.stringify(v)}`)
    .join("\n");
  return `---\n${yaml}\n---\n\n${body}`;
}

/** The built action (action.yml and action/dist) as files vendored into a repository at `.github/actions/forge`. */
export function vendoredActionFiles(): Record<string, string> {
  const out: Record<string, string> = { ".github/actions/forge/action.yml": readFileSync("action/action.yml", "utf8") };
  const walk = (rel: string) => {
    for (const e of readdirSync(path.join("action/dist", rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(r);
      else out[`.github/actions/forge/dist/${r}`] = readFileSync(path.join("action/dist", r), "utf8");
    }
  };
  walk("");
  return out;
}
