/**
 * Property tests of revisions (docs/executor.md#iterations) over random DAGs, reviews, `/forge fix`
 * and red CI, delivered duplicated and reordered: a (task, attempt, iteration) is dispatched at most
 * once, nothing merges without passing its gate (and, under merge_policy review, its approval), the
 * bounds hold, and a run whose reviewers end up approving completes.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decide, startRun, type Decision } from "../../src/core/decide/index.js";
import type { Effect } from "../../src/core/effects.js";
import type { LeafInput, PlanNodeInput } from "../../src/core/inputs.js";
import type { Journal } from "../../src/core/journal.js";
import { planIndex } from "../../src/core/plan-index.js";
import { forgeConfigSchema, type ForgeConfig } from "../../src/core/schemas/config.js";
import { isValidTransition } from "../../src/core/state-machine.js";
import { prng } from "../helpers/gen-plan.js";
import { newRun, sha } from "../helpers/world.js";

const dagArb = fc.integer({ min: 1, max: 10 }).chain((n) =>
  fc.array(fc.tuple(fc.array(fc.nat(), { maxLength: 2 }), fc.boolean()), { minLength: n, maxLength: n }).map((spec) =>
    spec.map(([picks, refinery], i): PlanNodeInput => {
      const deps = i === 0 ? [] : [...new Set(picks.map((p) => `t${p % i}`))];
      return refinery && deps.length > 0 && i % 3 === 0
        ? { id: `t${i}`, kind: "refinery", agentType: "refinery", dependencies: deps }
        : { id: `t${i}`, kind: "task", agentType: "2", dependencies: deps };
    }),
  ),
);

const configArb = fc.record({
  max_parallel_agents: fc.integer({ min: 1, max: 3 }),
  merge_policy: fc.constantFrom("auto" as const, "review" as const),
  max_retries: fc.constant(3),
  retry_backoff: fc.constant({ base_seconds: 0, max_seconds: 0 }),
  review: fc.record({ max_iterations: fc.integer({ min: 0, max: 3 }) }),
  ci_fix: fc.record({ max_attempts: fc.integer({ min: 0, max: 2 }) }),
});

const work = (e: { taskId: string; attempt: number }, iteration: number) => sha(`w/${e.taskId}/${e.attempt}/${iteration}`);
const record = (e: { taskId: string; attempt: number }, iteration: number) => sha(`r/${e.taskId}/${e.attempt}/${iteration}`);

/** What GitHub and the job answer to an effect; a revision's job fails now and then (rand). */
function factsFor(effect: Effect, rand: () => number): LeafInput[] {
  const done: LeafInput = { kind: "effect.done", key: effect.key, result: {} };
  if (effect.kind === "MergePullRequest")
    return [{ kind: "effect.done", key: effect.key, result: { mergeSha: sha(`merge/${effect.taskId}/${effect.attempt}`) } }];
  // A refinery's upstream check: the simulated agents change no protected path.
  if (effect.kind === "CheckUpstream") return [{ kind: "effect.done", key: effect.key, result: { clean: true } }];
  if (effect.kind !== "DispatchAgent") return [done];
  const { taskId, attempt } = effect;
  const iteration = effect.iteration ?? 0;
  const runId = attempt * 100 + iteration;
  const facts: LeafInput[] = [
    { kind: "effect.done", key: effect.key, result: { workflowRunId: runId } },
    { kind: "agent.started", taskId, attempt, iteration, workflowRunId: runId },
  ];
  if (attempt < 3 && rand() < 0.1) {
    facts.push({ kind: "agent.finished", taskId, attempt, iteration, exitCode: 1, error: "tests failed" });
    return facts;
  }
  const w = work(effect, iteration);
  facts.push(
    { kind: "pr.opened", taskId, attempt, number: attempt },
    {
      kind: "agent.finished",
      taskId,
      attempt,
      iteration,
      exitCode: 0,
      pushedSha: w,
      recordSha: record(effect, iteration),
      walkthrough: { status: "completed", confidence: 0.9, headSha: w, filesChanged: [`src/${taskId}.ts`], risks: [], followups: [] },
    },
  );
  return facts;
}

let reviewIds = 1;

/** What people do: review a task's PR (current head, an older one, or while it is revised), `/forge fix`, red CI. */
function person(j: Journal, rand: () => number, patience: number): LeafInput | undefined {
  const open = j.tasks.filter((t) => t.status === "MERGE_READY" || (t.status === "RUNNING" && (t.iteration ?? 0) > 0));
  if (open.length === 0) return undefined;
  const t = open[Math.floor(rand() * open.length)]!;
  const head = t.recordSha ?? t.pushedSha ?? sha("none");
  const ref = { taskId: t.id, attempt: t.attempt };
  const r = rand();
  // Patience runs out: people approve what they see, so runs end.
  if (r < patience || t.waiting)
    return { kind: "review.submitted", ...ref, reviewId: reviewIds++, actor: "octocat", state: "approved", headSha: head };
  if (r < patience + 0.15)
    return { kind: "review.submitted", ...ref, reviewId: reviewIds++, actor: "octocat", state: "approved", headSha: sha("old") };
  if (r < patience + 0.45)
    return {
      kind: "review.submitted",
      ...ref,
      reviewId: reviewIds++,
      actor: "octocat",
      state: "changes_requested",
      headSha: head,
      body: "rename it",
    };
  if (r < patience + 0.6) return { kind: "command", command: "fix", actor: "octocat", taskId: t.id, message: "and the docs" };
  return { kind: "checks.failed", ...ref, headSha: head, checks: ["ci / test"] };
}

