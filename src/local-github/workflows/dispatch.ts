// `workflow_dispatch`: a run started through the REST API, with the inputs the workflow declares, and
// the run's display title.
import { DISPATCH_LIMITS } from "../../core/dispatch-inputs.js";
import { ACTIONS_DISABLED, actionsEnabled } from "../actions-permissions.js";
import { HttpError } from "../auth.js";
import * as git from "../git/index.js";
import type { RestCtx } from "../rest/index.js";
import { evaluateString, type Template } from "../runner/expressions.js";
import { refName } from "../runner/github-context.js";
import type { Repo, WorkflowFile, WorkflowRun } from "../state.js";
import { readWorkflowAt } from "./files.js";
import type { WorkflowRuns } from "./runs.js";

export interface WorkflowInputSpec {
  description?: string;
  required?: boolean;
  default?: string | boolean | number;
  type?: "string" | "boolean" | "choice" | "number" | "environment";
  options?: string[];
}

/**
 * The run's display title: `run-name` evaluated (the parser has limited it to the contexts GitHub
 * allows there: github, inputs, vars); GitHub falls back to the workflow's name, then its path
 * ("Workflow syntax": run-name).
 */
export function displayTitle(
  doc: Record<string, unknown>,
  path: string,
  inputs: Record<string, string>,
  actor: string,
  ref: string,
  event: { name: string; payload?: Record<string, unknown> } = { name: "workflow_dispatch" },
): string {
  const fallback = typeof doc.name === "string" ? doc.name : path;
  const template = doc["run-name"] as Template | undefined;
  if (template === undefined || template === null) return fallback;
  const github = {
    actor,
    triggering_actor: actor,
    ref,
    ref_name: refName(ref).name,
    event_name: event.name,
    event: (event.payload ?? { inputs }) as Record<string, never>,
  };
  try {
    return evaluateString(template, { contexts: { github, inputs, vars: {} } }) || fallback;
  } catch {
    return fallback;
  }
}

/**
 * docs.github.com/rest/actions/workflows#create-a-workflow-dispatch-event: 204, or 200 with
 * `workflow_run_id`, `run_url`, `html_url` when `return_run_details` is true. Inputs must be
 * declared by the workflow's `on.workflow_dispatch.inputs`; unknown or missing required → 422.
 */
export async function dispatch(
  runs: WorkflowRuns,
  ctx: RestCtx,
  repo: Repo,
  wf: WorkflowFile,
  body: Record<string, unknown>,
): Promise<WorkflowRun> {
  // What GitHub answers a dispatch while Actions is disabled for the repository.
  if (!actionsEnabled(repo)) throw new HttpError(422, ACTIONS_DISABLED, ctx.doc);
  const refIn = String(body.ref);
  const ref = refIn.startsWith("refs/")
    ? refIn
    : (await git.resolveRef(repo.gitDir, `refs/heads/${refIn}`))
      ? `refs/heads/${refIn}`
      : `refs/tags/${refIn}`;
  const sha = await git.resolveRef(repo.gitDir, ref);
  if (!sha) throw new HttpError(422, `No ref found for: ${refIn}`, ctx.doc);
  const entry = await git.entryAt(repo.gitDir, sha, wf.path);
  if (!entry || entry.type !== "blob") throw new HttpError(404, "Not Found", ctx.doc);
  const yaml = (await git.readBlob(repo.gitDir, entry.sha)).toString("utf8");
  const { doc, triggers, error } = await readWorkflowAt(wf.path, yaml);
  // A file GitHub's parser refuses is refused here too (`gh workflow run`: "HTTP 422: Invalid
  // Argument - failed to parse workflow: (Line: 65, Col: 26): Unexpected symbol: '??'…").
  if (error) throw new HttpError(422, error.dispatchRefusal(), ctx.doc);
  if (!("workflow_dispatch" in triggers)) throw new HttpError(422, "Workflow does not have 'workflow_dispatch' trigger", ctx.doc);
  const declared = ((triggers.workflow_dispatch as { inputs?: Record<string, WorkflowInputSpec> } | null)?.inputs ?? {}) as Record<
    string,
    WorkflowInputSpec
  >;
  const given = (body.inputs ?? {}) as Record<string, unknown>;
  // GitHub's limit on the inputs of one dispatch: 65,535 characters in all (their number, 25, is
  // in the request's schema) — docs.github.com/actions/reference/workflows-and-actions/events-that-trigger-workflows#workflow_dispatch.
  if (JSON.stringify(given).length > DISPATCH_LIMITS.characters)
    throw new HttpError(422, `inputs are too large: the maximum payload for inputs is ${DISPATCH_LIMITS.characters} characters`, ctx.doc);
  const unexpected = Object.keys(given).filter((k) => !(k in declared));
  if (unexpected.length) throw new HttpError(422, `Unexpected inputs provided: ${JSON.stringify(unexpected)}`, ctx.doc);
  const inputs: Record<string, string> = {};
  for (const [name, spec] of Object.entries(declared)) {
    const v = given[name];
    if (v === undefined || v === null || v === "") {
      if (spec?.default !== undefined) inputs[name] = String(spec.default);
      else if (spec?.required) throw new HttpError(422, `Required input '${name}' not provided`, ctx.doc);
      else inputs[name] = spec?.type === "boolean" ? "false" : "";
      continue;
    }
    const s = String(v);
    if (spec?.type === "choice" && spec.options && !spec.options.includes(s))
      throw new HttpError(422, `Provided value '${s}' for input '${name}' not in the list of allowed values`, ctx.doc);
    if (spec?.type === "boolean" && s !== "true" && s !== "false")
      throw new HttpError(422, `Provided value '${s}' for input '${name}' is not a valid boolean`, ctx.doc);
    if (spec?.type === "number" && Number.isNaN(Number(s)))
      throw new HttpError(422, `Provided value '${s}' for input '${name}' is not a valid number`, ctx.doc);
    inputs[name] = s;
  }

  const run = runs.newRun(repo, wf, doc, yaml, {
    event: "workflow_dispatch",
    ref,
    sha,
    headBranch: ref.replace(/^refs\/(heads|tags)\//, ""),
    headSha: sha,
    headRepoId: repo.id,
    actor: ctx.actor,
    inputs,
    displayTitle: displayTitle(doc, wf.path, inputs, ctx.actor.login, ref),
  });
  const causedByWorkflowRun = ctx.token?.workflowRunId;
  runs.core.bus.emit(
    "workflow_dispatch",
    null,
    {
      inputs: Object.keys(inputs).length ? inputs : null,
      ref,
      repository: runs.core.model.repo(repo),
      sender: runs.core.model.user(ctx.actor),
      workflow: wf.path,
    },
    { repo, causedByWorkflowRun },
  );
  await runs.start(repo, run, doc);
  return run;
}
