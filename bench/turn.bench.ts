/**
 * The App's own work per turn, split by phase, at 100, 1,000 and 10,000 tasks: what one fact costs
 * the process that runs the engine, and whether it grows with the plan.
 *
 * A generated plan (three edges per task) is driven through the core to a mid-run state (a third
 * merged, the rest running or waiting), held as the App holds it (a stored run, its journal in parts
 * past `SPLIT_AT` nodes). Then the phases of one turn of `Engine` (src/app/engine/) and what it
 * starts are timed in-process, without I/O, for three typical facts: an effect's acknowledgement
 * (the most frequent turn: nothing to persist), an agent's result (with review) and a merge.
 *
 *   decide      `decide()` (src/core)
 *   unchanged   the engine's check that a decision with nothing to persist changed the journal
 *   leases      `withLeases` over the outbox
 *   split       `splitRun` against the parts last written (src/core/journal-parts.ts)
 *   seal        `journal.json`'s text: JSON of the live journal + HMAC (src/app/journal-seal.ts)
 *   launch      the outbox scan of `#launch` (pending, free, owned)
 *   tracker     `renderTracker` (once per 5 s at most: debounced; shown for its size)
 *
 * Run: `npm run bench:turn` (`BENCH_TURN_SIZES=100,1000` for other sizes). Prints medians (ms).
 */
import { loadavg } from "node:os";
import { decide, startRun } from "../src/core/decide/index.js";
import type { Effect } from "../src/core/effects.js";
import type { LeafInput } from "../src/core/inputs.js";
import type { Journal } from "../src/core/journal.js";
import { splitRun, isSplit, type PartsBase } from "../src/core/journal-parts.js";
import { defaultConfig, type ForgeConfig } from "../src/core/schemas/config.js";
import type { ForgeEvent } from "../src/core/schemas/events.js";
import { journalKeyFromSecret, sealJournal } from "../src/app/journal-seal.js";
import { isFree, owns, withLeases, type LeaseHolder } from "../src/app/leases.js";
import { renderTracker } from "../src/app/render.js";
import { newStoredRun, type StoredRun } from "../src/app/run-store.js";
import { journalUnchanged } from "../src/app/engine/index.js";
import { generateDag } from "../test/helpers/gen-plan.js";
import { factsFor, midRunInputs, newRun } from "../test/helpers/world.js";

const SIZES = (process.env.BENCH_TURN_SIZES ?? "100,1000,10000").split(",").map(Number);
const KEY = journalKeyFromSecret("x".repeat(32));
const REPO = { owner: "acme", repo: "widgets", webUrl: "https://github.com" };
const PHASES = ["decide", "unchanged", "leases", "split", "seal", "launch", "tracker"] as const;
type Phase = (typeof PHASES)[number];

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** A run of `n` tasks driven to a third merged; the inputs still queued for it. */
function midRun(n: number, config: ForgeConfig): { journal: Journal; events: ForgeEvent[]; queue: LeafInput[] } {
  const dag = generateDag(n, 3 * n, 7);
  const nodes = dag.nodes.map((x) => ({ id: x.id, kind: x.type, agentType: x.agentType, dependencies: x.dependencies }));
  let d = startRun(newRun(nodes), 0, config);
  let journal = d.journal;
  const events: ForgeEvent[] = [...d.events];
  const queue: LeafInput[] = [];
  const enqueue = () => d.effects.forEach((e) => queue.push(...factsFor(e, () => ({ kind: "success" }), 0)));
  enqueue();
  while (journal.merged < n / 3 && queue.length > 0) {
    d = decide(journal, queue.shift()!, 1000, config);
    journal = d.journal;
    events.push(...d.events);
    enqueue();
  }
  return { journal, events: events.slice(-150), queue };
}

/** The facts a turn typically brings, found on the mid-run journal. */
function typicalFacts(journal: Journal, queue: LeafInput[]): Record<string, LeafInput> {
  const ack = queue.find((i) => i.kind === "effect.done") ?? { kind: "effect.done", key: journal.outbox[0]!.key, result: {} };
  const { merge, finished } = midRunInputs(journal);
  return { "effect ack": ack, "agent result": finished, merge };
}

function time(fn: () => unknown): number {
  const t0 = performance.now();
  fn();
  return performance.now() - t0;
}

