/**
 * What the App's handlers share, named in one object: the repositories it serves (their runtimes),
 * the deliveries it has handled, the webhooks still being handled in the background, and the reads
 * and writes every handler needs — a repository's config and runs, the attempt a branch belongs
 * to, and applying inputs to a run.
 */
import type { Context, Probot } from "probot";
import { realClock, type Clock } from "../core/clock.js";
import type { LeafInput } from "../core/inputs.js";
import type { ForgeConfig } from "../core/schemas/config.js";
import { defaultConfig } from "../core/schemas/config.js";
import { Deliveries } from "./deliveries.js";
import { silentLogger, type ApplyResult, type Logger } from "./engine/index.js";
import { branchParser, isFollowupId, parseFollowupBranch, type AttemptRef } from "../core/layout.js";
import { attemptOnBranch } from "../core/task-rules.js";
import type { SealedAppOptions } from "./options.js";
import { readConfig } from "./plan-source.js";
import { createRuntime, type RepoRuntime } from "./runtime.js";
import { LaterReads } from "./later-reads.js";
import { finalPrRecorded } from "./final-auto-merge.js";

/**
 * How long a repository's config is used before it is read again. A push to the default branch
 * drops it at once (`onPush`), so this only bounds what a replica that did not receive that push
 * (or a lost push webhook) keeps: the file changes rarely, and a run pins its own copy.
 */
export const CONFIG_TTL_MS = 10 * 60_000;

/**
 * How long the App waits, after a job's completion arrives before the push of its result, for that
 * push: webhooks come in no order, a few seconds apart (3 s at GitHub's 90th percentile; the one in
 * twenty that is a minute or two late is not waited for — the branch is read instead, and the
 * reconciler finds what no webhook said: src/local-github/latency/README.md).
 */
export const JOB_END_GRACE_MS = 10_000;

/** The logger Probot gives a webhook's handling. */
export const logOf = (context: Context): Logger => context.log as unknown as Logger;

export class AppContext {
  /** The repositories the App serves, by `owner/repo`. */
  readonly runtimes = new Map<string, RepoRuntime>();
  readonly deliveries = new Deliveries();
  /** Work in the background: webhooks being handled, reads put off, the reconciler's sweeps. */
  readonly inFlight = new Set<Promise<void>>();
  readonly clock: Clock;
  readonly now: () => number;
  /** The Probot instance that loaded the App: none before it does. */
  probot: Probot | undefined;
  /** The App's slug, once GitHub told it. */
  slug: string | undefined;

  /** Reads put off until a webhook that usually follows has had its chance (a job's result after its completion). */
  readonly laterReads: LaterReads;

  /**
   * Installations deleted while this process ran: their tokens are dead (GitHub answers 401), so a
   * webhook of theirs still on its way is not acted on and no runtime is made for them again. An
   * installation made again has a new id.
   */
  readonly removed = new Set<number>();

  constructor(readonly options: SealedAppOptions) {
    const clock = options.clock ?? realClock;
    this.clock = clock;
    this.now = () => clock.now();
    const graceMs = options.jobEndGraceMs ?? (options.background === false ? 0 : JOB_END_GRACE_MS);
    this.laterReads = new LaterReads(graceMs, () => this.log, clock, this.inFlight);
  }

  /** The App's own logger (Probot's), for work no webhook started. */
  get log(): Logger {
    return this.probot ? (this.probot.log as unknown as Logger) : silentLogger;
  }

  /** The runtime of a repository, made on first use. */
  async runtimeFor(owner: string, repo: string, installationId: number, log: Logger, repositoryId?: number): Promise<RepoRuntime> {
    const key = `${owner}/${repo}`;
    let rt = this.runtimes.get(key);
    // Installed again (a new installation id): the old installation's tokens are gone with it.
    if (rt && installationId && rt.installationId !== installationId) {
      this.forget(key);
      rt = undefined;
    }
    if (!rt) {
      rt = await createRuntime(this.probot!, owner, repo, installationId, log, this.options, this.clock, (of, runId, facts) => {
        // The final PR recorded: an approval that came before is looked for now.
        if (facts.finalPr !== undefined) finalPrRecorded(this, of, runId);
      });
      this.runtimes.set(key, rt);
    }
    // A signed webhook's (or the installation's list's) word for the id the journal's seal binds.
    if (typeof repositoryId === "number") rt.port.knowRepositoryId?.(repositoryId);
    return rt;
  }

