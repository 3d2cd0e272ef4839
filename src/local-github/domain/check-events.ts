// The `check_run` and `check_suite` webhooks, and who hears them
// (docs.github.com/webhooks/webhook-events-and-payloads#check_run and #check_suite):
// - `check_run` `created` and `completed`, and `check_suite` `completed`, go to every App installed
//   on the repository with at least read access to Checks ("To subscribe to this event, a GitHub App
//   must have at least read-level access for the "Checks" permission"), whichever App's check it is —
//   GitHub Actions' too: a workflow run is a check suite of the `github-actions` App (id 15368) and
//   each of its jobs a check run; and to repository webhooks ("Repository and organization webhooks
//   only receive payloads for the `created` and `completed` event types").
// - `check_run` `rerequested` / `requested_action` and `check_suite` `requested` / `rerequested` go
//   only to the App whose check it is, which needs write access to Checks ("To receive the
//   `requested` and `rerequested` event types, the app must have at least write-level access"). A
//   GitHub Actions suite is requested of Actions itself: no other App hears it.
// - "GitHub Apps with write-level access for the "Checks" permission are automatically subscribed to
//   this webhook event": such an App hears them whether or not it listed the events (webhooks.ts).
import type { CheckRun, CheckSuite, Repo, User } from "../state.js";
import { now } from "../state.js";
import type { SimCore } from "./index.js";

/** The order GitHub ranks conclusions in to give a suite the highest-priority one of its runs (docs.github.com/rest/guides/using-the-rest-api-to-interact-with-checks). */
const SUITE_ORDER = ["action_required", "cancelled", "timed_out", "failure", "neutral", "skipped", "success"];

/** The suite's conclusion from its runs' ("skipped" alone counts as success). */
export function suiteConclusion(runs: readonly CheckRun[]): string {
  const worst = runs.map((r) => r.conclusion ?? "neutral").sort((a, b) => SUITE_ORDER.indexOf(a) - SUITE_ORDER.indexOf(b))[0] ?? "neutral";
  return worst === "skipped" ? "success" : worst;
}

export interface CheckEventContext {
  /** who caused it: the person or bot that acted, or for a workflow's jobs the run's triggering actor */
  sender: User;
  /** the workflow run whose GITHUB_TOKEN caused it (such events start no workflow run) */
  causedByWorkflowRun?: number;
}

/** `check_run.created` or `check_run.completed` of `run`, to every App that may read checks and to repository hooks. */
export function emitCheckRun(core: SimCore, repo: Repo, run: CheckRun, action: "created" | "completed", ctx: CheckEventContext): void {
  if (core.closed) return;
  core.bus.emit(
    "check_run",
    action,
    {
      check_run: core.model.checkRunForHook(repo, run, core.prsFor(repo, run.headSha)),
      repository: core.model.repo(repo),
      sender: core.model.user(ctx.sender),
    },
    { repo, causedByWorkflowRun: ctx.causedByWorkflowRun },
  );
}

/** `check_suite.completed` of `suite`, to every App that may read checks and to repository hooks. */
export async function emitSuiteCompleted(core: SimCore, repo: Repo, suite: CheckSuite, ctx: CheckEventContext): Promise<void> {
  if (core.closed) return;
  let headCommit: Record<string, unknown>;
  try {
    headCommit = await core.headCommit(repo, suite.headSha);
  } catch (e) {
    // A run finishing after the simulator closed has nobody left to tell.
    if (core.closed) return;
    throw e;
  }
  core.bus.emit(
    "check_suite",
    "completed",
    {
      check_suite: { ...core.model.suite(repo, suite, core.prsFor(repo, suite.headSha)), head_commit: headCommit },
      repository: core.model.repo(repo),
      sender: core.model.user(ctx.sender),
    },
    { repo, causedByWorkflowRun: ctx.causedByWorkflowRun },
  );
}

/**
 * Completes `suite` with `conclusion` (or its runs' worst) and queues `check_suite.completed` — once:
 * a suite already completed with that conclusion is left alone. (The caller flushes: a REST
 * operation's webhooks go out after its answer.)
 */
export async function completeSuite(
  core: SimCore,
  repo: Repo,
  suite: CheckSuite,
  ctx: CheckEventContext,
  conclusion?: string,
): Promise<void> {
  const runs = [...core.state.checkRuns.values()].filter((r) => r.suiteId === suite.id);
  const c = conclusion ?? suiteConclusion(runs);
  if (suite.status === "completed" && suite.conclusion === c) return;
  suite.status = "completed";
  suite.conclusion = c;
  suite.updatedAt = now();
  await emitSuiteCompleted(core, repo, suite, ctx);
}
