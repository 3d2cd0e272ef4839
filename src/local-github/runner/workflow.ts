// Workflow files read by GitHub's own parser (@actions/workflow-parser): the errors GitHub refuses a
// file with, and the file as the runner needs it — jobs and steps whose values keep their `${{ }}`
// for the runner to evaluate (expressions.ts), with the ids and `if:` conditions GitHub gives them —
// and the job-level facts the server needs before it runs a job (permissions, concurrency).
import { evaluateString, evaluateTemplate, Expr, type ExpressionContext, type Template } from "./expressions.js";
import {
  convertWorkflowTemplate,
  getWorkflowSchema,
  isBasicExpression,
  isBoolean,
  isMapping,
  isNumber,
  isSequence,
  isString,
  NoOperationTraceWriter,
  parseWorkflow,
  type TemplateContext,
  type TemplateToken,
  type TemplateValidationError,
  type WorkflowTemplate,
} from "./workflow-parser.js";

/** The path a workflow is read under when the caller names none (it prefixes the parser's messages). */
export const DEFAULT_WORKFLOW_PATH = ".github/workflows/workflow.yml";

/** One reason GitHub refuses a workflow file, as its parser words it: `<path> (Line: 5, Col: 9): Unexpected value 'foo'`. */
export interface WorkflowProblem {
  message: string;
  /** The message without its `<path> (Line: …, Col: …)` prefix. */
  reason: string;
  line?: number;
  column?: number;
}

/**
 * A workflow file GitHub refuses. GitHub runs nothing of it: a run of it fails at once with the
 * annotation "Invalid workflow file" on `<path>#L<line>` and this message, and a dispatch of it is
 * answered 422 (`dispatchRefusal`).
 */
export class WorkflowError extends Error {
  constructor(
    readonly path: string,
    readonly problems: WorkflowProblem[],
  ) {
    super(`The workflow is not valid. ${problems.map((p) => p.message).join(" ")}`);
    this.name = "WorkflowError";
  }

  /** The line GitHub's annotation points at: the first problem's. */
  get line(): number {
    return this.problems.find((p) => p.line !== undefined)?.line ?? 1;
  }

  /**
   * The 422 GitHub answers a dispatch of the file with ("Invalid Argument - failed to parse
   * workflow: (Line: 65, Col: 26): Unexpected symbol: '??'…", as `gh workflow run` prints it).
   */
  dispatchRefusal(): string {
    const where = (p: WorkflowProblem) => (p.line !== undefined ? `(Line: ${p.line}, Col: ${p.column ?? 1}): ` : "");
    return `Invalid Argument - failed to parse workflow: ${this.problems.map((p) => `${where(p)}${p.reason}`).join(", ")}`;
  }
}

/** Options of `defaults: run:` (workflow and job level). */
export interface RunDefaults {
  shell?: Template;
  "working-directory"?: Template;
}

export interface StepSpec {
  /** The step's `id:`, or the one GitHub gives a step without one (`__run`, `__actions_checkout`, `__run_2`…): its GITHUB_ACTION. */
  contextId: string;
  /** The step's own `id:` (`steps.<id>` of later expressions). */
  id?: string;
  /** Its condition as GitHub evaluates it: `success() && (…)` unless it calls a status function; `success()` without `if:`. */
  if: string;
  name?: Template;
  run?: Template;
  uses?: string;
  with?: Template;
  env?: Template;
  shell?: Template;
  "working-directory"?: Template;
  "timeout-minutes"?: Template;
  "continue-on-error"?: Template;
}

export interface JobSpec {
  id: string;
  /** Its condition as GitHub evaluates it (see StepSpec.if). */
  if: string;
  name?: Template;
  needs?: Template;
  "runs-on"?: Template;
  permissions?: Template;
  concurrency?: Template;
  env?: Template;
  defaults?: { run?: RunDefaults };
  "timeout-minutes"?: Template;
  "continue-on-error"?: Template;
  outputs?: Template;
  steps: StepSpec[];
  strategy?: Template;
  services?: Template;
  container?: Template;
  uses?: Template;
}

