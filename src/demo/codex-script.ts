/**
 * What the scripted Responses server answers when the real Codex CLI runs a job of the demo (its
 * tasks in `forge demo --agent mixed`): the turns of the Claude Code script (claude-script.ts
 * `demoPlan`, the scripted agent's work as real tool calls), each turn's tool calls in Codex's own
 * tools — the turn's writes and edits as one `apply_patch` (Write → `*** Add File`, which also
 * replaces a file that is there; Edit → an `*** Update File` hunk), Read → `exec_command` `cat`,
 * Bash → `exec_command`.
 */
import { createHash } from "node:crypto";
import type { ScriptedToolCall, ScriptedTurn } from "../fake-agents/model-server.js";
import type { ResponsesToolCall, ResponsesTurn, ResponsesTurnRequest } from "../fake-agents/responses/index.js";
import { demoPlan, type CaptainAnswer } from "./claude-script.js";

/** A shell word: the path as one argument, whatever it holds. */
const shellWord = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/** Lines of a patch section, each with its prefix (a text ending in a newline has no last empty line). */
const patchLines = (prefix: string, text: string) =>
  text
    .replace(/\n$/, "")
    .split("\n")
    .map((l) => `${prefix}${l}`);

/** The section of an `apply_patch` that a Write or an Edit is. */
function patchSection(c: ScriptedToolCall): string[] {
  const file = String(c.input.file_path);
  if (c.name === "Write") return [`*** Add File: ${file}`, ...patchLines("+", String(c.input.content ?? ""))];
  return [
    `*** Update File: ${file}`,
    "@@",
    ...patchLines("-", String(c.input.old_string ?? "")),
    ...patchLines("+", String(c.input.new_string ?? "")),
  ];
}

/** One turn of the Claude Code script in Codex's tools. */
export function codexTurn(t: ScriptedTurn): ResponsesTurn {
  const calls: ResponsesToolCall[] = [];
  const patch: string[] = [];
  for (const c of t.toolCalls ?? []) {
    if (c.name === "Write" || c.name === "Edit") patch.push(...patchSection(c));
    else if (c.name === "Read") calls.push({ name: "exec_command", arguments: { cmd: `cat -- ${shellWord(String(c.input.file_path))}` } });
    else if (c.name === "Bash") calls.push({ name: "exec_command", arguments: { cmd: String(c.input.command) } });
    else throw new Error(`the demo's Codex script has no tool for ${c.name}`);
  }
  if (patch.length) calls.push({ name: "apply_patch", input: ["*** Begin Patch", ...patch, "*** End Patch", ""].join("\n") });
  return { ...(t.text !== undefined ? { text: t.text } : {}), ...(calls.length ? { toolCalls: calls } : {}) };
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return (content as Array<{ text?: unknown }>).map((c) => (typeof c.text === "string" ? c.text : "")).join("\n");
}

/** Forge's stage prompt among the user messages (Codex sends its environment context first). */
function stagePrompt(req: ResponsesTurnRequest): string {
  for (const item of req.body.input ?? []) {
    if (item.role !== "user") continue;
    const text = textOf(item.content);
    if (text.includes("- Repository checkout:")) return text;
  }
  return req.userText;
}

/** A Responses server script for any number of concurrent Codex sessions of the demo. */
export function demoCodexScript(maxTurns = 12, captain?: CaptainAnswer): Array<(req: ResponsesTurnRequest) => ResponsesTurn> {
  // Planned once per conversation (keyed by its prompt), as the Claude Code script is.
  const plans = new Map<string, ResponsesTurn[]>();
  const turn = (req: ResponsesTurnRequest): ResponsesTurn => {
    const text = stagePrompt(req);
    const key = createHash("sha256").update(text).digest("hex");
    let p = plans.get(key);
    if (!p) plans.set(key, (p = demoPlan(text, captain).map(codexTurn)));
    return p[req.turn] ?? { text: "Done.\nFORGE_EXIT=0" };
  };
  return Array.from({ length: maxTurns }, () => turn);
}
