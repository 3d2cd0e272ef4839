/**
 * The demo's person and budgets: a task whose attempt was stopped at its budget (held `budget`, its
 * work pushed) gets `/forge budget <task> +1` on its pull request, as a person with write access
 * would comment it, once per attempt. The App then raises the task's budget and retries it.
 */
import type { Octokit } from "@octokit/rest";
import type { Journal } from "../core/journal.js";
import { DEMO_OWNER, DEMO_REPO } from "./project.js";

/** Dollars the demo's person adds. */
export const DEMO_BUDGET_RAISE = 1;

export async function raiseBudgets(user: Octokit, j: Journal, raised: Set<string>, tell: (line: string) => void): Promise<void> {
  for (const t of j.tasks) {
    const key = `${t.id}:${t.attempt}`;
    if (t.hold !== "budget" || t.prNumber === undefined || raised.has(key)) continue;
    raised.add(key);
    const body = `/forge budget ${t.id} +${DEMO_BUDGET_RAISE}`;
    await user.rest.issues.createComment({ owner: DEMO_OWNER, repo: DEMO_REPO, issue_number: t.prNumber, body });
    tell(`commented \`${body}\` on #${t.prNumber} (${t.lastError ?? "stopped at its budget"})`);
  }
}
