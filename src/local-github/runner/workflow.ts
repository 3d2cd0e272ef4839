// Workflow files for the sim runner: parsing, `workflow_dispatch` input validation, and the
// job-level facts the server needs before it runs a job (permissions, concurrency, timeout).
import { parse as parseYaml } from "yaml";
import { interpolate, interpolateString, type ExpressionContext, type ExprValue } from "./expressions/index.js";

/** A workflow that cannot be parsed or run. */
export class WorkflowError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WorkflowError";
  }
}

/**
 * A dispatch the API must refuse. `status` is 422 and `message` is GitHub's wording, so the
 * server can answer `{ message, documentation_url, status: "422" }` as GitHub does.
 */
export class DispatchInputError extends Error {
  readonly status = 422;
  constructor(message: string) {
    super(message);
    this.name = "DispatchInputError";
  }
}

/** The 422 body GitHub sends for a refused dispatch. */
export function dispatchErrorBody(err: DispatchInputError): { message: string; documentation_url: string; status: "422" } {
  return {
    message: err.message,
    documentation_url: "https://docs.github.com/rest/actions/workflows#create-a-workflow-dispatch-event",
    status: "422",
  };
}

export interface DispatchInputSpec {
  description?: string;
  required?: boolean;
  default?: unknown;
  type?: "string" | "boolean" | "choice" | "number" | "environment";
  options?: unknown[];
}

export interface StepSpec {
  id?: string;
  name?: string;
  if?: unknown;
  run?: string;
  uses?: string;
  with?: Record<string, unknown>;
  env?: Record<string, unknown>;
  shell?: string;
  "working-directory"?: string;
  "timeout-minutes"?: unknown;
  "continue-on-error"?: unknown;
}

export interface JobSpec {
  name?: string;
  "runs-on"?: unknown;
  if?: unknown;
  needs?: unknown;
  permissions?: unknown;
  concurrency?: unknown;
  env?: Record<string, unknown>;
  defaults?: { run?: { shell?: string; "working-directory"?: string } };
  "timeout-minutes"?: unknown;
  "continue-on-error"?: unknown;
  outputs?: Record<string, unknown>;
  steps?: StepSpec[];
  strategy?: unknown;
  services?: unknown;
  container?: unknown;
  uses?: unknown;
}

export interface WorkflowSpec {
  name?: string;
  on: unknown;
  env?: Record<string, unknown>;
  permissions?: unknown;
  concurrency?: unknown;
  defaults?: { run?: { shell?: string; "working-directory"?: string } };
  jobs: Record<string, JobSpec>;
}

export function parseWorkflow(workflowText: string): WorkflowSpec {
  let doc: unknown;
  try {
    // `yaml` follows YAML 1.2, so the `on:` key stays the string "on" (YAML 1.1 would make it true).
    doc = parseYaml(workflowText);
  } catch (err) {
    throw new WorkflowError(`Invalid workflow file: ${(err as Error).message}`);
  }
  if (!doc || typeof doc !== "object" || Array.isArray(doc)) throw new WorkflowError("Invalid workflow file: not a mapping");
  const wf = doc as Record<string, unknown>;
  if (wf.on === undefined) throw new WorkflowError("Invalid workflow file: No event triggers defined in `on`");
  if (!wf.jobs || typeof wf.jobs !== "object" || Object.keys(wf.jobs).length === 0) {
    throw new WorkflowError("Invalid workflow file: No jobs defined in `jobs`");
  }
  for (const [id, job] of Object.entries(wf.jobs as Record<string, unknown>)) {
    if (!job || typeof job !== "object") throw new WorkflowError(`Invalid workflow file: job '${id}' is not a mapping`);
    const steps = (job as JobSpec).steps;
    if (steps !== undefined && !Array.isArray(steps)) throw new WorkflowError(`Invalid workflow file: jobs.${id}.steps must be a list`);
    for (const [i, step] of (steps ?? []).entries()) {
      if (!step || typeof step !== "object") throw new WorkflowError(`Invalid workflow file: jobs.${id}.steps[${i}] is not a mapping`);
      if ((step.run === undefined) === (step.uses === undefined)) {
        throw new WorkflowError(`Invalid workflow file: jobs.${id}.steps[${i}] must have exactly one of 'run' or 'uses'`);
      }
    }
  }
  return wf as unknown as WorkflowSpec;
}

