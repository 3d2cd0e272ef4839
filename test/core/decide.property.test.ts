/**
 * Property tests of the executor over random DAGs and random input sequences, duplicated and
 * reordered: the executor's invariants (docs/executor.md#overview) hold whatever order GitHub delivers facts in.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decide, startRun, type Decision } from "../../src/core/decide/index.js";
import type { LeafInput, PlanNodeInput } from "../../src/core/inputs.js";
import type { Journal } from "../../src/core/journal.js";
import { forgeConfigSchema } from "../../src/core/schemas/config.js";
import { isValidTransition } from "../../src/core/state-machine.js";
import { readySet } from "../helpers/ready-set.js";
import { planIndex } from "../../src/core/plan-index.js";
import { computeDerived, derivedOf } from "../../src/core/derived.js";
import { factsFor, newRun, people, type Behaviour, type Outcome } from "../helpers/world.js";

/** mulberry32: a tiny seeded PRNG for delivery choices inside one property run. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const dagArb = fc.integer({ min: 1, max: 18 }).chain((n) =>
  fc
    .array(fc.tuple(fc.array(fc.nat(), { maxLength: 3 }), fc.boolean(), fc.constantFrom<"1" | "2" | "3">("1", "2", "3")), {
      minLength: n,
      maxLength: n,
    })
    .map((spec) =>
      spec.map(([picks, refinery, agentType], i): PlanNodeInput => {
        const deps = i === 0 ? [] : [...new Set(picks.map((p) => `t${p % i}`))];
        const isRefinery = refinery && deps.length > 0 && i % 3 === 0;
        return isRefinery
          ? { id: `t${i}`, kind: "refinery", agentType: "refinery", dependencies: deps }
          : { id: `t${i}`, kind: "task", agentType, dependencies: deps };
      }),
    ),
);

const OUTCOMES: Outcome[] = [
  { kind: "success" },
  { kind: "success", followups: ["fix the flaky date test"], risks: ["touches src/t0.ts"] },
  { kind: "exit", code: 1 },
  { kind: "exit", code: 10 },
  { kind: "exit", code: 21 },
  { kind: "lost" },
  { kind: "human" },
  { kind: "escalate" },
  { kind: "rate_limited", forMs: 5 * 60_000 },
  { kind: "silent" },
];

/** Outcomes drawn per (task, attempt) from the seed; from attempt 3 on every agent succeeds, so a run can end. */
function behaviourFrom(seed: number, fatal: boolean): Behaviour {
  return (taskId, attempt) => {
    if (attempt >= 3) return { kind: "success" };
    const r = prng(seed ^ (attempt * 7919) ^ [...taskId].reduce((h, c) => h * 31 + c.charCodeAt(0), 0))();
    if (fatal && r < 0.04) return { kind: "exit", code: r < 0.02 ? 2 : 20 };
    return r < 0.55 ? OUTCOMES[0]! : OUTCOMES[1 + Math.floor(((r - 0.55) / 0.45) * (OUTCOMES.length - 1))]!;
  };
}

const configArb = fc.record({
  max_parallel_agents: fc.integer({ min: 1, max: 4 }),
  merge_policy: fc.constant("auto" as const),
  cr_mode: fc.constantFrom("replan" as const, "review" as const),
  refinery_approval: fc.constant(false),
  max_retries: fc.integer({ min: 2, max: 3 }),
});

interface Drive {
  journal: Journal;
  log: { input: LeafInput; at: number }[];
  decisions: Decision[];
  first: Decision;
}

/**
 * Deliver the world's facts in a random order, each possibly twice; people answer questions and
 * Change Requests; time moves a minute whenever nothing else is pending.
 */