export interface WorkflowSpec {
  path: string;
  /** `name:` (never an expression on GitHub). */
  name?: string;
  /** The whole file as data, its expressions as `Expr`. */
  doc: Record<string, Template>;
  on: Template;
  env?: Template;
  permissions?: Template;
  concurrency?: Template;
  defaults?: { run?: RunDefaults };
  /** By id, in the file's order. */
  jobs: Record<string, JobSpec>;
}

/** What reading a workflow file gives: the workflow, or why GitHub refuses it (with what could be read). */
export type CheckedWorkflow =
  | { ok: true; workflow: WorkflowSpec }
  | { ok: false; error: WorkflowError; /** the file as data when it is YAML at all */ doc: Record<string, Template> | null };

function locationOf(token: TemplateToken, context: TemplateContext): string | undefined {
  const file = token.file === undefined ? undefined : context.getFileName(token.file);
  return file && token.line !== undefined ? `${file} (Line: ${token.line}, Col: ${token.col ?? 1})` : file;
}

/** A token of the parser as workflow data. */
export function toTemplate(token: TemplateToken, context: TemplateContext): Template {
  if (isString(token) || isNumber(token) || isBoolean(token)) return token.value;
  if (isBasicExpression(token))
    return new Expr(token.expression, token.source ?? `\${{ ${token.expression} }}`, locationOf(token, context));
  if (isSequence(token)) return [...token].map((t) => toTemplate(t, context));
  if (isMapping(token)) {
    const out: Record<string, Template> = {};
    for (const { key, value } of token) out[isString(key) ? key.value : key.toString()] = toTemplate(value, context);
    return out;
  }
  // null, or an `${{ insert }}`, which GitHub only allows in a few places the runner does not read
  return token.isExpression ? token.toString() : null;
}

function problemOf(e: TemplateValidationError): WorkflowProblem {
  const start = e.range?.start;
  return { message: e.message, reason: e.rawMessage, ...(start ? { line: start.line, column: start.column } : {}) };
}

const asMap = (t: Template | undefined): Record<string, Template> =>
  t !== null && typeof t === "object" && !Array.isArray(t) && !(t instanceof Expr) ? t : {};

/** The runner's view of a valid file: the parser's jobs and steps (ids, conditions) over the file's own values. */
function workflowOf(path: string, doc: Record<string, Template>, template: WorkflowTemplate): WorkflowSpec {
  const rawJobs = asMap(doc.jobs);
  const jobs: Record<string, JobSpec> = {};
  for (const job of template.jobs) {
    const id = job.id.value;
    const raw = asMap(rawJobs[id]);
    const rawSteps = Array.isArray(raw.steps) ? raw.steps : [];
    const steps = job.type === "job" ? job.steps : [];
    jobs[id] = {
      ...(raw as Omit<JobSpec, "id" | "if" | "steps">),
      id,
      if: job.if.expression,
      steps: steps.map((step, i) => {
        const rawStep = asMap(rawSteps[i]) as Omit<StepSpec, "contextId" | "if">;
        return { ...rawStep, contextId: step.id, if: "if" in step && step.if ? step.if.expression : "success()" };
      }),
    };
  }
  return {
    ...(doc as unknown as Omit<WorkflowSpec, "path" | "name" | "doc" | "jobs">),
    path,
    ...(typeof doc.name === "string" ? { name: doc.name } : {}),
    doc,
    jobs,
  };
}

async function check(text: string, path: string): Promise<CheckedWorkflow> {
  const parsed = parseWorkflow({ name: path, content: text }, new NoOperationTraceWriter());
  const doc = parsed.value ? (asMap(toTemplate(parsed.value, parsed.context)) as Record<string, Template>) : null;
  const template = parsed.value ? await convertWorkflowTemplate(parsed.context, parsed.value) : undefined;
  const problems = parsed.context.errors.getErrors().map(problemOf);
  if (problems.length > 0 || !doc || !template) {
    return {
      ok: false,
      error: new WorkflowError(path, problems.length ? problems : [{ message: "No workflow", reason: "No workflow" }]),
      doc,
    };
  }
  return { ok: true, workflow: workflowOf(path, doc, template) };
}

