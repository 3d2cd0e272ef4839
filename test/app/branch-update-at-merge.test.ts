/**
 * The merge of a task's PR when GitHub wants its branch up to date, or finds it not mergeable
 * (src/app/effects/merge.ts, docs/executor.md#merging-under-the-repositorys-rules), against a port
 * that answers as GitHub would: the branch is updated once from the verified head; while GitHub has
 * not made the new head nothing merges; a new head that is the integration branch merged into the
 * verified one is taken as the update when its push webhook did not tell (late or lost), any other
 * is not; a conflict or a refused update is a block; a mergeability still computed (null) is read
 * again later, never taken for a conflict.
 */
import { describe, expect, it } from "vitest";
import { runEffect, type EffectContext } from "../../src/app/effects/index.js";
import { decide } from "../../src/core/decide/index.js";
import type { Effect } from "../../src/core/effects.js";
import type { LeafInput } from "../../src/core/inputs.js";
import type { Journal } from "../../src/core/journal.js";
import { BRANCH_UPDATE_POLL_MS, BRANCH_UPDATE_WAIT_MS, type BranchUpdateResult } from "../../src/github/branch-update.js";
import type { GitHubPort, PullMergeResult, PullRequestInfo } from "../../src/github/port.js";
import { finishedReady, NOW, openTaskPull, RECORD, storedRun, testConfig } from "./handlers/fixtures.js";

type Merge = Extract<Effect, { kind: "MergePullRequest" }>;

const UPDATED = "ab".repeat(20);
const BASE_TIP = "cd".repeat(20);
const OUT_OF_DATE = "Head branch is out of date. Review and try the merge again.";

interface Answers {
  head?: string;
  merge?: PullMergeResult;
  update?: BranchUpdateResult;
  mergeable?: boolean | null;
  parents?: string[];
  onBase?: "ahead" | "behind" | "identical" | "diverged";
}

function world(answers: Answers) {
  const config = testConfig({ required_checks: ["ci"] });
  const state = storedRun(
    { a: [] },
    { config, pendingOutbox: true, steps: [[finishedReady(), { kind: "pr.opened", taskId: "a", attempt: 1, number: 7 }]] },
  );
  const calls: string[] = [];
  const pull = (): PullRequestInfo => openTaskPull(7, "a", { headSha: answers.head ?? RECORD });
  const port = {
    async getPullRequestWithFiles() {
      return { ...pull(), files: ["src/a.ts"], changeRequests: [] };
    },
    async getPullRequest() {
      calls.push("get");
      return { ...pull(), mergeable: "mergeable" in answers ? answers.mergeable : true };
    },
    async ciChecks(head: string) {
      calls.push(`checks ${head.slice(0, 2)}`);
      return { pending: false, running: false, missing: [], failing: [] };
    },
    async branchRules() {
      return [];
    },
    async mergePullRequest(_n: number, fields: { sha?: string }) {
      calls.push(`merge ${fields.sha?.slice(0, 2)}`);
      return answers.merge ?? { kind: "merged", sha: "3e".repeat(20) };
    },
    async updatePullRequestBranch(_n: number, expected: string) {
      calls.push(`update ${expected.slice(0, 2)}`);
      return answers.update ?? { kind: "accepted" };
    },
    async commit(sha: string) {
      calls.push(`commit ${sha.slice(0, 2)}`);
      return { sha, message: "Merge branch", parents: answers.parents ?? [RECORD, BASE_TIP] };
    },
    async compareCommits(base: string, head: string) {
      calls.push(`compare ${base.slice(0, 2)} ${head}`);
      return answers.onBase ?? "ahead";
    },
  } as unknown as GitHubPort;
  const ctx = (journal: Journal, now = NOW): EffectContext => ({
    port,
    journal,
    config,
    facts: state.facts,
    events: [],
    replay: false,
    now,
    conflicts: new Map(),
  });
  const merge = (journal: Journal) => journal.outbox.find((e): e is Merge => e.kind === "MergePullRequest")!;
  const apply = (journal: Journal, inputs: LeafInput[], now = NOW) => inputs.reduce((j, i) => decide(j, i, now, config).journal, journal);
  return { journal: state.journal, ctx, merge, apply, calls };
}