function drive(
  nodes: PlanNodeInput[],
  config: ReturnType<typeof forgeConfigSchema.parse>,
  behaviour: Behaviour,
  seed: number,
  chaos: { reorder: number; duplicate: number; pause: number },
  maxSteps = 1500,
): Drive {
  const rand = prng(seed);
  let now = 0;
  const first = startRun(newRun(nodes), now, config);
  let journal = first.journal;
  const decisions: Decision[] = [first];
  const log: Drive["log"] = [];
  const pending: LeafInput[] = [];
  const delivered: LeafInput[] = [];
  const take = (d: Decision) => d.effects.forEach((e) => pending.push(...factsFor(e, behaviour, now)));
  take(first);
  let paused = false;
  let idleTicks = 0;
  for (let step = 0; step < maxSteps && journal.status === "running"; step++) {
    let input: LeafInput | undefined;
    if (delivered.length > 0 && rand() < chaos.duplicate) input = delivered[Math.floor(rand() * delivered.length)];
    else if (pending.length > 0) {
      const at = rand() < chaos.reorder ? Math.floor(rand() * pending.length) : 0;
      input = pending.splice(at, 1)[0];
    } else if (rand() < chaos.pause) {
      input = { kind: "command", command: paused ? "resume" : "pause", actor: "octocat" };
      paused = !paused;
    } else if (paused) {
      input = { kind: "command", command: "resume", actor: "octocat" };
      paused = false;
    } else {
      input = people(journal);
      if (!input) {
        now += 60_000;
        input = { kind: "tick" };
      }
    }
    delivered.push(input!);
    log.push({ input: input!, at: now });
    const d = decide(deepFreeze(journal), input!, now, config);
    check(journal, d, config.max_parallel_agents);
    // A run held by fatal exits can go no further: stop once an hour of ticks changed nothing.
    idleTicks = input!.kind === "tick" && d.events.length === 0 ? idleTicks + 1 : 0;
    if (idleTicks > 60) break;
    decisions.push(d);
    journal = d.journal;
    take(d);
  }
  return { journal, log, decisions, first };
}

const dispatched = new Set<string>();

/** Freeze a journal all the way down: `decide` must never write to the journal it was given. */
function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

function isPaused(j: Journal, now: number): boolean {
  return (
    j.pause.manual ||
    j.pause.changeRequests.length > 0 ||
    (j.pause.usageLimitUntil !== undefined && Date.parse(j.pause.usageLimitUntil) > now)
  );
}

/** The invariants every single decision must keep. */
function check(before: Journal, d: Decision, maxParallel: number): void {
  const after = d.journal;
  // 1. No invalid transition is ever applied.
  for (const t of d.transitions) expect(isValidTransition(t.from, t.to), `${t.taskId} ${t.from}→${t.to}`).toBe(true);
  // 2. No (task, attempt) is dispatched twice, and never while an earlier attempt is live.
  for (const e of d.effects) {
    if (e.kind !== "DispatchAgent") continue;
    const key = `${after.runId}:${e.taskId}:${e.attempt}`;
    expect(dispatched.has(key), `dispatched twice: ${key}`).toBe(false);
    dispatched.add(key);
    const prev = before.tasks.find((t) => t.id === e.taskId)!;
    expect(
      prev.status,
      `${key} dispatched while ${prev.status} (attempt ${prev.attempt}); transitions ${JSON.stringify(d.transitions)}`,
    ).not.toBe("RUNNING");
  }
  // 3. No task starts before its dependencies are MERGED (MERGE_READY or MERGED for a refinery),
  //    checked against the plan itself rather than the reducer's counters.
  const statusOf = new Map(after.tasks.map((t) => [t.id, t.status]));
  for (const t of d.transitions) {
    if (t.to !== "RUNNING") continue;
    const node = after.plan.nodes.find((n) => n.id === t.taskId)!;
    for (const dep of node.dependencies) {
      const st = statusOf.get(dep);
      expect(st === "MERGED" || (node.kind === "refinery" && st === "MERGE_READY"), `${t.taskId} started while ${dep} was ${st}`).toBe(
        true,
      );
    }
  }
  // 4. A paused run spawns nothing.
  const now = d.events[0] ? Date.parse(d.events[0].timestamp) : Number.NaN;
  if (!Number.isNaN(now) && isPaused(after, now))
    expect(d.effects.filter((e) => e.kind === "DispatchAgent" || e.kind === "SpawnFollowup")).toEqual([]);
  // 5. A completed run has every node MERGED.
  if (after.status === "completed") expect(after.tasks.every((t) => t.status === "MERGED")).toBe(true);
  // 6. Events are numbered gap-free.
  d.events.forEach((e, k) => expect(e.seq).toBe(before.seq + k + 1));
  expect(after.seq).toBe(before.seq + d.events.length);
  // 7. The parallelism cap holds, and the incremental counters agree with a recount.
  const running = after.tasks.filter((t) => t.status === "RUNNING").length + after.followups.filter((f) => f.status === "running").length;
  expect(running).toBeLessThanOrEqual(Math.max(maxParallel, before.tasks.filter((t) => t.status === "RUNNING").length));
  expect(after.merged).toBe(after.tasks.filter((t) => t.status === "MERGED").length);
  // 8. The incrementally kept indexes (ready set in dispatch order, tasks in flight, running) agree with a recount…
  const kept = derivedOf(after);
  const fresh = computeDerived(after.tasks, after.plan.nodes);
  expect([...kept.ready]).toEqual([...fresh.ready]);
  expect([...kept.inFlight].sort((a, b) => a - b)).toEqual([...fresh.inFlight].sort((a, b) => a - b));
  expect([...kept.running].sort((a, b) => a - b)).toEqual([...fresh.running].sort((a, b) => a - b));
  // …and so do the blockers with the ready set computed from scratch.
  const { deps, isRefinery } = planIndex(after.plan);
  after.tasks.forEach((t, i) => {
    const open = deps[i]!.filter(
      (d) => !(after.tasks[d]!.status === "MERGED" || (isRefinery[i] && after.tasks[d]!.status === "MERGE_READY")),
    ).length;
    expect(t.blockers, `blockers of ${t.id}`).toBe(open);
  });
  const far = 1e15;
  expect(readySet(after, far)).toEqual(
    after.tasks
      .filter((t) => t.status === "PENDING" && t.blockers === 0)
      .map((t) => t.id)
      .sort((a, b) => {
        const na = after.plan.nodes.find((n) => n.id === a)!;
        const nb = after.plan.nodes.find((n) => n.id === b)!;
        return nb.priority - na.priority || after.tasks.findIndex((t) => t.id === a) - after.tasks.findIndex((t) => t.id === b);
      }),
  );
}

