/**
 * A MERGE_READY task's PR branch brought up to date by Forge (update-branch), the executor's side
 * (src/core/decide/branch-update.ts, docs/executor.md#merging-under-the-repositorys-rules): the new
 * head is the PR's (`prHead`), no attempt or revision starts, what was decided of the old head
 * carries over, and an update over any other head is refused.
 */
import { describe, expect, it } from "vitest";
import { decide, startRun, type Decision } from "../../src/core/decide/index.js";
import type { LeafInput } from "../../src/core/inputs.js";
import { journalSchema, type Journal } from "../../src/core/journal.js";
import { forgeConfigSchema, type ForgeConfig } from "../../src/core/schemas/config.js";
import { forgeEventSchema } from "../../src/core/schemas/events.js";
import { branchUpdatePending, prHead } from "../../src/core/task-rules.js";
import { newRun, nodes, sha } from "../helpers/world.js";

function feed(j: Journal, inputs: LeafInput[], config: ForgeConfig = forgeConfigSchema.parse({})) {
  const all = { events: [] as Decision["events"], effects: [] as Decision["effects"], rejections: [] as Decision["rejections"] };
  for (const input of inputs) {
    const d = decide(j, input, 5000, config);
    j = d.journal;
    all.events.push(...d.events);
    all.effects.push(...d.effects);
    all.rejections.push(...d.rejections);
  }
  for (const e of all.events) expect(forgeEventSchema.safeParse(e).success, JSON.stringify(e)).toBe(true);
  expect(journalSchema.safeParse(j).success).toBe(true);
  return { journal: j, ...all };
}

const task = (j: Journal, id = "a") => j.tasks.find((t) => t.id === id)!;
const work = sha("w/a");
const record = sha("r/a");
const merged1 = sha("u1/a");
const merged2 = sha("u2/a");
const finished = (iteration = 0, rec = record, pushed = work): LeafInput => ({
  kind: "agent.finished",
  taskId: "a",
  attempt: 1,
  iteration,
  exitCode: 0,
  pushedSha: pushed,
  recordSha: rec,
  walkthrough: { status: "completed", confidence: 0.9, headSha: pushed, filesChanged: ["src/a.ts"], risks: [], followups: [] },
});
const requested = (from: string): LeafInput => ({ kind: "branch.update_requested", taskId: "a", attempt: 1, from });
const updated = (from: string, head: string): LeafInput => ({ kind: "branch.updated", taskId: "a", attempt: 1, from, head });

function ready(config?: ForgeConfig) {
  return feed(startRun(newRun(nodes({ a: [] })), 0, config ?? forgeConfigSchema.parse({})).journal, [finished()], config);
}

describe("Forge's update of a task's PR branch", () => {
  it("an accepted update waits for its head; the new head is the PR's, its merge still in the outbox, and no job is dispatched", () => {
    const r = ready();
    expect(prHead(task(r.journal))).toBe(record);
    const asked = feed(r.journal, [requested(record)]);
    expect(task(asked.journal).attempt?.branchUpdate).toEqual({
      over: record,
      requested: record,
      requestedAt: new Date(5000).toISOString(),
    });
    expect(branchUpdatePending(task(asked.journal))).toBe(record);
    const u = feed(asked.journal, [updated(record, merged1)]);
    expect(u.rejections).toEqual([]);
    const t = task(u.journal);
    expect(t).toMatchObject({ status: "MERGE_READY", attempts: 1, attempt: { branchUpdate: { over: record, head: merged1 } } });
    expect(t.attempt?.revision.iteration).toBe(0);
    expect(prHead(t)).toBe(merged1);
    expect(branchUpdatePending(t)).toBeUndefined();
    expect(u.events.map((e) => [e.type, e.data])).toEqual([["task.branch_updated", { attempt: 1, from: record, headSha: merged1 }]]);
    expect(u.effects.filter((e) => e.kind === "DispatchAgent")).toEqual([]);
    expect(u.journal.outbox.map((e) => e.key)).toContain("merge:a:1");
    // Told twice (the push webhook and the merge's read): nothing more.
    const again = feed(u.journal, [updated(record, merged1), requested(record)]);
    expect(again.events).toEqual([]);
    expect(task(again.journal).attempt?.branchUpdate).toEqual({ over: record, head: merged1 });
    // A second update, over the first one's head (the integration branch moved again).
    const second = feed(u.journal, [requested(merged1), updated(merged1, merged2)]);
    expect(prHead(task(second.journal))).toBe(merged2);
    expect(task(second.journal).attempt?.branchUpdate).toEqual({ over: record, head: merged2 });
  });

  it("the new head arriving before the request is recorded: the request changes nothing", () => {
    const u = feed(ready().journal, [updated(record, merged1), requested(record)]);
    expect(task(u.journal).attempt?.branchUpdate).toEqual({ over: record, head: merged1 });
    expect(branchUpdatePending(task(u.journal))).toBeUndefined();
  });

  it("a person's approvals of the head it was made over carry over to the new head", () => {
    const config = forgeConfigSchema.parse({ merge_policy: "review" });
    const r = ready(config);
    const approved = feed(
      r.journal,
      [{ kind: "review.submitted", taskId: "a", attempt: 1, reviewId: 7, actor: "octocat", state: "approved", headSha: record }],
      config,
    );
    expect(task(approved.journal).attempt?.revision.reviewApprovedHead).toBe(record);
    const u = feed(approved.journal, [updated(record, merged1)], config);
    expect(task(u.journal).attempt?.revision.reviewApprovedHead).toBe(merged1);
  });

  it("an update over another head than the PR's, or of a task not waiting to merge, is refused; a new record supersedes it", () => {
    const r = ready();
    const wrong = feed(r.journal, [updated(sha("x"), merged1)]);
    expect(wrong.rejections.map((x) => x.reason)).toEqual([expect.stringMatching(/not the PR's head/)]);
    expect(prHead(task(wrong.journal))).toBe(record);
    const running = feed(startRun(newRun(nodes({ a: [] })), 0, forgeConfigSchema.parse({})).journal, [updated(record, merged1)]);
    expect(running.rejections.map((x) => x.reason)).toEqual([expect.stringMatching(/is RUNNING: its branch is not Forge's to update/)]);
    // A revision's record (on top of the updated head) is the PR's head again; the update no longer counts.
    const u = feed(r.journal, [updated(record, merged1)]);
    const revised = feed(u.journal, [
      { kind: "command", command: "fix", actor: "octocat", taskId: "a", message: "more" },
      finished(1, sha("r2/a"), sha("w2/a")),
    ]);
    expect(task(revised.journal).attempt?.revision.iteration).toBe(1);
    expect(prHead(task(revised.journal))).toBe(sha("r2/a"));
  });
});