/** The `workflow_dispatch` trigger's inputs, or null when the workflow has no such trigger. */
export function dispatchInputSpecs(wf: WorkflowSpec): Record<string, DispatchInputSpec> | null {
  const on = wf.on;
  if (on === "workflow_dispatch") return {};
  if (Array.isArray(on)) return on.includes("workflow_dispatch") ? {} : null;
  if (on && typeof on === "object" && "workflow_dispatch" in on) {
    const wd = (on as Record<string, unknown>).workflow_dispatch;
    const inputs = wd && typeof wd === "object" ? (wd as { inputs?: unknown }).inputs : undefined;
    return (inputs && typeof inputs === "object" ? inputs : {}) as Record<string, DispatchInputSpec>;
  }
  return null;
}

export interface DispatchInputs {
  /** The `inputs` context: booleans are booleans, numbers numbers, the rest strings. */
  inputs: Record<string, ExprValue>;
  /** `github.event.inputs` in the dispatch payload: every value a string, as GitHub sends them. */
  eventInputs: Record<string, string>;
}

function inputAsString(name: string, value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "boolean" || typeof value === "number") return String(value);
  throw new DispatchInputError(`Provided value for input '${name}' must be a string`);
}

/**
 * Validate `inputs` of a `workflow_dispatch` request against the workflow, as GitHub does before
 * it answers 204: unknown inputs and missing required ones are refused with 422, defaults are
 * applied, and booleans/choices/numbers are checked.
 * (REST "Create a workflow dispatch event": "inputs … Any default properties configured in the
 * workflow file will be used when inputs are omitted.")
 */
export function parseDispatchInputs(workflowText: string, inputs: Record<string, unknown> | undefined): DispatchInputs {
  const wf = parseWorkflow(workflowText);
  const specs = dispatchInputSpecs(wf);
  if (specs === null) throw new DispatchInputError("Workflow does not have 'workflow_dispatch' trigger");
  const given = inputs ?? {};
  const unexpected = Object.keys(given).filter((k) => !Object.prototype.hasOwnProperty.call(specs, k));
  // GitHub: `Unexpected inputs provided: ["a", "b"]` (seen in the 422 bodies users report).
  if (unexpected.length > 0) {
    throw new DispatchInputError(`Unexpected inputs provided: [${unexpected.map((k) => JSON.stringify(k)).join(", ")}]`);
  }

  const out: DispatchInputs = { inputs: {}, eventInputs: {} };
  for (const [name, spec0] of Object.entries(specs)) {
    const spec = spec0 ?? {};
    const type = spec.type ?? "string";
    const provided = Object.prototype.hasOwnProperty.call(given, name) ? given[name] : undefined;
    let raw: string | undefined = provided === undefined || provided === null ? undefined : inputAsString(name, provided);
    if (raw === undefined && spec.default !== undefined && spec.default !== null) raw = String(spec.default);
    if (raw === undefined || (raw === "" && spec.required)) {
      if (spec.required) throw new DispatchInputError(`Required input '${name}' not provided`);
    }
    switch (type) {
      case "boolean": {
        const v = raw === undefined || raw === "" ? "false" : raw;
        if (v !== "true" && v !== "false") {
          throw new DispatchInputError(`Provided value '${v}' for input '${name}' is not a valid boolean`);
        }
        out.inputs[name] = v === "true";
        out.eventInputs[name] = v;
        break;
      }
      case "choice": {
        const options = (spec.options ?? []).map(String);
        const v = raw ?? "";
        if (v !== "" && !options.includes(v)) {
          throw new DispatchInputError(`Provided value '${v}' for input '${name}' not in the list of allowed values`);
        }
        out.inputs[name] = v;
        out.eventInputs[name] = v;
        break;
      }
      case "number": {
        const v = raw ?? "";
        if (v !== "" && !Number.isFinite(Number(v))) {
          throw new DispatchInputError(`Provided value '${v}' for input '${name}' is not a valid number`);
        }
        out.inputs[name] = v === "" ? "" : Number(v);
        out.eventInputs[name] = v;
        break;
      }
      case "string":
      case "environment":
        out.inputs[name] = raw ?? "";
        out.eventInputs[name] = raw ?? "";
        break;
      default:
        throw new WorkflowError(`Invalid workflow file: input '${name}' has unknown type '${String(type)}'`);
    }
  }
  return out;
}

