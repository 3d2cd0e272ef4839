/**
 * Red CI that failed before the task reached its gate: the check's own webhook came while the task
 * was still RUNNING or DONE and found nothing to answer; at MERGE_READY the merge finds the head's
 * required checks red. It does not wait forever: it hands the failures to the executor as
 * `checks.failed`, which starts the fix revision (bounded by ci_fix.max_attempts like any other).
 */
import { describe, expect, it } from "vitest";
import { runEffect, type EffectContext } from "../../src/app/effects/index.js";
import { decide } from "../../src/core/decide/index.js";
import type { Effect } from "../../src/core/effects.js";
import type { GitHubPort } from "../../src/github/port.js";
import { finishedReady, NOW, openTaskPull, RECORD, storedRun, testConfig } from "./handlers/fixtures.js";

const config = testConfig({ required_checks: ["check"] });

function world(failing: boolean) {
  const state = storedRun(
    { a: [] },
    { config, pendingOutbox: true, steps: [[finishedReady(), { kind: "pr.opened", taskId: "a", attempt: 1, number: 7 }]] },
  );
  const merge = state.journal.outbox.find((e): e is Extract<Effect, { kind: "MergePullRequest" }> => e.kind === "MergePullRequest");
  const merged: number[] = [];
  const pr = openTaskPull(7);

  const port = {
    async getPullRequestWithFiles() {
      return { ...pr, files: ["src/a.ts"], changeRequests: [] };
    },
    async ciChecks(head: string, names: readonly string[]) {
      expect([head, names]).toEqual([RECORD, ["check"]]);
      return failing
        ? {
            pending: false,
            running: false,
            missing: [],
            failing: [
              {
                name: "check",
                conclusion: "failure",
                title: "1 error",
                summary: "lint failed",
                annotations: ["src/a.ts:3 no-unused-vars"],
                log: "npm ERR!",
              },
            ],
          }
        : { pending: false, running: false, missing: [], failing: [] };
    },
    async mergePullRequest(n: number) {
      merged.push(n);
      return { kind: "merged", sha: "3e".repeat(20) };
    },
  } as unknown as GitHubPort;
  const ctx: EffectContext = {
    port,
    journal: state.journal,
    config,
    facts: state.facts,
    events: [],
    replay: false,
    now: NOW,
    conflicts: new Map(),
  };
  return { state, merge: merge!, ctx, merged };
}

describe("red required checks found by the merge", () => {
  it("are handed on as checks.failed and start the fix revision; nothing is merged", async () => {
    const { state, merge, ctx, merged } = world(true);
    expect(state.journal.tasks[0]).toMatchObject({ status: "MERGE_READY", attempt: { recordSha: RECORD } });
    const out = await runEffect(merge, ctx);
    expect(out.kind).toBe("later");
    expect(merged).toEqual([]);
    expect(out.inputs).toEqual([
      expect.objectContaining({ kind: "checks.failed", taskId: "a", attempt: 1, headSha: RECORD, checks: ["check"] }),
    ]);
    const details = (out.inputs![0] as { details: string }).details;
    expect(details).toContain("src/a.ts:3 no-unused-vars");
    expect(details).toContain("npm ERR!");

    const d = decide(state.journal, out.inputs![0]!, NOW, config);
    expect(d.journal.tasks[0]).toMatchObject({ status: "RUNNING", attempts: 1, attempt: { revision: { iteration: 1 } } });
    // The merge left the outbox with the revision; the same head's failures again change nothing.
    expect(d.journal.outbox.some((e) => e.kind === "MergePullRequest")).toBe(false);
    const again = decide(d.journal, out.inputs![0]!, NOW + 1, config);
    expect(again.events).toEqual([]);
  });

  it("green: merged, nothing handed on", async () => {
    const { merge, ctx, merged } = world(false);
    const out = await runEffect(merge, ctx);
    expect(out).toMatchObject({ kind: "done", result: { prNumber: 7 } });
    expect(out.inputs).toBeUndefined();
    expect(merged).toEqual([7]);
  });
});
