// What the stage tests share: a task, the options of a stage sequence running the fake command
// agent in a fake world, and git in its repository.
import { execFileSync } from "node:child_process";
import path from "node:path";
import type { RunStagesOptions } from "../../src/agent/stages/index.js";
import { FAKE_AGENT, type FakeWorld } from "./helpers.js";

export const task = "---\nid: t1\ntitle: T\n---\n## Description\nDo T.";

export function options(w: FakeWorld, extra: Partial<RunStagesOptions> = {}): RunStagesOptions {
  return {
    agentType: "2",
    taskContext: { runId: "r1", taskId: "t1", attempt: 1, task },
    workdir: w.repo,
    sessionDir: path.join(w.dir, "session"),
    spawn: {
      adapter: "command",
      command: process.execPath,
      args: [FAKE_AGENT],
      env: { PATH: process.env.PATH },
      extraEnv: { FAKE_PLAN: w.planFile, FAKE_STATE: w.state },
      forgeCli: false,
    },
    ...extra,
  };
}

export const git = (cwd: string, ...args: string[]) => execFileSync("git", ["-C", cwd, ...args], { encoding: "utf8" }).trim();
