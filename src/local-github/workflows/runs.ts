// Workflow runs and their jobs: a run created queued with a check suite (and a check run per job),
// handed to the executor (the registered one, the noop one, or none), cancelled; the
// workflow_run / workflow_job webhooks its changes send; the GITHUB_TOKENs minted for it.
import type { TimerHandle } from "../../core/clock.js";
import { disallowedActionsError } from "../actions-permissions.js";
import { HttpError, newToken } from "../auth.js";
import { completeSuite, emitCheckRun } from "../domain/check-events.js";
import { ACTIONS_APP_ID, type SimCore } from "../domain/index.js";
import * as git from "../git/index.js";
import type { RestCtx } from "../rest/index.js";
import type { WorkflowError } from "../runner/workflow.js";
import { now, queuedCheckRun, type Job, type Permissions, type Repo, type User, type WorkflowFile, type WorkflowRun } from "../state.js";
import { dispatchedRun, type DispatchedRun, type DispatchHandler } from "./dispatched-run.js";

/** What a new run is: its event, the ref and commit its jobs see, its head, its actor. */
export interface RunSpec {
  event: "workflow_dispatch" | "push" | "pull_request" | "merge_group";
  /** GITHUB_REF, GITHUB_SHA */
  ref: string;
  sha: string;
  /** `head_branch`, `head_sha`, `head_repository` of the run */
  headBranch: string;
  headSha: string;
  headRepoId: number;
  actor: User;
  inputs: Record<string, string>;
  displayTitle: string;
  eventPayload?: Record<string, unknown>;
}

/** Runs and jobs: created, handed to their executor, cancelled; their webhooks and tokens. */
export class WorkflowRuns {
  private handler: DispatchHandler | undefined;
  aborts = new Map<number, AbortController>();
  /** Runs waiting out the runner queue time of the latency profile. */
  private queued = new Set<TimerHandle>();

  constructor(
    readonly core: SimCore,
    private readonly executor: "none" | "noop" = "none",
  ) {}

  onDispatch(h: DispatchHandler | undefined): void {
    this.handler = h;
  }

  /** A queued run of `wf` with one queued job (and its check run) per job of the workflow, in a check suite of its own. */
  newRun(repo: Repo, wf: WorkflowFile, doc: Record<string, unknown>, yaml: string, spec: RunSpec): WorkflowRun {
    const t = now();
    const runNumber = (this.core.state.runCounters.get(wf.id) ?? 0) + 1;
    this.core.state.runCounters.set(wf.id, runNumber);
    const suite = this.core.newSuite(repo, ACTIONS_APP_ID, spec.headSha, spec.headBranch);
    const run: WorkflowRun = {
      id: this.core.state.id(),
      repoId: repo.id,
      workflowId: wf.id,
      name: typeof doc.name === "string" ? doc.name : wf.path,
      path: wf.path,
      runNumber,
      runAttempt: 1,
      event: spec.event,
      status: "queued",
      conclusion: null,
      headBranch: spec.headBranch,
      headSha: spec.headSha,
      headRepoId: spec.headRepoId,
      ref: spec.ref,
      sha: spec.sha,
      ...(spec.eventPayload ? { eventPayload: spec.eventPayload } : {}),
      actor: spec.actor,
      triggeringActor: spec.actor,
      inputs: spec.inputs,
      yaml,
      displayTitle: spec.displayTitle,
      createdAt: t,
      updatedAt: t,
      runStartedAt: t,
      checkSuiteId: suite.id,
      jobs: [],
      cancelRequested: false,
    };
    for (const [jobKey, jobDef] of Object.entries((doc.jobs ?? {}) as Record<string, { name?: unknown }>)) {
      // A name with `${{ }}` is an expression (not a string) here: the job is named by its key until it runs.
      const jobName = typeof jobDef?.name === "string" ? jobDef.name : jobKey;
      const checkRun = this.newJobCheckRun(repo, suite.id, spec.headSha, jobName);
      run.jobs.push({
        id: checkRun,
        runId: run.id,
        name: jobName,
        status: "queued",
        conclusion: null,
        createdAt: t,
        startedAt: t,
        completedAt: null,
        steps: [],
        log: "",
        checkRunId: checkRun,
      });
    }
    this.core.state.runs.set(run.id, run);
    return run;
  }

