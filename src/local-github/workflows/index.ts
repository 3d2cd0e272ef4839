// GitHub Actions as the local GitHub exposes it: workflow files, `workflow_dispatch`, runs started by
// `push` and `pull_request` (the repository's own CI), jobs, logs, cancel, the GITHUB_TOKEN, and the
// workflow_run / workflow_job webhooks.
//
// The simulator does not execute steps itself: a *job executor* registers with
// `sim.onWorkflowDispatch(handler)` and drives every run — dispatched or triggered — through the
// `DispatchedRun` it receives (start/complete jobs, append logs, mint the token). Without one, runs
// stay queued, unless the simulator was created with `workflowExecutor: "noop"`, which completes
// every job successfully. Workflow files are read by GitHub's own parser (runner/workflow.ts): a file
// it refuses is never handed to the executor — its runs fail at once, its dispatch is answered 422.
//
// The folder, by subject:
//   index.ts           the `Workflows` the server creates: it wires the parts below together
//   files.ts           the workflow files of a commit and of the default branch, registered with stable ids; their `on:`
//   triggers.ts        `on:` filters, and the push and pull_request events that start runs
//   dispatch.ts        `workflow_dispatch`: inputs checked against the workflow's, the run's title
//   runs.ts            runs and jobs: created queued, started (executor, noop, none), cancelled; their webhooks and tokens
//   dispatched-run.ts  what an executor receives (`DispatchedRun`), and the GITHUB_TOKEN's permissions
//   actions-api.ts     the REST operations of the Actions API (workflows, runs, jobs, logs)
//   logs.ts            the logs archive of a run
import type { SimCore } from "../domain/index.js";
import type { Handler } from "../rest/index.js";
import type { WorkflowRun } from "../state.js";
import { actionsApiHandlers } from "./actions-api.js";
import type { DispatchHandler } from "./dispatched-run.js";
import { WorkflowFiles } from "./files.js";
import { logsZip } from "./logs.js";
import { WorkflowRuns } from "./runs.js";
import { WorkflowTriggers } from "./triggers.js";

export type { DispatchedRun, DispatchHandler } from "./dispatched-run.js";
export { tokenPermissions } from "./dispatched-run.js";
export { displayTitle, type WorkflowInputSpec } from "./dispatch.js";
export { triggersOf } from "./files.js";
export { filterMatches, pullRequestTypes, refPasses } from "./triggers.js";

/** GitHub Actions of the local GitHub, as the server (REST handlers, executor hook, idle) and the control API (logs) use it. */
export class Workflows {
  private readonly files: WorkflowFiles;
  private readonly runs: WorkflowRuns;
  private readonly triggers: WorkflowTriggers;

  constructor(
    private readonly core: SimCore,
    executor: "none" | "noop" = "none",
  ) {
    this.files = new WorkflowFiles(core);
    this.runs = new WorkflowRuns(core, executor);
    this.triggers = new WorkflowTriggers(core, this.files, this.runs);
  }

  onDispatch(h: DispatchHandler | undefined): void {
    this.runs.onDispatch(h);
  }

  /** Resolves once every event so far has started the runs it starts. */
  idle(): Promise<void> {
    return this.triggers.idle();
  }

  /** Whether events are still being turned into runs. */
  busy(): boolean {
    return this.triggers.busy();
  }

  /** Jobs waiting for a runner (latency profile) never start once the local GitHub is closing. */
  stop(): void {
    this.runs.stop();
  }

  logsZip(run: WorkflowRun): Buffer {
    return logsZip(run);
  }

  handlers(): Record<string, Handler> {
    return actionsApiHandlers(this.core, this.files, this.runs);
  }
}
