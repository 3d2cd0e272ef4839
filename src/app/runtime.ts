/**
 * A repository the App serves: its port to GitHub (every call counted), its engine, and what the
 * App has learned of its runs and config.
 */
import type { Clock } from "../core/clock.js";
import { LABELS, stateBranch } from "../core/layout.js";
import { journalRefusedComment, trackerMarker } from "./render.js";
import type { ForgeConfig } from "../core/schemas/config.js";
import { installationPort, type AppAuth } from "../github/app-client.js";
import { newCallStats, type CallStats } from "../github/instrument.js";
import type { GitHubPort } from "../github/port.js";
import { Engine, type Logger } from "./engine/index.js";
import type { SealedAppOptions } from "./options.js";
import type { FactsPatch } from "./rounds.js";

export interface RepoRuntime {
  stats: CallStats;
  port: GitHubPort;
  engine: Engine;
  installationId: number;
  /** runId → planId and status, learned as runs are seen. */
  runs: Map<string, { planId: string; status: string }>;
  config?: { value: ForgeConfig; at: number };
  runsLoaded: boolean;
  /** Run starts and plan changes of a repository are handled one at a time. */
  planChain: Promise<unknown>;
}

/** The runtime of `owner/repo` as installation `installationId` sees it. */
export async function createRuntime(
  app: AppAuth,
  owner: string,
  repo: string,
  installationId: number,
  log: Logger,
  options: SealedAppOptions,
  clock: Clock,
  /** Told what a round of the engine's effects learned, once it is on the run's state (`EngineOptions.onLearned`). */
  onLearned?: (rt: RepoRuntime, runId: string, facts: FactsPatch) => void,
): Promise<RepoRuntime> {
  const key = `${owner}/${repo}`;
  const stats = newCallStats();
  const port = await installationPort(app, installationId, owner, repo, stats, options.onRequest, options.pace, clock);
  const engine = new Engine({
    port,
    log,
    clock,
    ...(options.replicaId !== undefined ? { replicaId: options.replicaId } : {}),
    ...(options.leaseMs !== undefined ? { leaseMs: options.leaseMs } : {}),
    journalKey: options.journalKey,
    ...(options.journalParts ? { journalParts: options.journalParts } : {}),
    onDecision: (runId, d) => options.onDecision?.(key, runId, d),
    onLearned: (runId, facts) => onLearned?.(rt, runId, facts),
    onRefused: async (runId, error) => {
      const issue = await port.findIssue(LABELS.tracker, trackerMarker(runId));
      if (issue === null) return;
      const good = error.lastGood ?? (await engine.store.lastSealed(runId));
      await port.createComment(issue, journalRefusedComment(runId, error.reason, good));
    },
    onRestored: async (runId, loaded, actor) => {
      const issue = loaded.state.facts.trackerIssue;
      if (issue === undefined) return;
      const by = actor ? ` by @${actor}` : "";
      await port.createComment(
        issue,
        `The state branch \`${stateBranch(runId)}\` of this run was deleted${by}. Forge keeps the run's journal there, so it put the branch back at its last commit (\`${loaded.commitSha?.slice(0, 7)}\`) and the run goes on. To stop the run, comment \`/forge cancel\`.`,
      );
    },
  });
  const rt: RepoRuntime = { stats, port, engine, installationId, runs: new Map(), runsLoaded: false, planChain: Promise.resolve() };
  return rt;
}