  /** The run's requested/queued webhooks, then its execution: the registered executor, the noop one, or none (queued). */
  async start(repo: Repo, run: WorkflowRun, doc: Record<string, unknown>): Promise<void> {
    await this.emitRun(repo, run, "requested");
    for (const j of run.jobs) this.emitJob(repo, run, j, "queued");
    // Each job is a check run of GitHub Actions' suite for the run: every App that reads checks hears it.
    for (const j of run.jobs) this.emitCheckRun(repo, run, j, "created");

    const abort = new AbortController();
    this.aborts.set(run.id, abort);
    const dispatched = dispatchedRun(this, repo, run, doc, abort);
    // An action the repository's Actions permissions do not allow: GitHub rejects the workflow
    // before any job runs (a startup failure). Its jobs fail at their start with GitHub's message,
    // and no executor sees the run.
    const refused = disallowedActionsError(repo, doc);
    if (refused) {
      const fail = (): void => {
        for (const j of run.jobs) {
          dispatched.startJob(j.name);
          dispatched.log(j.name, `##[error]${refused}\n`);
          dispatched.completeJob(j.name, "failure");
        }
        dispatched.complete("startup_failure");
      };
      this.core.background("startup-failure", () => new Promise<void>((resolve) => setImmediate(() => resolve(fail()))));
      return;
    }
    if (this.handler) {
      const h = this.handler;
      this.afterRunnerQueue(run, dispatched, () => {
        Promise.resolve(h(dispatched)).catch((e: unknown) => {
          for (const j of run.jobs)
            if (j.status !== "completed") {
              dispatched.log(j.name, `executor error: ${(e as Error).message}\n`);
              dispatched.completeJob(j.name, "failure");
            }
          dispatched.complete("failure");
        });
      });
    } else if (this.executor === "noop") {
      this.afterRunnerQueue(run, dispatched, () => {
        for (const j of run.jobs) {
          if (run.cancelRequested) break;
          dispatched.startJob(j.name);
          dispatched.log(j.name, "noop executor: job completed without running steps\n");
          dispatched.completeJob(j.name, "success");
        }
        dispatched.complete();
      });
    }
  }

  /**
   * A run of a workflow file GitHub refuses: no jobs, completed `failure` at once, with GitHub's
   * annotation "Invalid workflow file" on `<path>#L<line>` saying "The workflow is not valid. <the
   * parser's messages>" (as a run's page shows it; the REST API lists no jobs and no check runs).
   */
  async failInvalid(repo: Repo, run: WorkflowRun, error: WorkflowError): Promise<void> {
    await this.emitRun(repo, run, "requested");
    run.annotations = [
      {
        path: run.path,
        startLine: error.line,
        endLine: error.line,
        level: "failure",
        message: error.message,
        title: "Invalid workflow file",
      },
    ];
    run.status = "completed";
    run.conclusion = "failure";
    run.updatedAt = now();
    await Promise.all([this.emitRun(repo, run, "completed"), this.completeSuite(repo, run)]);
  }

  /**
   * Starts the run's jobs once a runner would have picked them up: at once without a latency
   * profile, after the profile's runner queue time with one. A run cancelled while it waited ends
   * cancelled without reaching a runner, as on GitHub.
   */
  private afterRunnerQueue(run: WorkflowRun, dispatched: DispatchedRun, start: () => void): void {
    const queuedMs = this.core.latency.sample("runnerQueue");
    if (queuedMs <= 0) {
      // Tracked as the local GitHub's background work, so that `sim.idle()` waits for the start.
      this.core.background("runner-queue", () => new Promise<void>((resolve) => setImmediate(() => resolve(start()))));
      return;
    }
    const timer = this.core.clock.setTimeout(() => {
      this.queued.delete(timer);
      if (!run.cancelRequested) return start();
      for (const j of run.jobs) dispatched.completeJob(j.name, "cancelled");
      dispatched.complete("cancelled");
    }, queuedMs);
    this.queued.add(timer);
  }

  /** Jobs waiting for a runner (latency profile) never start once the local GitHub is closing. */
  stop(): void {
    for (const t of this.queued) this.core.clock.clear(t);
    this.queued.clear();
  }

