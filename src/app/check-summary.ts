/**
 * The summary of a task attempt's check run: the attempt, what it changed, why it failed, a link
 * to its execution report at the record commit, what a person must do, the run tracker.
 */
import type { Effect } from "../core/effects.js";
import type { Journal, TaskState } from "../core/journal.js";
import { runSpent } from "../core/budget.js";
import { executionReportPath } from "../core/layout.js";
import { attemptNumbered } from "../core/task-rules.js";
import { repoPage, type RepoOnWeb } from "../github/web-url.js";
import type { RunFacts } from "./run-store.js";

export function checkSummary(
  /** The run, and its repository on the GitHub the App talks to (links go there, not to github.com). */
  ctx: { journal: Journal; facts: Pick<RunFacts, "trackerIssue">; repo: RepoOnWeb },
  t: TaskState | undefined,
  effect: Pick<Extract<Effect, { kind: "UpsertCheckRun" }>, "taskId" | "attempt" | "status">,
  held: boolean,
): string {
  const lines = [`**Task** \`${effect.taskId}\` · attempt ${effect.attempt} · run \`${ctx.journal.runId}\``, ""];
  const a = attemptNumbered(t, effect.attempt);
  if (t && a) {
    if (t.confidence !== undefined) lines.push(`Confidence: ${t.confidence}`);
    if (t.filesChanged?.length) lines.push(`Files changed: ${t.filesChanged.map((f) => `\`${f}\``).join(", ")}`);
    if (t.lastError && (effect.status === "FAILED" || effect.status === "STALE")) lines.push(`Error: ${t.lastError}`);
    if (t.spentUsd !== undefined)
      lines.push(`Spend: $${t.spentUsd.toFixed(2)} for this task · $${runSpent(ctx.journal).toFixed(2)} for the run`);
    // The runner commits the report with the attempt's record; the record commit is its head.
    if (a.recordSha)
      lines.push(
        `Execution report: [execution-report.md](${repoPage(ctx.repo, `blob/${a.recordSha}/${executionReportPath(ctx.journal.runId, t.id, t.attempts)}`)})`,
      );
    if (effect.status === "MERGE_READY" && held)
      lines.push(
        "",
        "This pull request changes protected paths; it merges once a person with write access comments `/forge approve` on it:",
        ...(a.revision.protectedPaths ?? []).slice(0, 50).map((p) => `- \`${p}\``),
      );
    if (a.hold === "exhausted")
      lines.push("", `Retries exhausted after ${t.attempts} attempts. Comment \`/forge retry ${t.id}\` to try again.`);
  }
  if (ctx.facts.trackerIssue !== undefined) lines.push("", `Run tracker: #${ctx.facts.trackerIssue}`);
  return lines.join("\n");
}
