/**
 * What the scripted Anthropic Messages server answers when `forge demo --agent copilot` runs the real
 * GitHub Copilot CLI (bring-your-own-key, src/agent/adapters/copilot.ts): the turns of the Claude Code
 * script (claude-script.ts `demoPlan`, the scripted agent's work as real tool calls), each tool call
 * in Copilot CLI's own tools — Read → `view`, Edit → `edit`, Bash → `bash`, and Write → `create`
 * where the CLI's `create` can do it (a new file in a folder that is there), else `bash` writing the
 * file through a here-document (`create` refuses a file that exists, as the walkthrough's template
 * does, and makes no folders).
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import path from "node:path";
import type { ScriptedToolCall, ScriptedTurn, TurnRequest } from "../fake-agents/model-server.js";
import { copilotTools } from "../fake-agents/copilot.js";
import { demoPlan, type CaptainAnswer } from "./claude-script.js";

/** A shell word: the path as one argument, whatever it holds. */
const shellWord = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/** A here-document delimiter that is no line of `content`. */
function delimiter(content: string): string {
  const lines = new Set(content.split("\n"));
  let d = "FORGE_EOF";
  for (let n = 1; lines.has(d); n++) d = `FORGE_EOF_${n}`;
  return d;
}

/** A shell command writing `content` to `file` exactly (its folder made first). */
export function writeCommand(file: string, content: string): string {
  const d = delimiter(content);
  const mkdir = `mkdir -p -- ${shellWord(path.dirname(file))}`;
  // A here-document ends its text with a newline: a text without one is printed back without it.
  return content.endsWith("\n") || content === ""
    ? `${mkdir} && cat > ${shellWord(file)} <<'${d}'\n${content}${d}`
    : `${mkdir} && printf '%s' "$(cat <<'${d}'\n${content}\n${d}\n)" > ${shellWord(file)}`;
}

function copilotCall(c: ScriptedToolCall): ScriptedToolCall {
  const i = c.input;
  const file = String(i.file_path ?? "");
  switch (c.name) {
    case "Read":
      return copilotTools.view(file);
    case "Write": {
      const content = String(i.content ?? "");
      return !existsSync(file) && existsSync(path.dirname(file)) && content !== ""
        ? copilotTools.create(file, content)
        : copilotTools.bash(writeCommand(file, content), `Write ${path.basename(file)}`);
    }
    case "Edit":
      return copilotTools.edit(file, String(i.old_string ?? ""), String(i.new_string ?? ""));
    case "Bash":
      return copilotTools.bash(String(i.command), String(i.description ?? "Run a command"));
    default:
      throw new Error(`the demo's Copilot script has no tool for ${c.name}`);
  }
}

/** One turn of the Claude Code script in Copilot CLI's tools. */
export function copilotTurn(t: ScriptedTurn): ScriptedTurn {
  return {
    ...(t.text !== undefined ? { text: t.text } : {}),
    ...(t.toolCalls?.length ? { toolCalls: t.toolCalls.map(copilotCall) } : {}),
  };
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return (content as Array<{ text?: unknown }>).map((b) => (typeof b.text === "string" ? b.text : "")).join("\n");
}

/** Forge's stage prompt among the user messages (the CLI puts the date and time before it). */
function stagePrompt(req: TurnRequest): string {
  const users = (req.body.messages ?? []).filter((m) => m.role === "user").map((m) => textOf(m.content));
  return users.find((t) => t.includes("- Repository checkout:")) ?? users[0] ?? "";
}

/** A Messages server script for any number of concurrent Copilot CLI sessions of the demo. */
export function demoCopilotScript(maxTurns = 12, captain?: CaptainAnswer): Array<(req: TurnRequest) => ScriptedTurn> {
  // Planned once per conversation (keyed by its prompt), as the Claude Code script is: later turns
  // must not see the files earlier turns wrote as "existing" (nor choose `bash` over `create`).
  const plans = new Map<string, ScriptedTurn[]>();
  const turn = (req: TurnRequest): ScriptedTurn => {
    const text = stagePrompt(req);
    const key = createHash("sha256").update(text).digest("hex");
    let p = plans.get(key);
    if (!p) plans.set(key, (p = demoPlan(text, captain).map(copilotTurn)));
    return p[req.turn] ?? { text: "Done.\nFORGE_EXIT=0" };
  };
  return Array.from({ length: maxTurns }, () => turn);
}