export function selectJob(wf: WorkflowSpec, jobId?: string): [string, JobSpec] {
  const ids = Object.keys(wf.jobs);
  if (jobId === undefined) {
    if (ids.length !== 1) {
      throw new WorkflowError(`The workflow has ${ids.length} jobs (${ids.join(", ")}); name the one to run with jobId`);
    }
    return [ids[0]!, wf.jobs[ids[0]!]!];
  }
  const job = wf.jobs[jobId];
  if (!job) throw new WorkflowError(`The workflow has no job '${jobId}'`);
  return [jobId, job];
}

/** GITHUB_TOKEN scopes, as GitHub names them. */
export const PERMISSION_SCOPES = [
  "actions",
  "attestations",
  "checks",
  "contents",
  "deployments",
  "discussions",
  "id-token",
  "issues",
  "models",
  "packages",
  "pages",
  "pull-requests",
  "repository-projects",
  "security-events",
  "statuses",
] as const;

export type PermissionLevel = "read" | "write" | "none";
export type Permissions = Partial<Record<(typeof PERMISSION_SCOPES)[number], PermissionLevel>>;

/**
 * Resolve `permissions:` (job level, else workflow level) to a scope map. `null` means neither
 * sets it: GitHub then applies the repository's default token permissions, which the server owns.
 * "If you specify the access for any of these permissions, all of those that are not specified
 * are set to none" (Actions docs, "Assigning permissions to jobs").
 */
export function resolvePermissions(wf: WorkflowSpec, job: JobSpec): Permissions | null {
  const p = job.permissions !== undefined ? job.permissions : wf.permissions;
  if (p === undefined || p === null) return null;
  const all = (level: PermissionLevel): Permissions =>
    Object.fromEntries(PERMISSION_SCOPES.filter((s) => !(s === "id-token" && level === "read")).map((s) => [s, level]));
  if (p === "read-all") return all("read");
  if (p === "write-all") return all("write");
  if (typeof p !== "object" || Array.isArray(p))
    throw new WorkflowError(`Invalid workflow file: permissions must be read-all, write-all or a mapping`);
  const out: Permissions = Object.fromEntries(PERMISSION_SCOPES.map((s) => [s, "none" as PermissionLevel]));
  for (const [scope, level] of Object.entries(p as Record<string, unknown>)) {
    if (!(PERMISSION_SCOPES as readonly string[]).includes(scope))
      throw new WorkflowError(`Invalid workflow file: unknown permission scope '${scope}'`);
    if (level !== "read" && level !== "write" && level !== "none") {
      throw new WorkflowError(`Invalid workflow file: permission '${scope}' must be read, write or none`);
    }
    out[scope as keyof Permissions] = level;
  }
  return out;
}

export interface Concurrency {
  group: string;
  cancelInProgress: boolean;
}

function resolveOneConcurrency(value: unknown, ctx: ExpressionContext): Concurrency | null {
  if (value === undefined || value === null) return null;
  if (typeof value === "string") return { group: interpolateString(value, ctx), cancelInProgress: false };
  if (typeof value === "object" && !Array.isArray(value)) {
    const v = value as { group?: unknown; "cancel-in-progress"?: unknown };
    if (v.group === undefined) throw new WorkflowError("Invalid workflow file: concurrency.group is required");
    const cip = interpolate(v["cancel-in-progress"] ?? false, ctx);
    return { group: interpolateString(v.group, ctx), cancelInProgress: cip === true || cip === "true" };
  }
  throw new WorkflowError("Invalid workflow file: concurrency must be a string or a mapping");
}

/** Workflow-level and job-level `concurrency`, with their `${{ }}` evaluated. */
export function resolveConcurrency(
  wf: WorkflowSpec,
  job: JobSpec,
  ctx: ExpressionContext,
): { workflow: Concurrency | null; job: Concurrency | null } {
  return { workflow: resolveOneConcurrency(wf.concurrency, ctx), job: resolveOneConcurrency(job.concurrency, ctx) };
}
