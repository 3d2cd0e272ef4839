/**
 * One run of a plan through the App on the local GitHub, traced for `npm run bench:app`'s third
 * figure (bench/app.bench.ts): its makespan, each task's phases, occupancy against the cap, the run's
 * chain (one writer per run) and the App's calls.
 */
import { loadavg } from "node:os";
import { FULL, startHarness, type Harness } from "../../test/app/helpers.js";
import type { Clock } from "../../src/core/clock.js";
import { Engine } from "../../src/app/engine/index.js";
import type { Journal } from "../../src/core/journal.js";
import { TRAILERS } from "../../src/core/layout.js";
import type { SimOptions } from "../../src/local-github/server.js";
import { processTreeCpuMs } from "./proc-cpu.js";

/** Calls `fn` after every persisted decision, with the time it was made known (performance.now()). */
function observe(h: Harness, fn: (j: Journal, d: Harness["decisions"][number]["d"], at: number) => void): void {
  h.waitFor(
    (j) => {
      fn(j, h.decisions[h.decisions.length - 1]!.d, performance.now());
      return false;
    },
    2 ** 31 - 1,
  ).catch(() => undefined);
}

/**
 * The engine serialises the work of one run (a promise chain per run): every entry into it is timed
 * here, by wrapping the four public methods that enter the chain, so that the bench can tell how
 * much of the run the chain was busy and how long work waited to enter it. Measurement only.
 */
const chainCalls: { method: string; enqueued: number; done: number }[] = [];
export function instrumentChain(): void {
  for (const method of ["start", "apply", "flush", "state"] as const) {
    const original = Engine.prototype[method] as (...args: unknown[]) => Promise<unknown>;
    (Engine.prototype as unknown as Record<string, unknown>)[method] = function (this: Engine, ...args: unknown[]) {
      const enqueued = performance.now();
      const result = original.apply(this, args);
      const record = () => void chainCalls.push({ method, enqueued, done: performance.now() });
      result.then(record, record);
      return result;
    };
  }
}

/** Busy time of the run's chain within [from, to], and the waits to enter it (FIFO: an entry is served once the previous one is done). */
function chainBusy(
  calls: typeof chainCalls,
  from: number,
  to: number,
): { busy: number; waits: number[]; services: number[]; depths: number[]; entries: Record<string, number> } {
  const sorted = [...calls].sort((a, b) => a.done - b.done);
  let previous = -Infinity;
  let busy = 0;
  const waits: number[] = [];
  const services: number[] = [];
  const depths: number[] = [];
  const entries: Record<string, number> = {};
  for (const [i, c] of sorted.entries()) {
    const begin = Math.max(c.enqueued, previous);
    previous = c.done;
    // Entries already waiting when this one is served: what one batch decision could have taken with it.
    let waiting = 0;
    for (let k = i + 1; k < sorted.length && sorted[k]!.enqueued <= begin; k++) waiting++;
    if (c.enqueued >= from && c.done <= to) depths.push(waiting);
    busy += Math.max(0, Math.min(c.done, to) - Math.max(begin, from));
    if (c.enqueued >= from && c.done <= to) {
      waits.push(begin - c.enqueued);
      services.push(c.done - begin);
      entries[c.method] = (entries[c.method] ?? 0) + 1;
    }
  }
  return { busy, waits, services, depths, entries };
}

export interface RunTrace {
  /** From the run's first decision (run started, first dispatches) to the decision that completes it. */
  makespanMs: number;
  /** From the plan's push to main to run.completed (adds reading the plan and creating the run). */
  fromPushMs: number;
  tasks: number;
  decisions: number;
  journalWrites: number;
  casConflicts: number;
  appCalls: number;
  /** Per task: dispatch decided → its job starts on a runner (GitHub's runner queue included) → the runner pushes the record commit → agent done in the journal → merge-ready → merged. */
  phases: {
    decidedToDispatched: number[];
    dispatchedToRecordPushed: number[];
    recordPushedToDone: number[];
    doneToMergeReady: number[];
    mergeReadyToMerged: number[];
    decidedToMerged: number[];
  };
  /** Event-loop utilisation of the one process that runs the local GitHub, the App and the runner. */
  eventLoopUtilization: number;
  /** CPU used meanwhile by the bench's processes (the local GitHub and its git, the App, the runner), null without /proc. */
  treeCpuMs: number | null;
  /** Median duration of the App's GitHub calls. */
  appCallMs: number;
  /** Share of the makespan the run's chain (one writer per run) was busy; entries into it, median wait to enter and time inside. */
  chainBusy: number;
  chainEntries: Record<string, number>;
  chainWaitMs: number;
  chainServiceMs: number;
  /** Mean number of entries already waiting when one entry into the chain is served. */
  chainQueueDepth: number;
  /** Share of the makespan spent waiting on the journal's compare-and-swap writes (made inside the chain, one at a time). */
  journalWriteShare: number;
  /** Longest time from a dispatch decided to its job starting on a runner. */
  decidedToDispatchedMaxMs: number;
  /** Time-weighted mean of RUNNING tasks (the cap counts these), and of RUNNING + DONE + MERGE_READY. */
  meanRunning: number;
  meanInFlight: number;
  /** Share of the makespan with the cap of tasks RUNNING, and with a free slot while a task was ready (journal view). */
  atCap: number;
  readyWithFreeSlot: number;
}

