// Shared set-up for the agent-layer tests: temporary folders, the fake command agent, the forge CLI
// from source.
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { SpawnOptions } from "../../src/agent/types.js";
import { cleanupTempDirs, tempDir } from "../helpers/temp-dirs.js";

export const FIXTURES = fileURLToPath(new URL("./fixtures/", import.meta.url));
export const FAKE_AGENT = path.join(FIXTURES, "fake-agent.mjs");
export const FAKE_CODEX = path.join(FIXTURES, "fake-codex.mjs");

/** `forge` from source: node --import <tsx> test/agent/fixtures/forge-cli.ts */
export function forgeCliFromSource(): { command: string; args: string[] } {
  return { command: process.execPath, args: ["--import", import.meta.resolve("tsx"), path.join(FIXTURES, "forge-cli.ts")] };
}

export { cleanupTempDirs, tempDir };

export interface FakeWorld {
  dir: string;
  repo: string;
  state: string;
  planFile: string;
  setPlan(plan: Record<string, unknown>): void;
  calls(): Array<Record<string, unknown>>;
  /** Spawn options running the fake agent. */
  options(extra?: Partial<SpawnOptions>): SpawnOptions;
}

export function fakeWorld(plan: Record<string, unknown> = {}, opts: { git?: boolean } = {}): FakeWorld {
  const dir = tempDir();
  const repo = path.join(dir, "repo");
  const state = path.join(dir, "state");
  execFileSync("mkdir", ["-p", repo, state]);
  if (opts.git) {
    execFileSync("git", ["init", "-q", "-b", "main", repo]);
    execFileSync("git", ["-C", repo, "config", "user.email", "t@example.com"]);
    execFileSync("git", ["-C", repo, "config", "user.name", "T"]);
  }
  const planFile = path.join(dir, "plan.json");
  const setPlan = (p: Record<string, unknown>) => writeFileSync(planFile, JSON.stringify(p));
  setPlan(plan);
  return {
    dir,
    repo,
    state,
    planFile,
    setPlan,
    calls: () =>
      readFileSync(path.join(state, "calls.log"), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    options: (extra = {}) => ({
      adapter: "command",
      command: process.execPath,
      args: [FAKE_AGENT],
      prompt: "do the thing",
      cwd: repo,
      sessionDir: path.join(dir, "session"),
      env: {
        PATH: process.env.PATH,
        HOME: dir,
        GITHUB_TOKEN: "ghs_abcdefghijklmnopqrstuvwxyz012345",
        ANTHROPIC_API_KEY: "sk-ant-test-key-123456",
      },
      extraEnv: { FAKE_PLAN: planFile, FAKE_STATE: state },
      forgeCli: false,
      ...extra,
    }),
  };
}
