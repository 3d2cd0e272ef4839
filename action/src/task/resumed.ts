/**
 * The walkthrough of a resumed attempt says so (docs/executor.md#resuming): which attempt's work it
 * continued, why that one ended, from which head and stage, and whose agent session it continued —
 * the runner's words, from the App's dispatch and the stages it ran.
 */
import type { StageProgress } from "../../../src/agent/stages/index.js";
import type { ResumeContext } from "../../../src/core/schemas/checkpoint.js";
import type { TaskAttempt } from "./context.js";

const ENDED: Record<ResumeContext["reason"], string> = {
  stale: "stalled or ran out of time",
  lost: "lost its job (it ended without a result, or its runner went away)",
  usage_limit: "was stopped by the model's usage limit",
  budget: "was stopped at its budget",
  failure: "failed",
  refinement: "was sent back by a quality gate",
};

/** The CLI whose session it is, as the walkthrough names it (a command agent's is just "the agent's session"). */
const ADAPTER_NAMES: Record<string, string> = { claude: "Claude Code ", codex: "Codex ", gemini: "Gemini CLI ", copilot: "Copilot CLI ", command: "" };

export function resumedSection(a: TaskAttempt, r: ResumeContext, progress: StageProgress | undefined): string {
  const lines = [
    "## Resumed",
    "",
    `Attempt ${a.ids.attempt} continued the work of attempt ${r.fromAttempt}, which ${ENDED[r.reason]}, on the same branch (\`${a.branch}\`) and pull request` +
      (r.head ? `, from its head \`${r.head.slice(0, 12)}\`.` : ", from the head it pushed."),
  ];
  // The stages done before the one it started at were the earlier attempt's (the sequence skipped them).
  const done: string[] = progress?.completed.map((c) => c.name) ?? [];
  const at = r.stage ? done.indexOf(r.stage) : -1;
  const skipped = at >= 0 ? done.slice(0, at) : done;
  if (r.stage) {
    lines.push(
      "",
      `It started at stage \`${r.stage}\`` +
        (skipped.length
          ? `; ${skipped.map((s) => `\`${s}\``).join(", ")} ${skipped.length === 1 ? "was" : "were"} done by attempt ${r.fromAttempt} and not run again.`
          : "."),
    );
  } else lines.push("", "Its checkpoint named no pending stage: every stage ran again, on the work already pushed.");
  if (r.session && r.session.adapter === a.deps.agent.name && r.stage)
    lines.push("", `The agent's ${ADAPTER_NAMES[r.session.adapter] ?? `${r.session.adapter} `}session \`${r.session.id}\` was resumed.`);
  return lines.join("\n");
}
