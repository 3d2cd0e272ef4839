/**
 * Attack: the App merges by PR number. A number recorded for a task — from a webhook, or from a
 * journal — could name a PR that is not the task's: one from the task's branch into main (anyone
 * with the job's token can open it), one from a fork, one from another branch. The App now reads
 * the PR just before merging and merges only the task's own: head the attempt's branch in this
 * repository, base the run's integration branch.
 */
import { describe, expect, it } from "vitest";
import { runEffect, type EffectContext } from "../../src/app/effects/index.js";
import type { Effect } from "../../src/core/effects.js";
import type { GitHubPort, PullRequestInfo } from "../../src/github/port.js";
import { NOW, openTaskPull, RECORD, RUN_ID, storedRun, WORK } from "../app/handlers/fixtures.js";

const state = storedRun({ a: [] });
const branch = `forge/${RUN_ID}/a/1`;
const merge: Effect = { key: "merge:a:1", kind: "MergePullRequest", taskId: "a", attempt: 1, branch, prNumber: 7 };

function world(pr: Partial<PullRequestInfo>) {
  const merged: number[] = [];
  const port = {
    async getPullRequest(number: number): Promise<PullRequestInfo> {
      return openTaskPull(number, "a", pr);
    },
    async listPullRequestFiles() {
      return ["src/a.ts"];
    },
    async getPullRequestWithFiles(number: number) {
      return { ...(await port.getPullRequest(number)), files: await port.listPullRequestFiles(number), changeRequests: [] };
    },
    async mergePullRequest(number: number) {
      merged.push(number);
      return { kind: "merged", sha: "3e".repeat(20) };
    },
  } as unknown as GitHubPort;
  const journal = structuredClone(state.journal);
  Object.assign(journal.tasks[0]!, { status: "MERGE_READY", pushedSha: WORK, recordSha: RECORD, branch, prNumber: 7 });
  const ctx: EffectContext = {
    port,
    journal,
    config: state.config,
    facts: state.facts,
    events: [],
    replay: false,
    now: NOW,
    conflicts: new Map(),
  };
  return { ctx, merged };
}

describe("the App merges only a task's own pull request", () => {
  it.each([
    ["a PR from the task's branch into main", { baseRef: "main" }],
    ["a PR from a fork's branch of the same name", { fromFork: true }],
    ["a PR from another branch", { headRef: "evil" }],
  ])("refused: %s — nothing is merged, and the reason is said", async (_what, pr) => {
    const { ctx, merged } = world(pr);
    const out = await runEffect(merge, ctx);
    expect(out.kind).toBe("failed");
    expect(out.kind === "failed" && out.error).toMatch(/Forge merges only a task's own pull request/);
    expect(merged).toEqual([]);
  });

  it("the task's own PR is merged", async () => {
    const { ctx, merged } = world({});
    const out = await runEffect(merge, ctx);
    expect(out).toMatchObject({ kind: "done", result: { prNumber: 7 } });
    expect(merged).toEqual([7]);
  });
});
