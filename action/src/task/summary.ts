/** The job summary of a task attempt: outcome, branch, commits, PR, timings, warnings, the walkthrough's figures. */
import type { CompletedWalkthrough } from "../../../src/agent/walkthrough.js";
import { EXIT_CODES, exitMeaning } from "../../../src/core/exit-codes.js";
import type { AgentResult } from "../../../src/core/schemas/agent-result.js";
import type { PullRef } from "../github.js";
import type { Timings } from "../job.js";
import type { Refusal } from "../protected-paths.js";

export function renderSummary(s: {
  prTitle: string;
  result: AgentResult;
  exitCode: number;
  error: string | undefined;
  completed: CompletedWalkthrough;
  branch: string;
  base: string;
  recordSha: string;
  pr: PullRef | undefined;
  timings: Timings;
  warnings: string[];
  refusals: Refusal[];
  jobUrl: string | undefined;
  serverUrl: string;
  repository: string;
}): string {
  const sec = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const lines = [
    `### ${s.exitCode === EXIT_CODES.SUCCESS ? "✅" : s.exitCode === EXIT_CODES.PARTIAL_SUCCESS ? "🟡" : "❌"} ${s.prTitle}`,
    "",
    "| | |",
    "| --- | --- |",
    `| Outcome | exit ${s.exitCode}: ${exitMeaning(s.exitCode)} |`,
    `| Branch | \`${s.branch}\` → \`${s.base}\` |`,
    `| Record commit | \`${s.recordSha}\` |`,
    ...(s.result.head_sha ? [`| Work commit | \`${s.result.head_sha}\` |`] : []),
    ...(s.pr ? [`| Pull request | [#${s.pr.number}](${s.pr.url}) |`] : []),
    `| Before the agent | ${sec(s.timings.beforeAgentMs)} |`,
    `| Agent | ${sec(s.timings.agentMs)} |`,
    `| After the agent | ${sec(s.timings.afterAgentMs)} |`,
    ...(s.timings.stallDetectedAfterMs !== undefined
      ? [
          `| Stall detected after | ${sec(s.timings.stallDetectedAfterMs)} of silence |`,
          `| Partial work pushed after | ${sec(s.timings.partialPushedAfterMs!)} of silence |`,
        ]
      : []),
    "",
  ];
  if (s.error) lines.push(`**Why:** ${s.error}`, "");
  if (s.warnings.length) lines.push("**Warnings**", "", ...s.warnings.map((w) => `- ${w}`), "");
  if (s.completed.ok) {
    const f = s.completed.frontmatter;
    lines.push(
      `Walkthrough: **${f.status}**, confidence ${f.confidence.toFixed(2)}, ${f.files_changed.length} files, ${f.tests.length} tests, ${f.risks.length} risks, ${f.followups.length} follow-ups.`,
      "",
    );
  }
  return lines.join("\n");
}
