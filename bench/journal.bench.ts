/**
 * Bytes of the run's journal per write, for plans of 100, 1,000 and 10,000 tasks: what
 * `RunStore.create` and `RunStore.save` write to `journal.json` on the state branch — the stored run
 * (journal, pinned config, facts, open event segment, leases), sealed — at the run's start, over the
 * run, and when every task has merged. The run is the pure core's (`startRun`/`decide` on a
 * generated plan, every agent succeeding at once, see test/helpers/world.ts), persisted the way the
 * engine persists it: one write per decision that has events, effects or transitions, with the
 * leases of its outbox and a check run id per attempt in its facts. Writes go through the real
 * `RunStore` (an in-memory repository stands in for GitHub), one in `stride`; the others only
 * seal their full event segments, as `save` does, without serializing.
 *
 * Run: `npm run bench:journal` (`BENCH_JOURNAL_SIZES=100,1000` for other sizes; edges are three
 * per task; `--json` prints the figures as JSON).
 */
import { loadavg } from "node:os";
import { journalKeyFromSecret } from "../src/app/journal-seal.js";
import { withLeases } from "../src/app/leases.js";
import { newStoredRun, RunStore, SEGMENT_SIZE, type Loaded, type StoredRun } from "../src/app/run-store.js";
import { decide, startRun, type Decision } from "../src/core/decide/index.js";
import type { LeafInput } from "../src/core/inputs.js";
import { isSplit } from "../src/core/journal-parts.js";
import { JOURNAL_FILE } from "../src/core/layout.js";
import { defaultConfig } from "../src/core/schemas/config.js";
import type { GitHubPort } from "../src/github/port.js";
import { generateDag } from "../test/helpers/gen-plan.js";
import { factsFor, sha } from "../test/helpers/world.js";

const SIZES = (process.env.BENCH_JOURNAL_SIZES ?? "100,1000,10000").split(",").map(Number);
const json = process.argv.includes("--json");
const KEY = journalKeyFromSecret("forge-bench-journal-key-0123456789abcdef");
/** GitHub's contents API returns a file's content inline up to this size; the blob API up to 100 MB. */
const CONTENTS_INLINE = 1_000_000;
const BLOB_LIMIT = 100_000_000;
const REPLICA = "6f1c2b0e-8d4a-4c55-9a57-3f0e5b2d7a11";
const LEASE_MS = 20_000;
/** Journal writes per task on the happy path, as the App batches facts (BENCHMARKS.md, `npm run bench:app`). */
const WRITES_PER_TASK = 2;

interface Sizes {
  journal: number[];
  segments: number[];
  parts: number[];
  /** For each part written, how many journal writes came before it. */
  partsAt: number[];
}

/** A repository that keeps nothing but the size of each file written. */
function sizingPort(sizes: Sizes): GitHubPort {
  let n = 0;
  const port = {
    owner: "octo",
    repo: "app",
    async createBranch() {
      return true;
    },
    async branchHead() {
      return sha("head");
    },
    async writeFile(_branch: string, path: string, content: string) {
      (path === JOURNAL_FILE ? sizes.journal : path.startsWith("parts/") ? sizes.parts : sizes.segments).push(Buffer.byteLength(content));
      if (path.startsWith("parts/")) sizes.partsAt.push(sizes.journal.length);
      n++;
      return { blobSha: sha(`blob${n}`), commitSha: sha(`commit${n}`) };
    },
  };
  return port as unknown as GitHubPort;
}

/** What `RunStore.save` writes, without writing it: its full, persisted event segments sealed. */
function sealedAsSaveDoes(loaded: Loaded, next: StoredRun): StoredRun {
  let state = next;
  let persisted = loaded.state.events.segment === next.events.segment ? loaded.state.events.tail.length : 0;
  while (persisted >= SEGMENT_SIZE && state.events.tail.length >= SEGMENT_SIZE) {
    state = { ...state, events: { segment: state.events.segment + 1, tail: state.events.tail.slice(SEGMENT_SIZE) } };
    persisted -= SEGMENT_SIZE;
  }
  return state;
}

const bytesOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value) ?? "");

/** Bytes of each part of a stored run, as they stand in its JSON. */
function parts(state: StoredRun): Record<string, number> {
  const { plan, tasks, outbox, ...rest } = state.journal;
  const { checkRuns, ...otherFacts } = state.facts;
  return {
    "plan (nodes: ids, titles, dependencies, paths, priorities)": bytesOf(plan),
    config: bytesOf(state.config),
    "run ids, pause, CRs, follow-ups": bytesOf(rest),
    "tasks (state of each task)": bytesOf(tasks),
    "facts: check run ids": bytesOf(checkRuns),
    "facts: other": bytesOf(otherFacts),
    "events (open segment)": bytesOf(state.events),
    "outbox + leases": bytesOf(outbox) + bytesOf(state.leases),
  };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1]!;
};

