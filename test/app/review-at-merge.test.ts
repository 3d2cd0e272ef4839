/**
 * A request for changes that GitHub has and the journal has not (its webhook still on the way, or
 * lost) when the App comes to merge: the merge reads the PR's requests for changes in the same call
 * as its files, and a writer's request on the head that would merge holds the merge back and goes
 * into the journal with the outcome — the revision it starts takes the merge out of the outbox. The
 * review's own webhook, arriving after, starts nothing twice; a review the revision limit met is
 * seen all the same and holds nothing back later.
 */
import { describe, expect, it } from "vitest";
import { runEffect, type EffectContext } from "../../src/app/effects/index.js";
import { decide } from "../../src/core/decide/index.js";
import type { Effect } from "../../src/core/effects.js";
import type { Journal } from "../../src/core/journal.js";
import type { ForgeConfig } from "../../src/core/schemas/config.js";
import type { GitHubPort, ReviewInfo } from "../../src/github/port.js";
import { finishedReady, NOW, openTaskPull, RECORD, storedRun, testConfig, WORK } from "./handlers/fixtures.js";

type Merge = Extract<Effect, { kind: "MergePullRequest" }>;

const PERMISSIONS: Record<string, string> = { octocat: "write", reader: "read", admin: "admin" };

function world(reviews: ReviewInfo[], config: ForgeConfig = testConfig()) {
  const state = storedRun(
    { a: [] },
    { config, pendingOutbox: true, steps: [[finishedReady(), { kind: "pr.opened", taskId: "a", attempt: 1, number: 7 }]] },
  );
  const merged: number[] = [];
  const asked: string[] = [];
  const port = {
    async getPullRequestWithFiles() {
      return { ...openTaskPull(7), files: ["src/a.ts"], changeRequests: reviews };
    },
    async permission(login: string) {
      asked.push(login);
      return PERMISSIONS[login] ?? "none";
    },
    async mergePullRequest(n: number) {
      merged.push(n);
      return { kind: "merged", sha: "3e".repeat(20) };
    },
  } as unknown as GitHubPort;
  const ctx = (journal: Journal): EffectContext => ({
    port,
    journal,
    config,
    facts: state.facts,
    events: [],
    replay: false,
    now: NOW,
    conflicts: new Map(),
  });
  const merge = (journal: Journal) => journal.outbox.find((e): e is Merge => e.kind === "MergePullRequest");
  return { journal: state.journal, ctx, merge, merged, asked, config };
}

const changes = (id: number, login: string, commitId = RECORD, bot = false): ReviewInfo => ({
  id,
  login,
  bot,
  state: "CHANGES_REQUESTED",
  commitId,
  body: `Review ${id}: please export it.`,
});

describe("a request for changes GitHub has and the journal has not, found by the merge", () => {
  it("holds the merge back, goes into the journal and starts the revision; its webhook after starts nothing", async () => {
    const w = world([changes(41, "octocat")]);
    expect(w.journal.tasks[0]).toMatchObject({ status: "MERGE_READY", recordSha: RECORD });
    const out = await runEffect(w.merge(w.journal)!, w.ctx(w.journal));
    expect(out.kind).toBe("later");
    expect(w.merged).toEqual([]);
    expect(out.inputs).toEqual([
      {
        kind: "review.submitted",
        taskId: "a",
        attempt: 1,
        reviewId: 41,
        actor: "octocat",
        state: "changes_requested",
        headSha: RECORD,
        body: "Review 41: please export it.",
      },
    ]);
    const d = decide(w.journal, out.inputs![0]!, NOW, w.config);
    expect(d.journal.tasks[0]).toMatchObject({ status: "RUNNING", attempt: 1, iteration: 1, answered: [41] });
    expect(w.merge(d.journal)).toBeUndefined();
    // The review's webhook, late: the same review changes nothing.
    expect(decide(d.journal, out.inputs![0]!, NOW + 1, w.config).events).toEqual([]);
  });

  it("merges past a reader's request, a bot's, and a request on an older head", async () => {
    const w = world([changes(51, "reader"), changes(52, "dependabot", RECORD, true), changes(53, "octocat", WORK)]);
    const out = await runEffect(w.merge(w.journal)!, w.ctx(w.journal));
    expect(out).toMatchObject({ kind: "done", result: { prNumber: 7 } });
    expect(out.inputs).toBeUndefined();
    expect(w.merged).toEqual([7]);
    // Only the person's request on the head was a candidate: the bot's and the older head's cost no call.
    expect(w.asked).toEqual(["reader"]);
  });

  it("a request the revision limit met is seen: it holds nothing back once a person lets the task merge", async () => {
    const w = world([changes(61, "octocat")], testConfig({ review: { max_iterations: 0 } }));
    const out = await runEffect(w.merge(w.journal)!, w.ctx(w.journal));
    expect(out.kind).toBe("later");
    const d = decide(w.journal, out.inputs![0]!, NOW, w.config);
    const t = d.journal.tasks[0]!;
    expect(t).toMatchObject({ status: "MERGE_READY", answered: [61] });
    expect(t.waiting).toContain("review.max_iterations: 0");
    expect(w.merge(d.journal)).toBeUndefined();
    // The same merge effect, run against this journal (as when a person's approval requests it again): it merges.
    const again = await runEffect(w.merge(w.journal)!, w.ctx(d.journal));
    expect(again).toMatchObject({ kind: "done", result: { prNumber: 7 } });
    expect(w.merged).toEqual([7]);
  });
});