describe("a merge refused until the branch is up to date", () => {
  it("updates the branch from the verified head, waits for the new head, then merges it once its checks are green", async () => {
    const w = world({ merge: { kind: "not_mergeable", message: OUT_OF_DATE } });
    const first = await runEffect(w.merge(w.journal), w.ctx(w.journal));
    expect(first).toMatchObject({ kind: "later", retryInMs: BRANCH_UPDATE_POLL_MS });
    expect(first.inputs).toEqual([{ kind: "branch.update_requested", taskId: "a", attempt: 1, from: RECORD }]);
    expect(w.calls).toEqual([`checks ${RECORD.slice(0, 2)}`, `merge ${RECORD.slice(0, 2)}`, "get", `update ${RECORD.slice(0, 2)}`]);
    const asked = w.apply(w.journal, first.inputs!);
    // GitHub has not moved the head yet: no merge, no second update.
    w.calls.length = 0;
    const waiting = await runEffect(w.merge(asked), w.ctx(asked, NOW + 1000));
    expect(waiting).toMatchObject({ kind: "later", reason: expect.stringMatching(/waiting for GitHub to update/) });
    expect(w.calls).toEqual([]);
    // Its push webhook brought the new head: the merge names it, after its required checks.
    const moved = w.apply(asked, [{ kind: "branch.updated", taskId: "a", attempt: 1, from: RECORD, head: UPDATED }]);
    const w2 = world({ head: UPDATED });
    const done = await runEffect(w2.merge(moved), w2.ctx(moved));
    expect(done.kind).toBe("done");
    expect(w2.calls).toEqual([`checks ${UPDATED.slice(0, 2)}`, `merge ${UPDATED.slice(0, 2)}`]);
  });

  it("asks again when GitHub's new head has not come after BRANCH_UPDATE_WAIT_MS", async () => {
    const w = world({ merge: { kind: "not_mergeable", message: OUT_OF_DATE } });
    const first = await runEffect(w.merge(w.journal), w.ctx(w.journal));
    const asked = w.apply(w.journal, first.inputs!);
    w.calls.length = 0;
    const again = await runEffect(w.merge(asked), w.ctx(asked, NOW + BRANCH_UPDATE_WAIT_MS));
    expect(again.inputs).toEqual([{ kind: "branch.update_requested", taskId: "a", attempt: 1, from: RECORD }]);
    expect(w.calls).toContain(`update ${RECORD.slice(0, 2)}`);
  });

  it("a new head read back while it waits is the update only when it is the integration branch merged into the verified head", async () => {
    const base = world({ merge: { kind: "not_mergeable", message: OUT_OF_DATE } });
    const first = await runEffect(base.merge(base.journal), base.ctx(base.journal));
    const asked = base.apply(base.journal, first.inputs!);
    // The integration branch merged in (its push webhook lost): taken, without merging yet.
    const ours = world({ head: UPDATED });
    const taken = await runEffect(ours.merge(asked), ours.ctx(asked));
    expect(taken.inputs).toEqual([{ kind: "branch.updated", taskId: "a", attempt: 1, from: RECORD, head: UPDATED }]);
    expect(ours.calls).toEqual([`commit ${UPDATED.slice(0, 2)}`, `compare ${BASE_TIP.slice(0, 2)} ${asked.integrationBranch}`]);
    // A commit on top of the verified head that is no such merge — or whose other parent is not on the integration branch — is not.
    for (const answers of [
      { head: UPDATED, parents: [RECORD], merge: { kind: "head_moved" } as const },
      { head: UPDATED, onBase: "diverged" as const, merge: { kind: "head_moved" } as const },
    ]) {
      const other = world(answers);
      const out = await runEffect(other.merge(asked), other.ctx(asked));
      expect(out.inputs ?? []).toEqual([]);
      expect(out).toMatchObject({ kind: "failed", error: expect.stringMatching(/moved after it was verified/) });
      expect(other.calls).toContain(`merge ${RECORD.slice(0, 2)}`);
    }
  });

  it("an update that conflicts, or that GitHub refuses, is said for a person (merge.blocked)", async () => {
    const conflict = world({
      merge: { kind: "not_mergeable", message: OUT_OF_DATE },
      update: { kind: "conflict", message: "merge conflict between base and head" },
    });
    const c = await runEffect(conflict.merge(conflict.journal), conflict.ctx(conflict.journal));
    expect(c.inputs).toEqual([
      {
        kind: "merge.blocked",
        taskId: "a",
        attempt: 1,
        reason: expect.stringMatching(/conflicts with `.*`.*merge conflict between base and head.*\/forge fix a/),
      },
    ]);
    const refused = world({
      merge: { kind: "not_mergeable", message: OUT_OF_DATE },
      update: { kind: "refused", message: "Resource not accessible by integration" },
    });
    const r = await runEffect(refused.merge(refused.journal), refused.ctx(refused.journal));
    expect(r.inputs?.[0]).toMatchObject({
      kind: "merge.blocked",
      reason: expect.stringMatching(/refused to update .*Resource not accessible/),
    });
  });
});

describe("a merge GitHub finds not mergeable", () => {
  const notMergeable: PullMergeResult = { kind: "not_mergeable", message: "Pull Request is not mergeable" };

  it("while GitHub still computes it (null) it is read again later; a computed false is a conflict; true is tried again", async () => {
    const computing = world({ merge: notMergeable, mergeable: null });
    const out = await runEffect(computing.merge(computing.journal), computing.ctx(computing.journal));
    expect(out).toMatchObject({ kind: "later", retryInMs: BRANCH_UPDATE_POLL_MS, reason: expect.stringMatching(/still computing/) });
    expect(out.inputs ?? []).toEqual([]);
    const conflicting = world({ merge: notMergeable, mergeable: false });
    const c = await runEffect(conflicting.merge(conflicting.journal), conflicting.ctx(conflicting.journal));
    expect(c.inputs?.[0]).toMatchObject({ kind: "merge.blocked", reason: expect.stringMatching(/conflicts with/) });
    const clean = world({ merge: notMergeable, mergeable: true });
    const t = await runEffect(clean.merge(clean.journal), clean.ctx(clean.journal));
    expect(t).toMatchObject({ kind: "later", reason: "Pull Request is not mergeable" });
    expect(t.inputs ?? []).toEqual([]);
  });
});