/** One turn of the engine on `input`, phase by phase (ms). */
function turn(
  stored: StoredRun,
  base: PartsBase | undefined,
  input: LeafInput,
  config: ForgeConfig,
  me: LeaseHolder,
): Record<Phase, number> {
  const out = {} as Record<Phase, number>;
  let d!: ReturnType<typeof decide>;
  out.decide = time(() => (d = decide(stored.journal, input, 2000, config)));
  const next: StoredRun = { ...stored, journal: d.journal, events: { ...stored.events, tail: [...stored.events.tail, ...d.events] } };
  const mustPersist = d.events.length > 0 || d.effects.length > 0 || d.transitions.length > 0;
  out.unchanged = mustPersist ? 0 : time(() => journalUnchanged(stored.journal, d.journal));
  let leased = next;
  out.leases = time(() => (leased = withLeases(next, d.effects, [], me)));
  let onDisk: object = leased;
  out.split = 0;
  if (mustPersist && isSplit(leased.journal.plan.nodes.length)) {
    out.split = time(() => {
      const s = splitRun({ nodes: leased.journal.plan.nodes, tasks: leased.journal.tasks, checkRuns: leased.facts.checkRuns }, base);
      onDisk = {
        ...leased,
        journal: { ...leased.journal, plan: { ...leased.journal.plan, nodes: s.live.nodes }, tasks: s.live.tasks },
        facts: { ...leased.facts, checkRuns: s.live.checkRuns },
        split: s.split,
      };
    });
  }
  out.seal = mustPersist ? time(() => sealJournal(KEY, onDisk, { repositoryId: 1, runId: leased.journal.runId })) : 0;
  out.launch = time(() => {
    const running = new Set<string>();
    const deferred = new Map<string, string>();
    const pending = leased.journal.outbox.filter((e: Effect) => !running.has(e.key) && deferred.get(e.key) !== JSON.stringify(e));
    pending.filter((e) => isFree(leased, e.key, me));
    pending.filter((e) => owns(leased, e.key, me));
  });
  out.tracker = time(() => renderTracker(leased.journal, leased.events.tail, leased.facts, REPO, 0, config));
  return out;
}

const config = { ...defaultConfig(), merge_policy: "auto" } as ForgeConfig;
const me: LeaseHolder = { replicaId: "bench", leaseMs: 20_000, now: 2000 };
const load = loadavg();
const table = new Map<string, Map<number, Record<Phase, number>>>();
for (const n of SIZES) {
  const t0 = performance.now();
  const { journal, events, queue } = midRun(n, config);
  const checkRuns: Record<string, number> = {};
  journal.tasks.forEach((t, i) => t.status !== "PENDING" && (checkRuns[`${t.id}:${t.attempts}`] = 5000 + i));
  const stored = withLeases(newStoredRun(journal, config, { checkRuns, trackerIssue: 1 }, events), journal.outbox, [], me);
  const base = isSplit(n)
    ? splitRun({ nodes: journal.plan.nodes, tasks: journal.tasks, checkRuns: stored.facts.checkRuns }, undefined).base
    : undefined;
  const running = journal.tasks.filter((t) => t.status === "RUNNING").length;
  console.error(
    `${n} tasks: ${journal.merged} merged, ${running} running, outbox ${journal.outbox.length} (built in ${((performance.now() - t0) / 1000).toFixed(1)} s)`,
  );
  for (const [name, input] of Object.entries(typicalFacts(journal, queue))) {
    const runs = n >= 10_000 ? 25 : 101;
    for (let k = 0; k < 5; k++) turn(stored, base, input, config, me);
    const samples = Array.from({ length: runs }, () => turn(stored, base, input, config, me));
    const med = Object.fromEntries(PHASES.map((p) => [p, median(samples.map((s) => s[p]))])) as Record<Phase, number>;
    if (!table.has(name)) table.set(name, new Map());
    table.get(name)!.set(n, med);
  }
}

const fmt = (ms: number) => (ms >= 10 ? ms.toFixed(1) : ms >= 0.1 ? ms.toFixed(2) : ms.toFixed(3));
console.log(
  `The App's work per turn by phase, medians in ms (plans of ${SIZES.join(", ")} tasks, a third merged); load average ${load
    .map((l) => l.toFixed(2))
    .join(" ")} → ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`,
);
const first = SIZES[0]!;
const last = SIZES[SIZES.length - 1]!;
for (const [name, bySize] of table) {
  console.log("");
  console.log(`**${name}**`);
  console.log("");
  console.log(`| phase | ${SIZES.map((n) => `${n.toLocaleString("en-US")} tasks`).join(" | ")} | ratio ${last}/${first} |`);
  console.log(`|---|${SIZES.map(() => "---:").join("|")}|---:|`);
  for (const p of [...PHASES, "total (without tracker)"] as const) {
    const v = (n: number) => {
      const m = bySize.get(n)!;
      return p === "total (without tracker)" ? PHASES.filter((q) => q !== "tracker").reduce((s, q) => s + m[q], 0) : m[p];
    };
    const ratio = v(first) > 0 ? (v(last) / v(first)).toFixed(1) : "–";
    console.log(`| ${p} | ${SIZES.map((n) => fmt(v(n))).join(" | ")} | ${ratio} |`);
  }
}
