/**
 * What the scripted Gemini API server answers when `forge demo --agent gemini` runs the real Gemini
 * CLI: the turns of the Claude Code script (claude-script.ts `demoPlan`, the scripted agent's work as
 * real tool calls), each tool call in Gemini CLI's own tools — Read → `read_file`, Write →
 * `write_file`, Edit → `replace`, Bash → `run_shell_command`.
 */
import { createHash } from "node:crypto";
import type { ScriptedToolCall, ScriptedTurn } from "../fake-agents/model-server.js";
import type { GeminiToolCall, GeminiTurn, GeminiTurnRequest } from "../fake-agents/gemini/index.js";
import { demoPlan, type CaptainAnswer } from "./claude-script.js";

function geminiCall(c: ScriptedToolCall): GeminiToolCall {
  const i = c.input;
  switch (c.name) {
    case "Read":
      return { name: "read_file", args: { file_path: i.file_path } };
    case "Write":
      return { name: "write_file", args: { file_path: i.file_path, content: i.content } };
    case "Edit":
      return {
        name: "replace",
        args: { file_path: i.file_path, old_string: i.old_string, new_string: i.new_string, instruction: "The review's note." },
      };
    case "Bash":
      return { name: "run_shell_command", args: { command: i.command, description: i.description ?? "Run a command." } };
    default:
      throw new Error(`the demo's Gemini script has no tool for ${c.name}`);
  }
}

export function geminiTurn(t: ScriptedTurn): GeminiTurn {
  return {
    ...(t.text !== undefined ? { text: t.text } : {}),
    ...(t.toolCalls?.length ? { toolCalls: t.toolCalls.map(geminiCall) } : {}),
  };
}

/** Forge's stage prompt among the user contents (the CLI sends its own context first). */
function stagePrompt(req: GeminiTurnRequest): string {
  for (const c of req.body.contents ?? []) {
    if (c.role !== "user") continue;
    const text = (c.parts ?? []).map((p) => (typeof p.text === "string" ? p.text : "")).join("\n");
    if (text.includes("- Repository checkout:")) return text;
  }
  return req.userText;
}

/** A Gemini server script for any number of concurrent Gemini CLI sessions of the demo. */
export function demoGeminiScript(maxTurns = 12, captain?: CaptainAnswer): Array<(req: GeminiTurnRequest) => GeminiTurn> {
  // Planned once per conversation (keyed by its prompt), as the Claude Code script is.
  const plans = new Map<string, GeminiTurn[]>();
  const turn = (req: GeminiTurnRequest): GeminiTurn => {
    const text = stagePrompt(req);
    const key = createHash("sha256").update(text).digest("hex");
    let p = plans.get(key);
    if (!p) plans.set(key, (p = demoPlan(text, captain).map(geminiTurn)));
    return p[req.turn] ?? { text: "Done.\nFORGE_EXIT=0" };
  };
  return Array.from({ length: maxTurns }, () => turn);
}