  /** The runtime of the repository a webhook is about. */
  rtOf(context: Context): Promise<RepoRuntime> {
    const payload = context.payload as {
      repository?: { id?: number; owner?: { login?: string } | null; name?: string };
      installation?: { id: number };
    };
    const owner = payload.repository?.owner?.login ?? "";
    const repo = payload.repository?.name ?? "";
    return this.runtimeFor(owner, repo, payload.installation?.id ?? 0, logOf(context), payload.repository?.id);
  }

  /** Stop serving a repository (no installation holds it any more): its engine stops, its reads put off are dropped. */
  forget(key: string): void {
    this.runtimes.get(key)?.engine.stop();
    this.runtimes.delete(key);
    this.laterReads.cancel(`${key}:`);
  }

  /** The repository's config on its default branch (read again after a push there, or after `CONFIG_TTL_MS`), or the defaults. */
  async configOf(rt: RepoRuntime): Promise<ForgeConfig> {
    if (rt.config && this.now() - rt.config.at < CONFIG_TTL_MS) return rt.config.value;
    const read = await readConfig(rt.port, await rt.port.defaultBranch());
    const value = read.ok ? read.config : defaultConfig();
    rt.config = { value, at: this.now() };
    return value;
  }

  /** The repository's runs, read from their journals the first time and after every `runsLoaded = false`. */
  async knownRuns(rt: RepoRuntime): Promise<RepoRuntime["runs"]> {
    if (!rt.runsLoaded) {
      for (const runId of await rt.engine.listRuns()) {
        if (rt.runs.has(runId)) continue;
        const loaded = await rt.engine.state(runId);
        if (loaded) rt.runs.set(runId, { planId: loaded.state.journal.planId, status: loaded.state.journal.status });
      }
      rt.runsLoaded = true;
    }
    return rt.runs;
  }

  /** Resolves once every repository's effects are carried out and their outcomes taken (which may start more). */
  async settle(): Promise<void> {
    for (;;) {
      const busy = [...this.runtimes.values()].map((rt) => rt.engine).filter((e) => e.busy);
      if (busy.length === 0) return;
      await Promise.all(busy.map((e) => e.idle()));
    }
  }

  /** Apply inputs to a run and keep the run index fresh. */
  async apply(rt: RepoRuntime, runId: string, inputs: LeafInput[]): Promise<ApplyResult> {
    const result = await rt.engine.apply(runId, inputs);
    const last = result.decisions[result.decisions.length - 1];
    if (last) rt.runs.set(runId, { planId: last.journal.planId, status: last.journal.status });
    // A model usage limit belongs to the installation's key, not to one run: pause its other runs too.
    const limited = result.decisions
      .flatMap((d) => d.events)
      .find((e) => e.type === "run.paused" && (e.data as { reason: string }).reason === "usage_limit");
    const until = limited ? (limited.data as { until?: string }).until : undefined;
    if (until) {
      for (const other of this.runtimes.values()) {
        if (other.installationId !== rt.installationId) continue;
        for (const [otherRun, r] of other.runs) {
          if ((other === rt && otherRun === runId) || r.status !== "running") continue;
          await other.engine.apply(otherRun, [{ kind: "usage.limited", until }]);
        }
      }
    }
    return result;
  }

  /** The run, task and attempt a branch belongs to, if it is an attempt's branch. */
  async attemptOf(rt: RepoRuntime, branch: string): Promise<AttemptRef | undefined> {
    const ref = branchParser(await this.configOf(rt))(branch);
    // A resumed attempt works on the branch of the attempt it continues: the branch names that one.
    if (ref && !isFollowupId(ref.taskId)) {
      const journal = (await rt.engine.state(ref.runId).catch(() => null))?.state.journal;
      return attemptOnBranch(journal, ref, branch);
    }
    if (ref) return ref;
    // Follow-ups: forge/<runId>/_followup-<n>/1 whatever the template.
    return parseFollowupBranch(branch);
  }
}