  private newJobCheckRun(repo: Repo, suiteId: number, sha: string, name: string): number {
    const id = this.core.state.id();
    this.core.state.checkRuns.set(id, queuedCheckRun({ id, repoId: repo.id, suiteId, appId: ACTIONS_APP_ID, name, headSha: sha }));
    return id;
  }

  async emitRun(repo: Repo, run: WorkflowRun, action: "requested" | "in_progress" | "completed"): Promise<void> {
    const wf = [...this.core.state.workflows.values()].find((w) => w.id === run.workflowId)!;
    let head;
    try {
      head = await git.readCommit(repo.gitDir, run.headSha);
    } catch (e) {
      // An executor finishing after the simulator closed has nobody left to tell.
      if (this.core.closed) return;
      throw e;
    }
    this.core.bus.emit(
      "workflow_run",
      action,
      {
        workflow_run: this.core.model.run(repo, run, head),
        workflow: this.core.model.workflow(repo, wf),
        repository: this.core.model.repo(repo),
        sender: this.core.model.user(run.triggeringActor),
      },
      { repo },
    );
    this.core.bus.flush();
  }

  /** `check_run` of a job's check run (domain/check-events.ts), sent by the run's triggering actor as GitHub names it. */
  emitCheckRun(repo: Repo, run: WorkflowRun, job: Job, action: "created" | "completed"): void {
    const cr = this.core.state.checkRuns.get(job.checkRunId);
    if (!cr) return;
    emitCheckRun(this.core, repo, cr, action, { sender: run.triggeringActor });
    this.core.bus.flush();
  }

  /** The run's check suite completes with the run: `check_suite.completed` to every App that reads checks. */
  async completeSuite(repo: Repo, run: WorkflowRun): Promise<void> {
    const suite = this.core.state.suites.get(run.checkSuiteId);
    if (!suite || this.core.closed) return;
    await completeSuite(this.core, repo, suite, { sender: run.triggeringActor }, run.conclusion ?? undefined);
    this.core.bus.flush();
  }

  emitJob(repo: Repo, run: WorkflowRun, job: Job, action: "queued" | "in_progress" | "completed"): void {
    this.core.bus.emit(
      "workflow_job",
      action,
      {
        workflow_job: this.core.model.job(repo, run, job),
        repository: this.core.model.repo(repo),
        sender: this.core.model.user(run.triggeringActor),
      },
      { repo },
    );
    this.core.bus.flush();
  }

  mintToken(run: WorkflowRun, repo: Repo, perms: Permissions): string {
    const app = this.core.state.apps.get(ACTIONS_APP_ID)!;
    const token = newToken("ghs");
    this.core.state.tokens.set(token, {
      token,
      kind: "workflow",
      actor: app.bot,
      appId: ACTIONS_APP_ID,
      repoIds: [repo.id],
      permissions: perms,
      // GITHUB_TOKEN expires when the job finishes or after 24 h at most.
      // eslint-disable-next-line no-restricted-properties -- credentials expire in real time: the clients holding them read the real clock
      expiresAt: Date.now() + 24 * 3600_000,
      workflowRunId: run.id,
    });
    return token;
  }

  expireTokens(runId: number): void {
    for (const t of this.core.state.tokens.values()) if (t.workflowRunId === runId) t.expiresAt = 0;
  }

  cancel(ctx: RestCtx, run: WorkflowRun): void {
    if (run.status === "completed") throw new HttpError(409, "Cannot cancel a workflow run that is completed.", ctx.doc);
    run.cancelRequested = true;
    const abort = this.aborts.get(run.id);
    abort?.abort();
    if (!this.handler) {
      // Nothing is executing: cancel immediately.
      const repo = this.core.state.repos.get(run.repoId)!;
      for (const j of run.jobs) {
        if (j.status === "completed") continue;
        j.status = "completed";
        j.conclusion = "cancelled";
        j.completedAt = now();
        const cr = this.core.state.checkRuns.get(j.checkRunId);
        if (cr) Object.assign(cr, { status: "completed", conclusion: "cancelled", completedAt: j.completedAt });
        this.emitJob(repo, run, j, "completed");
        this.emitCheckRun(repo, run, j, "completed");
      }
      run.status = "completed";
      run.conclusion = "cancelled";
      run.updatedAt = now();
      this.expireTokens(run.id);
      void this.emitRun(repo, run, "completed");
      void this.completeSuite(repo, run);
    }
  }
}
