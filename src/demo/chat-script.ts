/**
 * What the scripted Chat Completions server answers when `forge demo --agent opencode` or
 * `--agent qwen` runs the real CLI: the turns of the Claude Code script (claude-script.ts `demoPlan`,
 * the scripted agent's work as real tool calls), each tool call in the CLI's own tools — opencode's
 * `read`, `write`, `edit`, `bash`; Qwen Code's `read_file`, `write_file`, `edit`, `run_shell_command`.
 */
import { createHash } from "node:crypto";
import type { ScriptedToolCall, ScriptedTurn } from "../fake-agents/model-server.js";
import type { ChatToolCall, ChatTurn, ChatTurnRequest } from "../fake-agents/chat/index.js";
import { demoPlan, type CaptainAnswer } from "./claude-script.js";

export type ChatCli = "opencode" | "qwen";

function opencodeCall(c: ScriptedToolCall): ChatToolCall {
  const i = c.input;
  switch (c.name) {
    case "Read":
      return { name: "read", args: { filePath: i.file_path } };
    case "Write":
      return { name: "write", args: { filePath: i.file_path, content: i.content } };
    case "Edit":
      return { name: "edit", args: { filePath: i.file_path, oldString: i.old_string, newString: i.new_string } };
    case "Bash":
      return { name: "bash", args: { command: i.command, description: i.description ?? "Run a command" } };
    default:
      throw new Error(`the demo's opencode script has no tool for ${c.name}`);
  }
}

function qwenCall(c: ScriptedToolCall): ChatToolCall {
  const i = c.input;
  switch (c.name) {
    case "Read":
      return { name: "read_file", args: { file_path: i.file_path } };
    case "Write":
      return { name: "write_file", args: { file_path: i.file_path, content: i.content } };
    case "Edit":
      return { name: "edit", args: { file_path: i.file_path, old_string: i.old_string, new_string: i.new_string } };
    case "Bash":
      return {
        name: "run_shell_command",
        args: { command: i.command, description: i.description ?? "Run a command", is_background: false },
      };
    default:
      throw new Error(`the demo's Qwen Code script has no tool for ${c.name}`);
  }
}

export function chatTurn(cli: ChatCli, t: ScriptedTurn): ChatTurn {
  const call = cli === "opencode" ? opencodeCall : qwenCall;
  return {
    ...(t.text !== undefined ? { text: t.text } : {}),
    ...(t.toolCalls?.length ? { toolCalls: t.toolCalls.map(call) } : {}),
  };
}

/** Forge's stage prompt among the user messages (a CLI may send context of its own first). */
function stagePrompt(req: ChatTurnRequest): string {
  for (const m of req.body.messages ?? []) {
    if (m.role !== "user") continue;
    const text =
      typeof m.content === "string"
        ? m.content
        : Array.isArray(m.content)
          ? (m.content as Array<{ text?: unknown }>).map((p) => (typeof p.text === "string" ? p.text : "")).join("\n")
          : "";
    if (text.includes("- Repository checkout:")) return text;
  }
  return req.userText;
}

/** A Chat Completions server script for any number of concurrent sessions of the demo's CLI. */
export function demoChatScript(cli: ChatCli, maxTurns = 12, captain?: CaptainAnswer): Array<(req: ChatTurnRequest) => ChatTurn> {
  // Planned once per conversation (keyed by its prompt), as the Claude Code script is.
  const plans = new Map<string, ChatTurn[]>();
  const turn = (req: ChatTurnRequest): ChatTurn => {
    const text = stagePrompt(req);
    const key = createHash("sha256").update(text).digest("hex");
    let p = plans.get(key);
    if (!p) plans.set(key, (p = demoPlan(text, captain).map((t) => chatTurn(cli, t))));
    return p[req.turn] ?? { text: "Done.\nFORGE_EXIT=0" };
  };
  return Array.from({ length: maxTurns }, () => turn);
}
