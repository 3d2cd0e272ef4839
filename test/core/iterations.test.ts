/**
 * The PR feedback loop in the reducer (docs/executor.md#iterations): merge_policy review, reviews
 * and /forge fix starting revisions of the same attempt, feedback queued while one runs, the bounds,
 * and red CI.
 */
import { describe, expect, it } from "vitest";
import { decide, startRun, type Decision } from "../../src/core/decide/index.js";
import type { LeafInput } from "../../src/core/inputs.js";
import { journalSchema, type Journal } from "../../src/core/journal.js";
import { forgeConfigSchema, type ForgeConfig } from "../../src/core/schemas/config.js";
import { forgeEventSchema } from "../../src/core/schemas/events.js";
import { newRun, nodes, sha } from "../helpers/world.js";

const cfg = (over: Record<string, unknown> = {}): ForgeConfig => forgeConfigSchema.parse(over);

function feed(j: Journal, inputs: LeafInput[], config: ForgeConfig) {
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

/** A result of (task, attempt, iteration): work head `w`, record commit `r`. */
function finished(taskId: string, attempt: number, iteration: number): LeafInput {
  const w = sha(`w/${taskId}/${attempt}/${iteration}`);
  return {
    kind: "agent.finished",
    taskId,
    attempt,
    iteration,
    exitCode: 0,
    pushedSha: w,
    recordSha: sha(`r/${taskId}/${attempt}/${iteration}`),
    walkthrough: { status: "completed", confidence: 0.9, headSha: w, filesChanged: [`src/${taskId}.ts`], risks: [], followups: [] },
  };
}
const head = (taskId: string, attempt: number, iteration: number) => sha(`r/${taskId}/${attempt}/${iteration}`);
const review = (taskId: string, reviewId: number, state: "approved" | "changes_requested", headSha: string): LeafInput => ({
  kind: "review.submitted",
  taskId,
  attempt: 1,
  reviewId,
  actor: "octocat",
  state,
  headSha,
  ...(state === "changes_requested" ? { body: "Please rename foo." } : {}),
});

function ready(config: ForgeConfig) {
  const d = startRun(newRun(nodes({ a: [], b: ["a"] })), 0, config);
  return feed(d.journal, [finished("a", 1, 0)], config);
}

describe("merge_policy: review", () => {
  const config = cfg({ merge_policy: "review" });

  it("a verified task waits for an approving review of its current head, then merges", () => {
    const r = ready(config);
    expect(task(r.journal, "a").status).toBe("MERGE_READY");
    expect(r.journal.outbox.map((e) => e.key)).not.toContain("merge:a:1");
    const approved = feed(r.journal, [review("a", 7, "approved", head("a", 1, 0))], config);
    expect(approved.journal.outbox.map((e) => e.key)).toContain("merge:a:1");
    expect(task(approved.journal, "a").reviewApprovedHead).toBe(head("a", 1, 0));
  });

  it("an approval of another head merges nothing", () => {
    const r = ready(config);
    const approved = feed(r.journal, [review("a", 7, "approved", sha("older"))], config);
    expect(approved.journal.outbox.map((e) => e.key)).not.toContain("merge:a:1");
    expect(approved.rejections[0]!.reason).toMatch(/not the PR's current head/);
  });

  it("an approval that arrives before the gate passes merges once the head is verified", () => {
    const d = startRun(newRun(nodes({ a: [] })), 0, config);
    const input = finished("a", 1, 0) as Extract<LeafInput, { kind: "agent.finished" }>;
    // The record commit is known (DONE) but the walkthrough's head is not the pushed one yet.
    const done = feed(d.journal, [{ ...input, pushedSha: sha("other") }], config);
    expect(task(done.journal, "a").status).toBe("DONE");
    const approved = feed(done.journal, [review("a", 7, "approved", head("a", 1, 0))], config);
    const gated = feed(approved.journal, [{ kind: "branch.pushed", taskId: "a", attempt: 1, headSha: input.pushedSha! }], config);
    expect(gated.journal.outbox.map((e) => e.key)).toContain("merge:a:1");
  });
});

describe("revisions", () => {
  const config = cfg({ merge_policy: "review", review: { max_iterations: 2 } });

  it("changes requested start a revision on the same attempt and branch, with the review; the merge waits for its head", () => {
    const r = ready(cfg());
    // Under auto the merge was requested; the review takes it back.
    expect(r.journal.outbox.map((e) => e.key)).toContain("merge:a:1");
    const asked = feed(r.journal, [review("a", 7, "changes_requested", head("a", 1, 0))], cfg());
    const a = task(asked.journal, "a");
    expect(a).toMatchObject({ status: "RUNNING", attempt: 1, iteration: 1, branch: "forge/run-1/a/1", reviewIterations: 1 });
    expect(asked.journal.outbox.map((e) => e.key)).not.toContain("merge:a:1");
    const dispatch = asked.effects.find((e) => e.kind === "DispatchAgent");
    expect(dispatch).toMatchObject({
      key: "dispatch:a:1:1",
      iteration: 1,
      branch: "forge/run-1/a/1",
      context: { feedback: [{ source: "review", reviewId: 7, actor: "octocat", message: "Please rename foo." }] },
    });
    expect(asked.effects.some((e) => e.kind === "PrepareBranch")).toBe(false);
    const revised = feed(asked.journal, [finished("a", 1, 1)], cfg());
    expect(task(revised.journal, "a")).toMatchObject({ status: "MERGE_READY", recordSha: head("a", 1, 1) });
    expect(revised.journal.outbox.map((e) => e.key)).toContain("merge:a:1");
  });

  it("a result of an earlier revision, or an earlier job's loss, does not move the current one", () => {
    const r = ready(config);
    const asked = feed(r.journal, [review("a", 7, "changes_requested", head("a", 1, 0))], config);
    const again = feed(asked.journal, [finished("a", 1, 0)], config);
    expect(task(again.journal, "a").status).toBe("RUNNING");
    expect(again.rejections[0]!.reason).toMatch(/iteration 0 is not the current revision/);
    const d = startRun(newRun(nodes({ a: [], b: ["a"] })), 0, config);
    const withRun = feed(d.journal, [{ kind: "agent.started", taskId: "a", attempt: 1, workflowRunId: 100 }, finished("a", 1, 0)], config);
    const revising = feed(withRun.journal, [review("a", 7, "changes_requested", head("a", 1, 0))], config);
    const lost = feed(revising.journal, [{ kind: "agent.lost", taskId: "a", attempt: 1, workflowRunId: 100, reason: "ended" }], config);
    expect(task(lost.journal, "a").status).toBe("RUNNING");
  });

  it("a redelivered review starts nothing again", () => {
    const r = ready(config);
    const once = feed(r.journal, [review("a", 7, "changes_requested", head("a", 1, 0))], config);
    const revised = feed(once.journal, [finished("a", 1, 1), review("a", 7, "changes_requested", head("a", 1, 0))], config);
    expect(task(revised.journal, "a")).toMatchObject({ status: "MERGE_READY", iteration: 1 });
    expect(revised.effects.filter((e) => e.kind === "DispatchAgent")).toHaveLength(0);
  });

  it("reviews arriving while a revision runs are queued and folded into the next one", () => {
    const r = ready(config);
    const running = feed(r.journal, [review("a", 7, "changes_requested", head("a", 1, 0))], config);
    const queued = feed(
      running.journal,
      [
        review("a", 8, "changes_requested", head("a", 1, 0)),
        { kind: "command", command: "fix", actor: "hubot", taskId: "a", message: "also X" },
      ],
      config,
    );
    expect(queued.events.filter((e) => e.type === "task.feedback").map((e) => (e.data as { queued: boolean }).queued)).toEqual([
      true,
      true,
    ]);
    expect(queued.effects.filter((e) => e.kind === "DispatchAgent")).toHaveLength(0);
    const next = feed(queued.journal, [finished("a", 1, 1)], config);
    expect(task(next.journal, "a")).toMatchObject({ status: "RUNNING", iteration: 2 });
    const d = next.effects.find((e) => e.kind === "DispatchAgent") as Extract<Decision["effects"][number], { kind: "DispatchAgent" }>;
    expect(d.key).toBe("dispatch:a:1:2");
    expect(d.context?.feedback?.map((f) => f.source)).toEqual(["review", "command"]);
  });

  it("past review.max_iterations the task waits for a person and says why; an approval then merges it", () => {
    let j = ready(config).journal;
    for (let n = 1; n <= 2; n++) {
      j = feed(j, [review("a", 10 + n, "changes_requested", head("a", 1, n - 1)), finished("a", 1, n)], config).journal;
    }
    const over = feed(j, [review("a", 20, "changes_requested", head("a", 1, 2))], config);
    expect(task(over.journal, "a")).toMatchObject({ status: "MERGE_READY", iteration: 2 });
    expect(task(over.journal, "a").waiting).toMatch(/2 revisions made \(review.max_iterations: 2\)/);
    expect(over.events.map((e) => e.type)).toContain("task.revision_limit");
    expect(over.effects.find((e) => e.key === "revision-limit:a:1")).toBeTruthy();
    const fix = feed(over.journal, [{ kind: "command", command: "fix", actor: "octocat", taskId: "a" }], config);
    expect(fix.effects.filter((e) => e.kind === "DispatchAgent")).toHaveLength(0);
    const ok = feed(fix.journal, [review("a", 21, "approved", head("a", 1, 2))], config);
    expect(ok.journal.outbox.map((e) => e.key)).toContain("merge:a:1");
  });

  it("/forge fix on a task that is not open for feedback is refused with the reason", () => {
    const d = startRun(newRun(nodes({ a: [], b: ["a"] })), 0, config);
    const r = feed(d.journal, [{ kind: "command", command: "fix", actor: "octocat", taskId: "b" }], config);
    expect(r.rejections[0]!.reason).toMatch(/b is PENDING/);
  });

  it("a task a started refinery carries does not revise", () => {
    const d = startRun(newRun(nodes({ a: [], r: ["a"] })), 0, config);
    const done = feed(d.journal, [finished("a", 1, 0)], config);
    // The refinery starts once its upstream's pull request is read and changes no protected path.
    expect(done.effects.map((e) => e.key)).toContain("upstream:a:1");
    const j = feed(done.journal, [{ kind: "effect.done", key: "upstream:a:1", result: { clean: true } }], config).journal;
    expect(task(j, "r").status).toBe("RUNNING");
    const asked = feed(j, [review("a", 7, "changes_requested", head("a", 1, 0))], config);
    expect(task(asked.journal, "a").status).toBe("MERGE_READY");
    expect(task(asked.journal, "a").waiting).toMatch(/refinery r already carries/);
  });
});

describe("red CI", () => {
  const config = cfg({ ci_fix: { max_attempts: 1 } });
  const red = (h: string): LeafInput => ({ kind: "checks.failed", taskId: "a", attempt: 1, headSha: h, checks: ["ci / test"] });

  it("failing required checks of the verified head start a fix revision, up to ci_fix.max_attempts", () => {
    const r = ready(config);
    const fixing = feed(r.journal, [red(head("a", 1, 0))], config);
    expect(task(fixing.journal, "a")).toMatchObject({ status: "RUNNING", iteration: 1, ciFixes: 1 });
    expect(fixing.effects.find((e) => e.kind === "DispatchAgent")).toMatchObject({
      context: { feedback: [{ source: "ci", checks: ["ci / test"] }] },
    });
    const again = feed(fixing.journal, [finished("a", 1, 1), red(head("a", 1, 1))], config);
    expect(task(again.journal, "a").waiting).toMatch(/required checks still fail after 1 fix revision.*ci \/ test/);
    expect(again.journal.outbox.map((e) => e.key)).not.toContain("merge:a:1");
  });

  it("checks of an older head, or the same failure twice, start nothing", () => {
    const r = ready(config);
    expect(feed(r.journal, [red(sha("older"))], config).effects.filter((e) => e.kind === "DispatchAgent")).toHaveLength(0);
  });
});

describe("steering", () => {
  const config = cfg();
  it("/forge steer on a running task keeps the message, numbered, for its job; on any other it is refused", () => {
    const d = startRun(newRun(nodes({ a: [], b: ["a"] })), 0, config);
    const steer = (taskId: string, message?: string): LeafInput => ({
      kind: "command",
      command: "steer",
      actor: "octocat",
      taskId,
      ...(message ? { message } : {}),
    });
    const r = feed(d.journal, [steer("a", "use the v2 API"), steer("a", "and keep it short")], config);
    expect(task(r.journal, "a").steering?.map((m) => [m.id, m.message])).toEqual([
      [1, "use the v2 API"],
      [2, "and keep it short"],
    ]);
    expect(r.events.filter((e) => e.type === "task.steered")).toHaveLength(2);
    expect(r.effects.filter((e) => e.kind === "DispatchAgent")).toHaveLength(0);
    const refused = feed(r.journal, [steer("b", "hello"), steer("a")], config);
    expect(refused.rejections.map((x) => x.reason)).toEqual([
      "b is PENDING; only a running agent can be steered",
      "say what to tell the agent: /forge steer <message>",
    ]);
  });
});