const dispatched = new Set<string>();
let revisions = 0;

function check(before: Journal, d: Decision, config: ForgeConfig): void {
  const after = d.journal;
  for (const t of d.transitions) expect(isValidTransition(t.from, t.to), `${t.taskId} ${t.from}→${t.to}`).toBe(true);
  // A (task, attempt, iteration) is dispatched at most once, and never onto a running job.
  for (const e of d.effects) {
    if (e.kind !== "DispatchAgent") continue;
    const key = `${e.taskId}:${e.attempt}:${e.iteration ?? 0}`;
    expect(dispatched.has(key), `dispatched twice: ${key}`).toBe(false);
    dispatched.add(key);
    if ((e.iteration ?? 0) > 0) revisions += 1;
    // …and it is the job of what the task now runs: no earlier attempt or revision is left live beside it.
    const now = after.tasks.find((t) => t.id === e.taskId)!;
    expect([now.status, now.attempt, now.iteration ?? 0]).toEqual(["RUNNING", e.attempt, e.iteration ?? 0]);
  }
  // Nothing is merged without its gate: a pending merge is always of a verified head (and an approved one under review).
  for (const e of after.outbox) {
    if (e.kind !== "MergePullRequest") continue;
    const t = after.tasks.find((x) => x.id === e.taskId)!;
    expect(["MERGE_READY", "MERGED"], `merge pending while ${t.id} is ${t.status}`).toContain(t.status);
    if (t.status !== "MERGE_READY") continue;
    expect(t.pushedSha).toBe(t.walkthroughSha);
    expect(t.waiting).toBeUndefined();
    if (config.merge_policy === "review") expect(t.reviewApprovedHead).toBe(t.recordSha ?? t.pushedSha);
  }
  for (const tr of d.transitions) {
    if (tr.to !== "MERGED") continue;
    const t = before.tasks.find((x) => x.id === tr.taskId)!;
    expect(t.status === "MERGE_READY" || t.status === "MERGED", `${t.id} merged from ${t.status}`).toBe(true);
  }
  // The bounds hold.
  for (const t of after.tasks) {
    expect(t.reviewIterations ?? 0).toBeLessThanOrEqual(config.review.max_iterations);
    expect(t.ciFixes ?? 0).toBeLessThanOrEqual(config.ci_fix.max_attempts);
  }
  // Blockers agree with a recount: a revision takes back what MERGE_READY gave a refinery.
  const { deps, isRefinery } = planIndex(after.plan);
  after.tasks.forEach((t, i) => {
    const open = deps[i]!.filter(
      (k) => !(after.tasks[k]!.status === "MERGED" || (isRefinery[i] && after.tasks[k]!.status === "MERGE_READY")),
    );
    expect(t.blockers, `blockers of ${t.id}`).toBe(open.length);
  });
}

function drive(nodes: PlanNodeInput[], config: ForgeConfig, seed: number, maxSteps = 4000): Journal {
  const rand = prng(seed);
  let now = 0;
  const first = startRun(newRun(nodes), now, config);
  let journal = first.journal;
  const pending: LeafInput[] = [];
  const delivered: LeafInput[] = [];
  const take = (d: Decision) => d.effects.forEach((e) => pending.push(...factsFor(e, rand)));
  take(first);
  for (let step = 0; step < maxSteps && journal.status === "running"; step++) {
    let input: LeafInput | undefined;
    const patience = Math.min(0.9, 0.2 + step / 1500);
    if (delivered.length > 0 && rand() < 0.15) input = delivered[Math.floor(rand() * delivered.length)];
    else if (rand() < 0.15) input = person(journal, rand, patience);
    if (!input && pending.length > 0) input = pending.splice(rand() < 0.5 ? Math.floor(rand() * pending.length) : 0, 1)[0];
    if (!input) input = person(journal, rand, patience);
    if (!input) {
      now += 60_000;
      input = { kind: "tick" };
    }
    delivered.push(input);
    const d = decide(journal, input, now, config);
    check(journal, d, config);
    journal = d.journal;
    take(d);
  }
  return journal;
}

describe("revision properties", () => {
  it("keep dispatch-once, the merge gate and the bounds under reviews, fixes and red CI, duplicated and reordered; runs complete", () => {
    fc.assert(
      fc.property(dagArb, configArb, fc.integer(), (nodes, over, seed) => {
        const config = forgeConfigSchema.parse(over);
        dispatched.clear();
        const j = drive(nodes, config, seed);
        expect(j.status, JSON.stringify(j.tasks.filter((t) => t.status !== "MERGED"))).toBe("completed");
      }),
      { numRuns: 60 },
    );
    // The runs did revise: the properties were tested on revisions, not around them.
    expect(revisions).toBeGreaterThan(20);
  }, 120_000);
});
