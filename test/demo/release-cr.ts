// The title the `release` refinery's agent gives its Change Request in the demo: the scripted
// behaviour of its first attempt (examples/plans/textkit/tasks/release.md), which both the scripted
// agent and the Claude Code script write.
import { readFileSync } from "node:fs";
import { behaviourFor, parseScriptedTask } from "../../src/fake-agents/scripted-agent.js";

export function releaseCrTitle(): string {
  const task = parseScriptedTask(readFileSync("examples/plans/textkit/tasks/release.md", "utf8"));
  const title = behaviourFor(task, 1).change_request?.title;
  if (!title) throw new Error("release.md scripts no Change Request title for its first attempt");
  return title;
}
