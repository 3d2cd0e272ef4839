/**
 * Step 7 of a task job, for an escalation: the agent's Change Request (exit 11), completed with the
 * fields the runner owns — its id, the run, the emitter, the time — and checked against its schema
 * (src/agent/change-request.ts). The stage layer already sent an invalid one back to the agent once
 * (src/agent/stages/reports.ts); one still invalid here fails the attempt with its problems, so the
 * App never opens an issue from a document that is not one.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { readAgentText } from "../../../src/agent/agent-files.js";
import { completeChangeRequest, problemList } from "../../../src/agent/change-request.js";
import { EXIT_CODES } from "../../../src/core/exit-codes.js";
import type { ChangeRequestFrontmatter } from "../../../src/core/schemas/change-request.js";
import type { AgentEnd, Verdict } from "./agent.js";
import type { TaskAttempt } from "./context.js";

export interface AttemptReports {
  /** The completed Change Request of an escalation, written to the session's `change-request.md`. */
  changeRequest?: ChangeRequestFrontmatter;
}

/** The id the App gives the attempt's Change Request (src/core/decide/change-requests.ts). */
export const changeRequestId = (taskId: string, attempt: number) => `cr-${taskId}-${attempt}`;

export async function completeReports(a: TaskAttempt, end: AgentEnd, verdict: Verdict): Promise<AttemptReports> {
  if (verdict.exitCode !== EXIT_CODES.NEEDS_ESCALATION) return {};
  const { runId, taskId, attempt } = a.ids;
  const session = path.join(a.sessionDir, "change-request.md");
  // The agent's file, never read through a link (src/agent/agent-files.ts): a refused one is absent.
  const text = await readAgentText(a.sessionDir, end.outcome.changeRequestPath ?? session, (m) => void a.warnings.push(m));
  const completed = completeChangeRequest(text, {
    id: changeRequestId(taskId, attempt),
    run_id: runId,
    emitted_by: taskId,
    emitted_at: new Date(a.now()).toISOString(),
  });
  if (!completed.ok) {
    verdict.exitCode = EXIT_CODES.FAILURE;
    verdict.errors.push(`the agent escalated (exit 11) without a valid Change Request: ${problemList(completed.problems)}`);
    return {};
  }
  await writeFile(session, completed.markdown);
  return { changeRequest: completed.frontmatter };
}