interface Row {
  tasks: number;
  edges: number;
  writes: number;
  sampled: number;
  start: number;
  done: number;
  typical: number;
  mean: number;
  largest: number;
  segmentFiles: number;
  segmentBytes: number;
  /** Bytes of the parts written with the first journal. */
  startParts: number;
  partFiles: number;
  partBytes: number;
  /** Every byte written (journal, parts, segments) per journal write. */
  amortized: number;
  partsAtStart: Record<string, number>;
  partsWhenDone: Record<string, number>;
  seconds: number;
}

async function measure(tasks: number): Promise<Row> {
  const t0 = performance.now();
  const dag = generateDag(tasks, 3 * tasks, 1);
  const edges = dag.nodes.reduce((n, x) => n + x.dependencies.length, 0);
  const config = defaultConfig();
  const runId = `${dag.planId}-${sha("plan").slice(0, 7)}`;
  // As the App reads them from the plan: titles and paths from the task files (test/helpers/gen-plan.ts).
  const nodes = dag.nodes.map((n) => ({
    id: n.id,
    kind: n.type,
    agentType: n.agentType,
    title: `Generated task ${n.id}`,
    dependencies: n.dependencies,
    paths: [`src/${n.id}.ts`],
  }));
  const sizes: Sizes = { journal: [], segments: [], parts: [], partsAt: [] };
  const store = new RunStore(sizingPort(sizes), KEY);
  let now = Date.parse("2026-01-01T00:00:00Z");
  const leased = (next: StoredRun, d: Decision) => withLeases(next, d.effects, [], { replicaId: REPLICA, leaseMs: LEASE_MS, now });

  const first = startRun(
    {
      runId,
      planId: dag.planId,
      planCommit: sha("plan"),
      dagHash: sha("dag"),
      nodes,
      integrationBranch: `forge/${runId}/_integration`,
      baseBranch: "main",
    },
    now,
    config,
  );
  const facts = { planSha: sha("plan"), trackerIssue: 4242 };
  let loaded = await store.create(leased(newStoredRun(first.journal, config, facts, first.events), first), sha("main"));
  const start = sizes.journal[0]!;
  const startParts = sizes.parts.reduce((a, b) => a + b, 0);
  const partsAtStart = parts(loaded.state);

  // A journal kept whole: one in `stride` writes is serialized (the others cost the same). A split
  // one: every write, since what a write carries depends on the writes before it.
  const stride = isSplit(tasks) ? 1 : Math.max(1, Math.ceil(tasks / 25));
  let writes = 1;
  let checkRunId = 30_000_000_000;
  const queue: LeafInput[] = [];
  const enqueue = (d: Decision) => {
    for (const e of d.effects) queue.push(...factsFor(e, () => ({ kind: "success" }), now));
  };
  enqueue(first);
  while (loaded.state.journal.status === "running") {
    const input = queue.shift() ?? { kind: "tick" };
    now += 1_000;
    const d = decide(loaded.state.journal, input, now, config);
    const state: StoredRun = {
      ...loaded.state,
      journal: d.journal,
      events: { ...loaded.state.events, tail: [...loaded.state.events.tail, ...d.events] },
    };
    // The App's check run per attempt, learned when its UpsertCheckRun effect is carried out.
    // (Added in place: every stored run of this replay shares the one map, and only the latest is written.)
    for (const e of d.effects) if (e.kind === "UpsertCheckRun") state.facts.checkRuns[`${e.taskId}:${e.attempt}`] ??= checkRunId++;
    enqueue(d);
    if (d.events.length === 0 && d.effects.length === 0 && d.transitions.length === 0) {
      loaded = { ...loaded, state };
      continue;
    }
    writes++;
    const last = d.journal.status !== "running";
    if (writes % stride === 0 || last) loaded = await store.save(loaded, leased(state, d), "forge: bench");
    else loaded = { ...loaded, state: sealedAsSaveDoes(loaded, leased(state, d)) };
  }
  return {
    tasks,
    edges,
    writes,
    sampled: sizes.journal.length,
    start,
    done: sizes.journal.at(-1)!,
    typical: median(sizes.journal),
    mean: sizes.journal.reduce((a, b) => a + b, 0) / sizes.journal.length,
    largest: Math.max(...sizes.journal),
    segmentFiles: sizes.segments.length,
    segmentBytes: sizes.segments.length ? median(sizes.segments) : 0,
    startParts,
    partFiles: sizes.parts.length,
    partBytes: sizes.parts.reduce((a, b) => a + b, 0),
    amortized:
      (sizes.journal.reduce((a, b) => a + b, 0) + sizes.parts.reduce((a, b) => a + b, 0) + sizes.segments.reduce((a, b) => a + b, 0)) /
      sizes.journal.length,
    partsAtStart,
    partsWhenDone: parts(loaded.state),
    seconds: (performance.now() - t0) / 1000,
  };
}

