/**
 * A merge GitHub refuses for a reason Forge cannot resolve (docs/executor.md#merging-under-the-repositorys-rules):
 * the reducer's side (`merge.blocked`) and the App's reading of GitHub's answers (src/github/merge-rules.ts).
 */
import { describe, expect, it } from "vitest";
import { decide, startRun, type Decision } from "../../src/core/decide/index.js";
import type { LeafInput } from "../../src/core/inputs.js";
import { journalSchema, type Journal } from "../../src/core/journal.js";
import { forgeConfigSchema, type ForgeConfig } from "../../src/core/schemas/config.js";
import { forgeEventSchema } from "../../src/core/schemas/events.js";
import { CONFIG_TTL_MS } from "../../src/app/context.js";
import { wantsUpToDate } from "../../src/github/branch-update.js";
import { mergeBlocker, mergeMethodFor, RULES_TTL_MS } from "../../src/github/merge-rules.js";
import { newRun, nodes, sha } from "../helpers/world.js";

const config: ForgeConfig = forgeConfigSchema.parse({});

function feed(j: Journal, inputs: LeafInput[]) {
  const all = { events: [] as Decision["events"], effects: [] as Decision["effects"], rejections: [] as Decision["rejections"] };
  for (const input of inputs) {
    const d = decide(j, input, 1000, config);
    j = d.journal;
    all.events.push(...d.events);
    all.effects.push(...d.effects);
    all.rejections.push(...d.rejections);
  }
  for (const e of all.events) expect(forgeEventSchema.safeParse(e).success, JSON.stringify(e)).toBe(true);
  expect(journalSchema.safeParse(j).success).toBe(true);
  return { journal: j, ...all };
}

const task = (j: Journal, id: string) => j.tasks.find((t) => t.id === id)!;
const w = sha("w/a");
const finished: LeafInput = {
  kind: "agent.finished",
  taskId: "a",
  attempt: 1,
  iteration: 0,
  exitCode: 0,
  pushedSha: w,
  recordSha: sha("r/a"),
  walkthrough: { status: "completed", confidence: 0.9, headSha: w, filesChanged: ["src/a.ts"], risks: [], followups: [] },
};
const blocked = (reason: string): LeafInput => ({ kind: "merge.blocked", taskId: "a", attempt: 1, reason });

function ready() {
  return feed(startRun(newRun(nodes({ a: [] })), 0, config).journal, [finished]);
}

describe("merge.blocked", () => {
  it("the task waits with the reason, its merge stays in the outbox, and one comment says why — not again for the same reason", () => {
    const r = ready();
    expect(r.journal.outbox.map((e) => e.key)).toContain("merge:a:1");
    const b = feed(r.journal, [blocked("required approvals on `x`")]);
    expect(task(b.journal, "a")).toMatchObject({
      status: "MERGE_READY",
      attempt: { revision: { waiting: "GitHub refuses the merge: required approvals on `x`" } },
    });
    expect(b.journal.outbox.map((e) => e.key)).toContain("merge:a:1");
    expect(b.effects.filter((e) => e.kind === "PostComment").map((e) => e.key)).toEqual(["merge-blocked:a:1"]);
    expect(b.events.map((e) => e.type)).toContain("task.merge_blocked");
    const again = feed(b.journal, [blocked("required approvals on `x`")]);
    expect(again.effects).toEqual([]);
    expect(again.events.map((e) => e.type)).not.toContain("task.merge_blocked");
    // A new reason replaces it (the same comment key: the App updates that comment in place).
    const other = feed(b.journal, [blocked("a rule of `x` refused the merge")]);
    expect(task(other.journal, "a").attempt?.revision.waiting).toBe("GitHub refuses the merge: a rule of `x` refused the merge");
    expect(other.effects.filter((e) => e.kind === "PostComment").map((e) => e.key)).toEqual(["merge-blocked:a:1"]);
  });

  it("/forge retry clears it and requests the merge; the merge clears it too", () => {
    const b = feed(ready().journal, [blocked("required approvals on `x`")]);
    const retried = feed(b.journal, [{ kind: "command", command: "retry", actor: "octocat", taskId: "a" }]);
    expect(retried.rejections).toEqual([]);
    expect(task(retried.journal, "a").attempt?.revision.waiting).toBeUndefined();
    expect(retried.effects.map((e) => e.key)).toContain("merge:a:1");
    expect(retried.events.map((e) => e.type)).toContain("task.merge_unblocked");
    const merged = feed(b.journal, [{ kind: "pr.merged", taskId: "a", attempt: 1, mergeSha: sha("m") }]);
    expect(task(merged.journal, "a")).toMatchObject({ status: "MERGED" });
    expect(task(merged.journal, "a").attempt?.revision.waiting).toBeUndefined();
  });

  it("once the PR merges, the comment that said why it could not is updated to say it merged — after a retry too; none without a block", () => {
    const b = feed(ready().journal, [blocked('required status check "circle" on `x`')]);
    expect(task(b.journal, "a").attempt?.mergeBlockedSaid).toBe(true);
    const mergeSha = sha("m");
    for (const before of [[], [{ kind: "command", command: "retry", actor: "octocat", taskId: "a" } as LeafInput]]) {
      const merged = feed(b.journal, [...before, { kind: "pr.merged", taskId: "a", attempt: 1, mergeSha }]);
      expect(task(merged.journal, "a").status).toBe("MERGED");
      const update = merged.effects.find((e) => e.key === "merge-unblocked:a:1");
      expect(update).toMatchObject({ kind: "PostComment", updates: "merge-blocked:a:1", target: { on: "task", taskId: "a", attempt: 1 } });
      expect(update?.kind === "PostComment" && update.body).toBe(
        `\`a\` is merged (${mergeSha.slice(0, 7)}): GitHub no longer refuses it, and Forge carries on with the tasks that wait for it.`,
      );
      // Still in the outbox, the comment saying it could not is never posted after the merge; the
      // update has a key of its own, which the refusal comment's late acknowledgement leaves alone.
      expect(merged.journal.outbox.map((e) => e.key)).not.toContain("merge-blocked:a:1");
      const acked = feed(merged.journal, [{ kind: "effect.done", key: "merge-blocked:a:1", result: {} }]);
      expect(acked.journal.outbox).toContainEqual(update);
    }
    const plain = feed(ready().journal, [{ kind: "pr.merged", taskId: "a", attempt: 1, mergeSha }]);
    expect(task(plain.journal, "a").status).toBe("MERGED");
    expect(plain.effects.filter((e) => e.kind === "PostComment")).toEqual([]);
  });

  it("a task not waiting to merge takes none; /forge retry of a MERGE_READY task not blocked is still refused", () => {
    const r = ready();
    const notReady = feed(startRun(newRun(nodes({ a: [] })), 0, config).journal, [blocked("x")]);
    expect(notReady.rejections.map((x) => x.reason)).toEqual([expect.stringMatching(/no merge of it waits/)]);
    const retry = feed(r.journal, [{ kind: "command", command: "retry", actor: "octocat", taskId: "a" }]);
    expect(retry.rejections[0]!.reason).toMatch(/only a FAILED or STALE task can be retried/);
  });
});