/** How the bench runs a plan: the App's config, the local GitHub's options, the pace, the cap, the time limit. */
export interface TraceSettings {
  /** Lines added to `.github/forge.yml` (merge_policy auto is always set). */
  config: string;
  sim: (seed: number) => SimOptions;
  /** Forge's pace (off with the latency off) and the real clock: the bench measures real time. */
  pace: { pace?: false; clock?: Clock };
  /** max_parallel_agents in force. */
  cap: number;
  timeoutMs: number;
  /** Print each run's calls and makespan on stderr. */
  verbose: boolean;
}

/** Runs the plan in `files` on a fresh local GitHub with zero-time agents and measures it (see RunTrace). */
export async function traceRun(files: Record<string, string>, label: string, seed: number, settings: TraceSettings): Promise<RunTrace> {
  const { cap } = settings;
  const requests: { route: string; start: number; end: number; status?: number }[] = [];
  chainCalls.length = 0;
  const h = await startHarness(() => ({ kind: "success" }), {
    config: `merge_policy: auto\n${settings.config}`,
    sim: settings.sim(seed),
    ...settings.pace,
    onRequest: (r) => requests.push(r),
  });
  const dispatchedAt = new Map<string, number>();
  h.sim.onWorkflowDispatch((d) => {
    dispatchedAt.set(`${d.inputs.task_id}/${d.inputs.attempt}`, performance.now());
    h.runner.handler(d);
  });
  const recordPushedAt = new Map<string, number>();
  h.sim.onEvent((e) => {
    if (e.event !== "push") return;
    const p = e.payload as { ref?: string; head_commit?: { message?: string } | null };
    const m = /^refs\/heads\/forge\/[^/]+\/([^/_][^/]*)\/(\d+)$/.exec(p.ref ?? "");
    if (m && p.head_commit?.message?.includes(`${TRAILERS.task}:`)) recordPushedAt.set(`${m[1]}/${m[2]}`, performance.now());
  });
  const at = new Map<string, Partial<Record<"RUNNING" | "DONE" | "MERGE_READY" | "MERGED", number>>>();
  const samples: { at: number; running: number; inFlight: number; ready: number }[] = [];
  let started: number | undefined;
  let completed: number | undefined;
  observe(h, (j, d, now) => {
    started ??= now;
    for (const t of d.transitions) {
      if (t.to !== "RUNNING" && t.to !== "DONE" && t.to !== "MERGE_READY" && t.to !== "MERGED") continue;
      const k = `${t.taskId}/${t.attempt}`;
      const rec = at.get(k) ?? {};
      rec[t.to] ??= now;
      at.set(k, rec);
    }
    let running = 0;
    let inFlight = 0;
    let ready = 0;
    for (const t of j.tasks) {
      if (t.status === "RUNNING") running++;
      if (t.status === "RUNNING" || t.status === "DONE" || t.status === "MERGE_READY") inFlight++;
      if (t.status === "PENDING" && t.blockers === 0) ready++;
    }
    samples.push({ at: now, running, inFlight, ready });
    if (j.status === "completed") completed ??= now;
  });
  try {
    const pushed = performance.now();
    const elu0 = performance.eventLoopUtilization();
    const cpu0 = processTreeCpuMs();
    await h.pushFiles(files, "Add the plan");
    const j = await h.waitFor((x) => x.status === "completed", settings.timeoutMs);
    const end = completed ?? performance.now();
    const elu = performance.eventLoopUtilization(elu0).utilization;
    const cpu1 = processTreeCpuMs();
    const begin = started!;
    await h.app.forge.idle();
    const stats = h.app.forge.runtimes.get(FULL)!.stats;
    // Time-weighted occupancy between the run's start and its completion.
    let wRunning = 0;
    let wInFlight = 0;
    let wCap = 0;
    let wIdle = 0;
    for (let i = 0; i < samples.length; i++) {
      const s = samples[i]!;
      const until = Math.min(samples[i + 1]?.at ?? end, end);
      const dt = Math.max(0, until - Math.max(s.at, begin));
      wRunning += s.running * dt;
      wInFlight += s.inFlight * dt;
      if (s.running >= cap) wCap += dt;
      if (s.running < cap && s.ready > 0) wIdle += dt;
    }
    const span = end - begin;
    const chainUse = chainBusy(chainCalls, begin, end);
    const phases: RunTrace["phases"] = {
      decidedToDispatched: [],
      dispatchedToRecordPushed: [],
      recordPushedToDone: [],
      doneToMergeReady: [],
      mergeReadyToMerged: [],
      decidedToMerged: [],
    };
    for (const [k, r] of at) {
      const sent = dispatchedAt.get(k);
      if (r.RUNNING !== undefined && sent !== undefined) phases.decidedToDispatched.push(sent - r.RUNNING);
      const recorded = recordPushedAt.get(k);
      if (sent !== undefined && recorded !== undefined) phases.dispatchedToRecordPushed.push(recorded - sent);
      if (recorded !== undefined && r.DONE !== undefined) phases.recordPushedToDone.push(r.DONE - recorded);
      if (r.DONE !== undefined && r.MERGE_READY !== undefined) phases.doneToMergeReady.push(r.MERGE_READY - r.DONE);
      if (r.MERGE_READY !== undefined && r.MERGED !== undefined) phases.mergeReadyToMerged.push(r.MERGED - r.MERGE_READY);
      if (r.RUNNING !== undefined && r.MERGED !== undefined) phases.decidedToMerged.push(r.MERGED - r.RUNNING);
    }
    const writes = requests.filter((r) => r.route.startsWith("PUT ") && r.route.includes("/contents/"));
    const trace: RunTrace = {
      makespanMs: span,
      fromPushMs: end - pushed,
      tasks: j.tasks.length,
      decisions: h.decisions.length,
      journalWrites: writes.length,
      casConflicts: writes.filter((r) => r.status === 409 || r.status === 422).length,
      appCalls: stats.reads + stats.writes,
      phases,
      eventLoopUtilization: elu,
      treeCpuMs: cpu0 === null || cpu1 === null ? null : cpu1 - cpu0,
      chainBusy: chainUse.busy / span,
      journalWriteShare: writes.filter((r) => r.start >= begin && r.end <= end).reduce((sum, r) => sum + r.end - r.start, 0) / span,
      decidedToDispatchedMaxMs: Math.max(...phases.decidedToDispatched),
      chainEntries: chainUse.entries,
      chainWaitMs: median(chainUse.waits),
      chainServiceMs: median(chainUse.services),
      chainQueueDepth: chainUse.depths.reduce((a, b) => a + b, 0) / Math.max(1, chainUse.depths.length),
      appCallMs: median(requests.filter((r) => r.start >= begin && r.end <= end).map((r) => r.end - r.start)),
      meanRunning: wRunning / span,
      meanInFlight: wInFlight / span,
      atCap: wCap / span,
      readyWithFreeSlot: wIdle / span,
    };
    if (settings.verbose) {
      // The App's calls per task by route (ids, shas, part hashes and task branches folded), and content-creating ones.
      const routes = new Map<string, number>();
      for (const { route } of requests) {
        const n = 1;
        const r = route
          .replace(/(gen-\d+-\d+-\d+|chain)-[0-9a-f]{7}/g, "{run}")
          .replace(/\/contents\/[^?]*\/(t\d{5})\/\d+\//, "/contents/{result of a task}/")
          .replace(/tasks%2F[^/?]+\.md/, "tasks%2F{task}.md")
          .replace(/[0-9a-f]{40,64}/g, "{sha}")
          .replace(/\/\d+(?=\/|$)/g, "/{n}")
          .replace(/forge(%2F|\/)[^/]+?(%2F|\/)t\d+(%2F|\/)\d+/g, "{task branch}")
          .replace(/t\d{5}/g, "{task}");
        routes.set(r, (routes.get(r) ?? 0) + n);
      }
      const per = (n: number) => (n / j.tasks.length).toFixed(2);
      console.error(
        `  ${label}: App calls per task ${per(stats.reads + stats.writes)} (reads ${per(stats.reads)}, writes ${per(stats.writes)}, content-creating ${per(stats.contentCreating)})`,
      );
      for (const [r, n] of [...routes].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.error(`    ${per(n)}  ${r}`);
    }
    if (settings.verbose)
      console.error(
        `  ${label}: makespan ${(span / 1000).toFixed(2)} s (${j.tasks.length} tasks, ${trace.decisions} decisions, ${trace.journalWrites} journal writes, ${trace.casConflicts} lost CAS; load ${loadavg()
          .map((x) => x.toFixed(2))
          .join(" ")})`,
      );
    return trace;
  } finally {
    await h.close();
  }
}

export function median(xs: number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