const rows: Row[] = [];
for (const n of SIZES) rows.push(await measure(n));

const kb = (b: number) =>
  b < 1_000_000 ? `${(b / 1000).toFixed(1)} kB` : b < 1e9 ? `${(b / 1_000_000).toFixed(2)} MB` : `${(b / 1e9).toFixed(1)} GB`;
const past = (b: number) => (b > BLOB_LIMIT ? " ✗ >100 MB" : b > CONTENTS_INLINE ? " ⚠ >1 MB" : "");
if (json) {
  console.log(JSON.stringify({ node: process.version, loadavg: loadavg(), rows }, null, 2));
} else {
  console.log(
    `Forge journal size per write — Node ${process.version}, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );
  console.log("");
  console.log(
    "| tasks | edges | bytes at start | bytes when done | typical write (median) | largest write | writes | sampled | base64 upload of a typical write |",
  );
  console.log("|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
  for (const r of rows)
    console.log(
      `| ${r.tasks.toLocaleString("en-US")} | ${r.edges.toLocaleString("en-US")} | ${r.start.toLocaleString("en-US")} (${kb(r.start)}${past(r.start)}) | ` +
        `${r.done.toLocaleString("en-US")} (${kb(r.done)}${past(r.done)}) | ${r.typical.toLocaleString("en-US")} (${kb(r.typical)}${past(r.typical)}) | ` +
        `${r.largest.toLocaleString("en-US")} (${kb(r.largest)}${past(r.largest)}) | ${r.writes.toLocaleString("en-US")} | ${r.sampled} | ${kb(Math.ceil(r.typical / 3) * 4)} |`,
    );
  console.log("");
  console.log(
    "A run past 200 tasks keeps its nodes in parts and layers beside journal.json (docs/formats.md#journal-parts): what they add, over the run —",
  );
  console.log("");
  console.log(
    "| tasks | parts written with the first journal | part and layer files written | their bytes | every byte written, per journal write |",
  );
  console.log("|---:|---:|---:|---:|---:|");
  for (const r of rows)
    console.log(
      `| ${r.tasks.toLocaleString("en-US")} | ${kb(r.startParts)} | ${r.partFiles.toLocaleString("en-US")} (${((100 * r.partFiles) / r.writes).toFixed(1)} % of the journal writes) | ${kb(r.partBytes)} | ${kb(r.amortized)} |`,
    );
  console.log("");
  const over = rows.flatMap((r) =>
    (
      [
        ["at start", r.start],
        ["when done", r.done],
        ["typical", r.typical],
      ] as const
    )
      .filter(([, b]) => b > CONTENTS_INLINE)
      .map(([when, b]) => `${r.tasks.toLocaleString("en-US")} tasks ${when} (${kb(b)})`),
  );
  console.log(
    over.length
      ? `Past 1 MB — GitHub's contents API no longer returns the content inline, so each read takes a second call (the blob API, up to 100 MB): ${over.join("; ")}.`
      : "No journal passes 1 MB: the contents API returns every one inline.",
  );
  const overBlob = rows.filter((r) => r.largest > BLOB_LIMIT);
  console.log(
    overBlob.length
      ? `Past 100 MB (the blob API's limit): ${overBlob.map((r) => r.tasks).join(", ")} tasks.`
      : "No journal comes near the blob API's 100 MB.",
  );
  console.log(
    `Journal bytes over a whole run, at the App's ${WRITES_PER_TASK} journal writes per task (BENCHMARKS.md, bench:app; this replay does not batch facts, so it writes more often) × the mean write: ` +
      rows.map((r) => `${r.tasks.toLocaleString("en-US")} tasks ${kb(WRITES_PER_TASK * r.tasks * r.mean)}`).join(", ") +
      ".",
  );
  console.log(
    `Every sealed event segment (${SEGMENT_SIZE} events) is written once, beside the journal: typically ${kb(rows[0]?.segmentBytes ?? 0)}.`,
  );
  console.log("");
  console.log("Where the bytes are (when done; at start in brackets):");
  console.log("");
  console.log(`| part | ${rows.map((r) => `${r.tasks.toLocaleString("en-US")} tasks`).join(" | ")} |`);
  console.log(`|---|${rows.map(() => "---:").join("|")}|`);
  for (const part of Object.keys(rows[0]?.partsWhenDone ?? {}))
    console.log(`| ${part} | ${rows.map((r) => `${kb(r.partsWhenDone[part]!)} (${kb(r.partsAtStart[part]!)})`).join(" | ")} |`);
  console.log("");
  console.log(`(${rows.map((r) => `${r.tasks.toLocaleString("en-US")} tasks: ${r.seconds.toFixed(1)} s`).join(", ")})`);
}