describe("GitHub's rules and refusals, as the App reads them", () => {
  it("a branch's rules are kept as long as the repository's config", () => {
    expect(RULES_TTL_MS).toBe(CONFIG_TTL_MS);
  });

  it("the merge method: squash under linear history or when merge commits are not allowed, else a merge commit", () => {
    expect(mergeMethodFor([])).toBe("merge");
    expect(mergeMethodFor([{ type: "deletion" }, { type: "required_linear_history" }])).toBe("squash");
    expect(mergeMethodFor([{ type: "pull_request", parameters: { allowed_merge_methods: ["merge", "squash"] } }])).toBe("merge");
    expect(mergeMethodFor([{ type: "pull_request", parameters: { allowed_merge_methods: ["rebase"] } }])).toBe("rebase");
    expect(mergeMethodFor([{ type: "pull_request", parameters: { allowed_merge_methods: ["squash", "rebase"] } }])).toBe("squash");
  });

  it("refusals Forge cannot resolve name the rule, the branch and what to do; the others are not blocks", () => {
    const b = "forge/r/_integration";
    expect(mergeBlocker("At least 1 approving review is required by reviewers with write access.", b, [])).toMatch(
      /^required approvals on `forge\/r\/_integration`: .*approves the pull request/,
    );
    expect(mergeBlocker('Repository rule violations found\n\nRequired status check "lint" is expected.\n', b, ["test"])).toMatch(
      /required status check "lint" .* Forge does not run or wait for it/,
    );
    // A check Forge waits for (in required_checks) is its own business.
    expect(mergeBlocker('Required status check "test" is expected.', b, ["test"])).toBeUndefined();
    // A branch that must be up to date is Forge's to update (update-branch), not a block — alone or among a ruleset's violations.
    for (const m of [
      "Head branch is out of date. Review and try the merge again.",
      "Repository rule violations found\n\nHead branch is out of date. Review and try the merge again.\n",
    ]) {
      expect(mergeBlocker(m, b, [])).toBeUndefined();
      expect(wantsUpToDate(m)).toBe(true);
    }
    expect(wantsUpToDate("At least 1 approving review is required by reviewers with write access.")).toBe(false);
    expect(mergeBlocker("Repository rule violations found\n\nCannot update this protected ref.\n", b, [])).toMatch(/bypass list/);
    expect(mergeBlocker("Pull Request is not mergeable", b, [])).toBeUndefined();
    expect(mergeBlocker("Base branch was modified. Review and try the merge again.", b, [])).toBeUndefined();
  });
});