/**
 * Readies the parser now — its schema of workflow files (a tenth of a second or more) and its first
 * file — rather than while the first run waits for it.
 */
export function warmUpWorkflowParser(): void {
  getWorkflowSchema();
  void checkWorkflow("on: push\njobs:\n  warm-up:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ github.sha }}\n");
}

const checked = new Map<string, Promise<CheckedWorkflow>>();

/** Reads a workflow file as GitHub does (results are kept by path and text: files are read again and again). */
export function checkWorkflow(text: string, path = DEFAULT_WORKFLOW_PATH): Promise<CheckedWorkflow> {
  const key = `${path}\u0000${text}`;
  let result = checked.get(key);
  if (!result) {
    if (checked.size >= 500) checked.clear();
    result = check(text, path);
    checked.set(key, result);
  }
  return result;
}

/** The workflow of a file GitHub accepts; a file it refuses throws its WorkflowError. */
export async function readWorkflow(text: string, path = DEFAULT_WORKFLOW_PATH): Promise<WorkflowSpec> {
  const c = await checkWorkflow(text, path);
  if (!c.ok) throw c.error;
  return c.workflow;
}

export function selectJob(wf: WorkflowSpec, jobId?: string): [string, JobSpec] {
  const ids = Object.keys(wf.jobs);
  if (jobId === undefined) {
    if (ids.length !== 1) throw new Error(`The workflow has ${ids.length} jobs (${ids.join(", ")}); name the one to run with jobId`);
    return [ids[0]!, wf.jobs[ids[0]!]!];
  }
  const job = wf.jobs[jobId];
  if (!job) throw new Error(`The workflow has no job '${jobId}'`);
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
 * Resolve `permissions:` (job level, else workflow level; the parser has checked its scopes and
 * levels) to a scope map. `null` means neither sets it: GitHub then applies the repository's
 * default token permissions, which the server owns. "If you specify the access for any of these
 * permissions, all of those that are not specified are set to none" (Actions docs, "Assigning
 * permissions to jobs").
 */
export function resolvePermissions(wf: WorkflowSpec, job: JobSpec): Permissions | null {
  const p = job.permissions !== undefined ? job.permissions : wf.permissions;
  if (p === undefined || p === null) return null;
  const all = (level: PermissionLevel): Permissions =>
    Object.fromEntries(PERMISSION_SCOPES.filter((s) => !(s === "id-token" && level === "read")).map((s) => [s, level]));
  if (p === "read-all") return all("read");
  if (p === "write-all") return all("write");
  const out: Permissions = Object.fromEntries(PERMISSION_SCOPES.map((s) => [s, "none" as PermissionLevel]));
  for (const [scope, level] of Object.entries(asMap(p)))
    if ((PERMISSION_SCOPES as readonly string[]).includes(scope)) out[scope as keyof Permissions] = level as PermissionLevel;
  return out;
}

export interface Concurrency {
  group: string;
  cancelInProgress: boolean;
}

function resolveOneConcurrency(value: Template | undefined, ctx: ExpressionContext): Concurrency | null {
  if (value === undefined || value === null) return null;
  const v = evaluateTemplate(value, ctx);
  if (typeof v === "string") return { group: v, cancelInProgress: false };
  const m = asMap(value);
  if (m.group === undefined) return null;
  const cip = evaluateTemplate(m["cancel-in-progress"] ?? false, ctx);
  return { group: evaluateString(m.group, ctx), cancelInProgress: cip === true || cip === "true" };
}

/** Workflow-level and job-level `concurrency`, with their `${{ }}` evaluated. */
export function resolveConcurrency(
  wf: WorkflowSpec,
  job: JobSpec,
  ctx: ExpressionContext,
): { workflow: Concurrency | null; job: Concurrency | null } {
  return { workflow: resolveOneConcurrency(wf.concurrency, ctx), job: resolveOneConcurrency(job.concurrency, ctx) };
}