function replay(
  first: Decision,
  log: Drive["log"],
  config: ReturnType<typeof forgeConfigSchema.parse>,
): { journal: Journal; events: string } {
  let j = first.journal;
  const events: unknown[] = [...first.events];
  for (const { input, at } of log) {
    const d = decide(j, input, at, config);
    events.push(...d.events);
    j = d.journal;
  }
  return { journal: j, events: JSON.stringify(events) };
}

describe("executor properties", () => {
  it("keeps every invariant under duplicated and reordered inputs, with pauses and fatal exits", () => {
    fc.assert(
      fc.property(dagArb, configArb, fc.integer(), fc.integer(), (nodes, over, behaviourSeed, orderSeed) => {
        const config = forgeConfigSchema.parse(over);
        dispatched.clear();
        drive(nodes, config, behaviourFrom(behaviourSeed, true), orderSeed, { reorder: 0.5, duplicate: 0.2, pause: 0.05 });
      }),
      { numRuns: 60 },
    );
  }, 120_000);

  it("completes every run whose agents eventually succeed — whatever the delivery order — with every node MERGED", () => {
    fc.assert(
      fc.property(dagArb, configArb, fc.integer(), fc.integer(), (nodes, over, behaviourSeed, orderSeed) => {
        const config = forgeConfigSchema.parse(over);
        dispatched.clear();
        const { journal } = drive(
          nodes,
          config,
          behaviourFrom(behaviourSeed, false),
          orderSeed,
          { reorder: 0.5, duplicate: 0.2, pause: 0.02 },
          20_000,
        );
        expect(
          journal.status,
          JSON.stringify({
            tasks: journal.tasks.filter((t) => t.status !== "MERGED"),
            pause: journal.pause,
            followups: journal.followups,
            outbox: journal.outbox.map((e) => e.key),
          }),
        ).toBe("completed");
        expect(journal.tasks.every((t) => t.status === "MERGED")).toBe(true);
      }),
      { numRuns: 60 },
    );
  }, 120_000);

  it("the same input sequence always yields the same journal and events", () => {
    fc.assert(
      fc.property(dagArb, configArb, fc.integer(), fc.integer(), (nodes, over, behaviourSeed, orderSeed) => {
        const config = forgeConfigSchema.parse(over);
        dispatched.clear();
        const run = drive(nodes, config, behaviourFrom(behaviourSeed, true), orderSeed, { reorder: 0.5, duplicate: 0.2, pause: 0.05 });
        const again = replay(run.first, run.log, config);
        const events = JSON.stringify([...run.decisions.flatMap((d) => d.events)]);
        expect(again.journal).toEqual(run.journal);
        expect(again.events).toBe(events);
        // And from a journal that went through JSON (as persisted on GitHub).
        const persisted = replay(JSON.parse(JSON.stringify(run.first)) as Decision, run.log, config);
        expect(persisted.journal).toEqual(run.journal);
      }),
      { numRuns: 30 },
    );
  }, 120_000);
});
