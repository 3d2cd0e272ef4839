// What a job executor receives for each run (`DispatchedRun`): the workflow, its event, ref and
// secrets, and the calls that start and complete its jobs, log, and mint its GITHUB_TOKEN, whose
// permissions come from the workflow's `permissions:`.
import type { Job, Level, Permissions, Repo, User, WorkflowRun } from "../state.js";
import { now } from "../state.js";
import { PERMISSION_SCOPES } from "../runner/workflow.js";
import { secretValues } from "../secrets.js";
import type { WorkflowRuns } from "./runs.js";

export interface DispatchedRun {
  run: WorkflowRun;
  repo: Repo;
  /** the workflow file's text at the run's commit */
  yaml: string;
  /** parsed YAML */
  workflow: Record<string, unknown>;
  /** `workflow_dispatch` inputs (none for other events) */
  inputs: Record<string, string>;
  /** what started the run: `workflow_dispatch`, `push` or `pull_request` (= `run.event`) */
  event: string;
  /** the triggering event's webhook payload for GITHUB_EVENT_PATH; undefined for workflow_dispatch */
  eventPayload: Record<string, unknown> | undefined;
  /** a pull request from a fork: its token is read-only and secrets are not passed (GitHub's rule) */
  fromFork: boolean;
  /** the repository's Actions secrets (`secrets.*`) as stored through the REST API or the control API; none for a fork's pull request */
  secrets: Record<string, string>;
  /** GITHUB_REF and GITHUB_SHA: the dispatched ref (refs/heads/x) or pushed ref and its commit; for pull_request refs/pull/N/merge and its test merge commit */
  ref: string;
  sha: string;
  serverUrl: string;
  apiUrl: string;
  /** clone URL without credentials (use the token as actions/checkout does) */
  cloneUrl: string;
  actor: User;
  /** aborted when the run is cancelled */
  signal: AbortSignal;
  /** mints a GITHUB_TOKEN scoped by the job's (else the workflow's) `permissions` */
  token(jobName?: string): string;
  startJob(jobName: string, steps?: string[]): Job;
  step(jobName: string, stepNumber: number, status: "in_progress" | "completed", conclusion?: string): void;
  log(jobName: string, text: string): void;
  /** `annotations`: the job's `::error::`/`::warning::`/`::notice::` workflow commands, shown on its check run. */
  completeJob(
    jobName: string,
    conclusion: "success" | "failure" | "cancelled" | "skipped" | "timed_out",
    annotations?: Array<{ level: "error" | "warning" | "notice"; message: string; properties: Record<string, string> }>,
  ): void;
  /** completes the run; the conclusion defaults to the worst job conclusion */
  complete(conclusion?: string): void;
}

export type DispatchHandler = (d: DispatchedRun) => void | Promise<void>;

/** Default GITHUB_TOKEN permissions for a repository with the "restricted" default (docs: "Permissions for the GITHUB_TOKEN"). */
const RESTRICTED: Permissions = { contents: "read", packages: "read", metadata: "read" };
/** The token's scopes as the REST API names them (`pull_requests`; the workflow file says `pull-requests`). */
const ALL_SCOPES = PERMISSION_SCOPES.map((scope) => scope.replaceAll("-", "_"));

/**
 * Turns a workflow/job `permissions:` value into token permissions; without one, the repository's
 * default: restricted, or permissive (every scope write but id-token) when its setting is "write".
 */
export function tokenPermissions(spec: unknown, repoDefault: "read" | "write" = "read"): Permissions {
  if ((spec === undefined || spec === null) && repoDefault === "write")
    return { ...Object.fromEntries(ALL_SCOPES.filter((s) => s !== "id_token").map((s) => [s, "write" as Level])), metadata: "read" };
  if (spec === undefined || spec === null) return { ...RESTRICTED };
  const out: Permissions = { metadata: "read" };
  if (spec === "read-all" || spec === "write-all") {
    for (const s of ALL_SCOPES) out[s] = spec === "read-all" ? "read" : "write";
    return out;
  }
  if (typeof spec === "object") {
    for (const [k, v] of Object.entries(spec as Record<string, string>)) {
      if (v === "read" || v === "write") out[k.replace(/-/g, "_")] = v as Level;
    }
  }
  return out;
}

/**
 * The run as its executor drives it. The returned object has methods of its own; they reach the
 * runs (`self`) for tokens, webhooks and the run's abort controller.
 */
