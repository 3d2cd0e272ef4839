/**
 * Which of the repository's workflows would report a required check on Forge's pull requests: a
 * job whose check run has that name (the job's `name`, else its key; a matrix adds ` (…)`, a called
 * workflow ` / <its job>`, an expression matches anything), in a workflow that a pull request into
 * the base or a push to the head branch starts, as its `branches` / `branches-ignore` filters say
 * (docs.github.com/actions/writing-workflows/workflow-syntax-for-github-actions#onpushpull_requestpull_request_targetpathspaths-ignore:
 * `*` is any text but `/`, `**` any text, a `!` pattern excludes what the ones before it included).
 * An approximation for a warning, never a refusal: paths filters and `if:` conditions are not read.
 */
import picomatch from "picomatch";
import YAML from "yaml";
import type { WorkflowFile } from "../../github/readiness.js";

export interface CiJob {
  /** the workflow file */
  file: string;
  /** the check run's name, as the workflow writes it */
  label: string;
  name: RegExp;
  pullRequest?: BranchFilter;
  push?: BranchFilter;
}

interface BranchFilter {
  branches?: string[];
  ignore?: string[];
}

const escape = (t: string): string => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The check run names a job reports, as a regular expression. */
function jobName(key: string, job: Record<string, unknown>): { label: string; name: RegExp } {
  const label = typeof job.name === "string" ? job.name : key;
  let source = label
    .split(/\$\{\{.*?\}\}/)
    .map(escape)
    .join(".*");
  const matrix = (job.strategy as { matrix?: unknown } | undefined)?.matrix !== undefined;
  if (matrix && !label.includes("${{")) source += "(?: \\(.*\\))?";
  if (typeof job.uses === "string") source += " / .*";
  return { label, name: new RegExp(`^${source}$`) };
}

/** A trigger's branch filter (`on.pull_request.branches` …); null when the event does not start the workflow. */
function filterOf(on: unknown, event: string): BranchFilter | null {
  if (typeof on === "string") return on === event ? {} : null;
  if (Array.isArray(on)) return on.includes(event) ? {} : null;
  if (!on || typeof on !== "object" || !(event in on)) return null;
  const spec = (on as Record<string, unknown>)[event];
  if (!spec || typeof spec !== "object") return {};
  const s = spec as Record<string, unknown>;
  const list = (v: unknown): string[] | undefined => (Array.isArray(v) ? v.map(String) : typeof v === "string" ? [v] : undefined);
  // A push filtered on tags alone never runs for a branch.
  if (
    event === "push" &&
    s.branches === undefined &&
    s["branches-ignore"] === undefined &&
    (s.tags !== undefined || s["tags-ignore"] !== undefined)
  )
    return null;
  const branches = list(s.branches);
  const ignore = list(s["branches-ignore"]);
  return { ...(branches ? { branches } : {}), ...(ignore ? { ignore } : {}) };
}

/** Whether a branch filter admits `branch`. */
export function admits(filter: BranchFilter, branch: string): boolean {
  const match = (p: string) => picomatch.isMatch(branch, p, { dot: true });
  if (filter.ignore) return !filter.ignore.some(match);
  if (!filter.branches) return true;
  let ok = false;
  for (const p of filter.branches) if (p.startsWith("!") ? match(p.slice(1)) : match(p)) ok = !p.startsWith("!");
  return ok;
}

/** The jobs of the repository's workflows, with the pull requests and pushes that start them (Forge's agent workflow left out). */
export function ciJobs(files: readonly WorkflowFile[], agentWorkflow: string): CiJob[] {
  const out: CiJob[] = [];
  for (const f of files) {
    if (f.path === agentWorkflow) continue;
    let doc: Record<string, unknown>;
    try {
      doc = (YAML.parse(f.text) ?? {}) as Record<string, unknown>;
    } catch {
      continue;
    }
    const pullRequest = filterOf(doc.on, "pull_request") ?? filterOf(doc.on, "pull_request_target");
    const push = filterOf(doc.on, "push");
    for (const [key, job] of Object.entries((doc.jobs ?? {}) as Record<string, Record<string, unknown> | null>)) {
      if (!job || typeof job !== "object") continue;
      out.push({ file: f.path, ...jobName(key, job), ...(pullRequest ? { pullRequest } : {}), ...(push ? { push } : {}) });
    }
  }
  return out;
}

/** The workflow files whose jobs report `check` on a pull request from `head` into `base` (by the pull request, or by a push to `head`). */
export function reportersOf(jobs: readonly CiJob[], check: string, base: string, head: string): string[] {
  const files = jobs
    .filter((j) => j.name.test(check) && ((j.pullRequest && admits(j.pullRequest, base)) || (j.push && admits(j.push, head))))
    .map((j) => j.file);
  return [...new Set(files)];
}

/** Whether any job of any workflow is named `check`, whatever starts it. */
export function namedAnywhere(jobs: readonly CiJob[], check: string): string[] {
  return [...new Set(jobs.filter((j) => j.name.test(check)).map((j) => j.file))];
}
