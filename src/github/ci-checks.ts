/**
 * The repository's own checks on a commit, as a fix revision needs them (docs/executor.md#iterations):
 * whether they are all done, and for each failing one its summary, annotations and the end of its
 * log. Commit statuses (the legacy Statuses API that Jenkins or CircleCI report to) count the same
 * way, by context name: `failure` and `error` fail, `pending` waits. Forge's own check runs
 * (`forge · <task>`) are never counted, and neither is any check or status that neither the config
 * (`required_checks`) nor the integration branch's rules require (./required-checks.ts): anyone
 * whose token may post a commit status or a check run could
 * otherwise start fix revisions with their own text in the agent's prompt. Everything returned is
 * text from CI — written by the repository's code or a CI service — so the caller bounds and quotes
 * it as CI output; here it is only cut.
 */
import { bounded, FEEDBACK_LIMITS } from "../core/feedback.js";
import type { LeafInput } from "../core/inputs.js";
import type { Octokit } from "./octokit-port.js";

export interface FailingCheck {
  name: string;
  conclusion: string;
  title: string;
  summary: string;
  annotations: string[];
  log: string;
}

export interface CiChecks {
  /** Some of the checks considered have not completed yet, or not reported at all. */
  pending: boolean;
  /** Some of the checks considered reported and have not completed yet (a queued or running check run, a pending status). */
  running: boolean;
  /** The names that nothing has reported on the head: no check run and no commit status. */
  missing: string[];
  failing: FailingCheck[];
}

/**
 * What the required checks of a head say to a merge: `wait` while one runs, or while one the
 * config names (`configured`) has not reported; `red` when they are done and some failed; else `go`.
 * A check only the branch's rules name that nothing has reported is not waited for: the merge is
 * tried, and GitHub's refusal says which check it expects (docs/executor.md#merging-under-the-repositorys-rules).
 */
export function ciVerdict(ci: CiChecks, configured: readonly string[]): "wait" | "red" | "go" {
  if (ci.running || ci.missing.some((n) => configured.includes(n))) return "wait";
  return ci.failing.length ? "red" : "go";
}

/** Bounds on what is read: a few checks, their first annotations, the last lines of a log. */
export const CI_LIMITS = { checks: 5, summary: 1_000, annotations: 10, annotation: 300, logLines: 40, logChars: 3_000 } as const;

const cut = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}…` : text);

/** Forge's own check runs are named `forge · <task>`, `forge · plan` (src/core/render/run-messages.ts). */
const isForges = (name: string) => name.startsWith("forge · ");

export async function readCiChecks(
  octokit: Octokit,
  r: { owner: string; repo: string },
  headSha: string,
  names: readonly string[],
): Promise<CiChecks> {
  // Only the checks the config requires count; none required, none count.
  if (names.length === 0) return { pending: false, running: false, missing: [], failing: [] };
  const { data } = await octokit.rest.checks.listForRef({ ...r, ref: headSha, filter: "latest", per_page: 100 });
  const considered = data.check_runs.filter((c) => !isForges(c.name) && names.includes(c.name));
  // The latest status of each context (the combined status lists one per context).
  const { data: combined } = await octokit.rest.repos.getCombinedStatusForRef({ ...r, ref: headSha, per_page: 100 });
  const statuses = combined.statuses.filter((st) => !isForges(st.context) && names.includes(st.context));
  const running = considered.some((c) => c.status !== "completed") || statuses.some((st) => st.state === "pending");
  const missing = names.filter((n) => !considered.some((c) => c.name === n) && !statuses.some((st) => st.context === n));
  const pending = running || missing.length > 0;
  const failed = considered.filter((c) => c.status === "completed" && (c.conclusion === "failure" || c.conclusion === "timed_out"));
  const failing: FailingCheck[] = [];
  for (const c of failed.slice(0, CI_LIMITS.checks)) {
    const annotations = c.output.annotations_count
      ? (await octokit.rest.checks.listAnnotations({ ...r, check_run_id: c.id, per_page: CI_LIMITS.annotations })).data.map((a) =>
          cut(`${a.path}:${a.start_line} ${a.annotation_level}: ${a.message ?? ""}`, CI_LIMITS.annotation),
        )
      : [];
    failing.push({
      name: cut(c.name, 200),
      conclusion: c.conclusion ?? "failure",
      title: cut(c.output.title ?? "", 200),
      summary: cut(c.output.summary ?? "", CI_LIMITS.summary),
      annotations,
      log: c.app?.slug === "github-actions" ? await jobLogTail(octokit, r, c.id) : "",
    });
  }
  for (const st of statuses.filter((x) => x.state === "failure" || x.state === "error")) {
    if (failing.length >= CI_LIMITS.checks) break;
    failing.push({
      name: cut(st.context, 200),
      conclusion: st.state,
      title: "",
      summary: cut([st.description ?? "", st.target_url ? `Details: ${st.target_url}` : ""].filter(Boolean).join("\n"), CI_LIMITS.summary),
      annotations: [],
      log: "",
    });
  }
  return { pending, running, missing, failing };
}

/** The last lines of an Actions job's log (a check run of GitHub Actions has its job's id); "" when it cannot be read. */
async function jobLogTail(octokit: Octokit, r: { owner: string; repo: string }, jobId: number): Promise<string> {
  try {
    const res = await octokit.rest.actions.downloadJobLogsForWorkflowRun({ ...r, job_id: jobId });
    const text = typeof res.data === "string" ? res.data : Buffer.from(res.data as ArrayBuffer).toString("utf8");
    return cut(text.split("\n").slice(-CI_LIMITS.logLines).join("\n"), CI_LIMITS.logChars);
  } catch {
    return "";
  }
}

/**
 * The `checks.failed` input of an attempt's head: the failing checks' names, and what a fix
 * revision's agent reads of them (quoted as untrusted text by the job), bounded.
 */
export function checksFailedInput(
  ref: { taskId: string; attempt: number },
  headSha: string,
  failing: readonly FailingCheck[],
): Extract<LeafInput, { kind: "checks.failed" }> {
  const details = failing
    .map((c) =>
      [
        `### ${c.name} (${c.conclusion})${c.title ? `: ${c.title}` : ""}`,
        c.summary,
        c.annotations.length ? `Annotations:\n${c.annotations.map((a) => `- ${a}`).join("\n")}` : "",
        c.log ? `End of the log:\n${c.log}` : "",
      ]
        .filter(Boolean)
        .join("\n\n"),
    )
    .join("\n\n");
  return {
    kind: "checks.failed",
    taskId: ref.taskId,
    attempt: ref.attempt,
    headSha,
    checks: failing.map((c) => c.name),
    details: bounded(details, FEEDBACK_LIMITS.details),
  };
}

/** Failures on a merge group (the merge queue's test of a pull request merged onto its base's tip), as the agent reads them: there, not on the pull request's own head. */
export function onGroup(failing: readonly FailingCheck[], group: string, base: string): FailingCheck[] {
  const where = `Failed in the merge queue: on merge group ${group.slice(0, 7)}, this pull request merged onto the tip of ${base} (the checks of the pull request's own head passed).`;
  return failing.map((c) => ({ ...c, summary: `${where}\n\n${c.summary}` }));
}
