/**
 * The walkthrough of a resumed attempt says so (docs/executor.md#resuming): which attempt's work it
 * continued, why that one ended, from which head and stage, and whose agent session it continued —
 * the runner's words, from the App's dispatch and the stages it ran.
 */
import type { StageProgress } from "../../../src/agent/stages/index.js";
import type { ResumeContext } from "../../../src/core/schemas/checkpoint.js";
import type { DispatchAgent } from "../../../src/core/agents.js";
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
const ADAPTER_NAMES: Record<string, string> = {
  claude: "Claude Code ",
  codex: "Codex ",
  gemini: "Gemini CLI ",
  opencode: "opencode ",
  qwen: "Qwen Code ",
  copilot: "Copilot CLI ",
  command: "",
};

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

/** The agent's name as people know it. */
export function agentName(adapter: string): string {
  return (ADAPTER_NAMES[adapter] ?? `${adapter} `).trim() || "a command agent";
}

/**
 * The walkthrough of an attempt that runs on another agent than the attempt before it says so
 * (docs/executor.md#agent-fallback): on which agent, after which, and why — the App's words, from
 * its dispatch. The work and the progress notes went on; the earlier agent's session did not.
 */
export function agentSection(a: TaskAttempt, agent: DispatchAgent): string | undefined {
  if (!agent.switched) return undefined;
  const prior = a.ids.attempt > 1 ? `attempt ${a.ids.attempt - 1}'s agent, ` : "";
  return [
    "## Agent",
    "",
    `Attempt ${a.ids.attempt} ran on ${agentName(agent.adapter)} (\`${agent.adapter}\`) instead of ${prior}${agentName(agent.switched.from)} (\`${agent.switched.from}\`): ${agent.switched.reason.replace(/\s+/g, " ")}.`,
  ].join("\n");
}
