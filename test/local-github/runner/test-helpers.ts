// Helpers for the runner's tests: temporary folders, a base context, throwaway git repositories.
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync, mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { RunContext } from "../../../src/local-github/runner/executor.js";

export function tempDir(prefix = "forge-runner-test-"): string {
  return mkdtempSync(path.join(tmpdir(), prefix));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

export function baseContext(overrides: Partial<RunContext> = {}): RunContext {
  return {
    repository: "acme/app",
    ref: "refs/heads/main",
    sha: "0123456789abcdef0123456789abcdef01234567",
    serverUrl: "http://127.0.0.1:9",
    apiUrl: "http://127.0.0.1:9/api/v3",
    token: "ghs_testtoken123456",
    runId: 4242,
    runAttempt: 2,
    actor: "octocat",
    secrets: { ANTHROPIC_API_KEY: "sk-ant-secret-value" },
    vars: { MODEL: "sonnet" },
    workflowPath: ".github/workflows/forge-agent.yml",
    ...overrides,
  };
}

const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: "Forge Test",
  GIT_AUTHOR_EMAIL: "forge@example.invalid",
  GIT_COMMITTER_NAME: "Forge Test",
  GIT_COMMITTER_EMAIL: "forge@example.invalid",
  GIT_CONFIG_NOSYSTEM: "1",
};

export function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd, env: GIT_ENV, encoding: "utf8" }).trim();
}

/** A bare repository with `files` committed on `branch`; returns its path and the commit sha. */
export function makeBareRepo(root: string, files: Record<string, string>, branch = "main"): { bare: string; sha: string } {
  const work = path.join(root, "seed");
  mkdirSync(work, { recursive: true });
  git(work, "init", "-q", "-b", branch);
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(work, name)), { recursive: true });
    writeFileSync(path.join(work, name), content);
  }
  git(work, "add", "-A");
  git(work, "commit", "-qm", "seed");
  const sha = git(work, "rev-parse", "HEAD");
  const bare = path.join(root, "repo.git");
  git(root, "clone", "-q", "--bare", work, bare);
  return { bare, sha };
}

/** A workflow_dispatch workflow with one job, `agent`, on ubuntu-latest: `inputs` (YAML lines) and the job's body. */
export const dispatch = (inputs = "", jobBody: string) => `
name: Forge agent
on:
  workflow_dispatch:
    inputs:
${inputs || "      task_id: { required: false, default: t1 }"}
jobs:
  agent:
    runs-on: ubuntu-latest
${jobBody}`;