export function dispatchedRun(
  self: WorkflowRuns,
  repo: Repo,
  run: WorkflowRun,
  doc: Record<string, unknown>,
  abort: AbortController,
): DispatchedRun {
  const core = self.core;
  const jobOf = (name: string) => {
    const j = run.jobs.find((x) => x.name === name);
    if (!j) throw new Error(`workflow run ${run.id} has no job ${name}`);
    return j;
  };
  const jobsDoc = (doc.jobs ?? {}) as Record<string, { name?: string; permissions?: unknown }>;
  const setCheck = (j: Job) => {
    const cr = core.state.checkRuns.get(j.checkRunId);
    if (!cr) return;
    cr.status = j.status === "completed" ? "completed" : j.status === "in_progress" ? "in_progress" : "queued";
    cr.conclusion = j.conclusion;
    cr.startedAt = j.startedAt;
    cr.completedAt = j.completedAt;
  };
  return {
    run,
    repo,
    yaml: run.yaml,
    workflow: doc,
    inputs: { ...run.inputs },
    event: run.event,
    eventPayload: run.eventPayload,
    fromFork: run.headRepoId !== repo.id,
    // "With the exception of GITHUB_TOKEN, secrets are not passed to the runner when a workflow is
    // triggered from a forked repository."
    secrets: run.headRepoId !== repo.id ? {} : secretValues(repo),
    ref: run.ref,
    sha: run.sha,
    serverUrl: core.baseUrl,
    apiUrl: core.model.api,
    cloneUrl: `${core.baseUrl}/${repo.owner.login}/${repo.name}.git`,
    actor: run.actor,
    signal: abort.signal,
    token(jobName?: string) {
      const key = Object.keys(jobsDoc).find((k) => k === jobName || jobsDoc[k]?.name === jobName);
      const jobPerms = key ? jobsDoc[key]?.permissions : undefined;
      const perms = tokenPermissions(jobPerms ?? doc.permissions, repo.actionsPermissions?.defaultWorkflowPermissions);
      // "The GITHUB_TOKEN has read-only permissions in pull requests from forked repositories."
      if (run.headRepoId !== repo.id) for (const k of Object.keys(perms)) perms[k] = "read";
      return self.mintToken(run, repo, perms);
    },
    startJob(jobName, steps = []) {
      const j = jobOf(jobName);
      const t = now();
      if (run.status === "queued") {
        run.status = "in_progress";
        run.runStartedAt = t;
        run.updatedAt = t;
        void self.emitRun(repo, run, "in_progress");
      }
      j.status = "in_progress";
      j.startedAt = t;
      j.steps = steps.map((name, i) => ({
        name,
        status: "queued",
        conclusion: null,
        number: i + 1,
        started_at: null,
        completed_at: null,
      }));
      setCheck(j);
      self.emitJob(repo, run, j, "in_progress");
      return j;
    },
    step(jobName, n, status, conclusion) {
      const s = jobOf(jobName).steps.find((x) => x.number === n);
      if (!s) return;
      s.status = status;
      if (status === "in_progress") s.started_at = now();
      else {
        s.completed_at = now();
        s.conclusion = conclusion ?? "success";
      }
    },
    log(jobName, text) {
      jobOf(jobName).log += text;
    },
    completeJob(jobName, conclusion, annotations = []) {
      const j = jobOf(jobName);
      if (j.status === "completed") return;
      j.status = "completed";
      j.conclusion = conclusion;
      j.completedAt = now();
      setCheck(j);
      const cr = core.state.checkRuns.get(j.checkRunId);
      if (cr && annotations.length) {
        // A workflow command without `file` is annotated on `.github` (as GitHub shows it).
        cr.annotations = annotations.map((a) => {
          const line = Number(a.properties.line ?? 1) || 1;
          return {
            path: a.properties.file ?? ".github",
            startLine: line,
            endLine: Number(a.properties.endLine ?? line) || line,
            level: a.level === "error" ? "failure" : a.level,
            message: a.message,
            title: a.properties.title ?? null,
          };
        });
        cr.output = { ...cr.output, annotations_count: cr.annotations.length };
      }
      self.emitJob(repo, run, j, "completed");
      self.emitCheckRun(repo, run, j, "completed");
    },
    complete(conclusion) {
      if (run.status === "completed") return;
      const order = ["failure", "timed_out", "cancelled", "action_required", "neutral", "skipped", "success"];
      const worst = run.jobs.map((j) => j.conclusion ?? "cancelled").sort((a, b) => order.indexOf(a) - order.indexOf(b))[0] ?? "success";
      run.status = "completed";
      run.conclusion = conclusion ?? (run.cancelRequested ? "cancelled" : worst === "skipped" ? "success" : worst);
      run.updatedAt = now();
      self.expireTokens(run.id);
      self.aborts.delete(run.id);
      // The workflow run and its check suite complete together; GitHub promises no order between their webhooks.
      void self.emitRun(repo, run, "completed");
      void self.completeSuite(repo, run);
    },
  };
}
