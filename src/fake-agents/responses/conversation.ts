// Reading a Responses API request's conversation: which turn it asks for, the outputs of the last
// turn's tool calls, the text of its messages, and tool calls left without an output.
//
// Which turn to answer is derived from the conversation, not from a request counter: every call id
// and message id this server hands out carries its turn number (`call_forge_<turn>_<n>`,
// `msg_forge_<turn>`), and the client sends them back in `input` (Codex runs with `store: false`,
// so each request carries the whole conversation). Turn k is answered when the highest turn number
// in the input is k − 1. A client that retries (after a 429, a dropped stream) gets the same turn
// again, and requests that offer no tools do not move the script.
import type { ResponsesRequest, ToolOutput } from "./script.js";

const TURN_TAG = /^(?:call|msg|rs|fc|ctc)_forge_(\d+)(?:_|$)/;

/** How many of this server's responses the conversation already holds (highest turn tag + 1). */
export function turnOf(body: ResponsesRequest): number {
  let turns = 0;
  for (const item of body.input ?? []) {
    for (const key of ["call_id", "id"]) {
      const m = typeof item[key] === "string" ? TURN_TAG.exec(item[key]) : null;
      if (m) turns = Math.max(turns, Number(m[1]) + 1);
    }
  }
  return turns;
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return (content as Array<Record<string, unknown>>).map((c) => (typeof c.text === "string" ? c.text : "")).join("\n");
}

export function messagesText(body: ResponsesRequest, role: string): string {
  return (body.input ?? [])
    .filter((i) => (i.type === "message" || i.type === undefined) && i.role === role)
    .map((i) => textOf(i.content))
    .join("\n");
}

function outputText(output: unknown): string {
  if (typeof output === "string") return output;
  if (output && typeof output === "object" && typeof (output as { content?: unknown }).content === "string")
    return (output as { content: string }).content;
  if (Array.isArray(output)) return textOf(output);
  return JSON.stringify(output ?? "");
}

/** The outputs of the tool calls of the last response in the conversation (this server's call ids tell which those are). */
export function lastToolOutputs(body: ResponsesRequest): ToolOutput[] {
  const input = body.input ?? [];
  const last = turnOf(body) - 1;
  const outputs = input.filter((i) => i.type === "function_call_output" || i.type === "custom_tool_call_output");
  const ours = outputs.filter((i) => TURN_TAG.exec(String(i.call_id))?.[1] === String(last));
  const trailing: typeof outputs = [];
  if (ours.length === 0) {
    // Call ids this server did not hand out: the outputs at the end of the input.
    for (
      let i = input.length - 1;
      i >= 0 && (input[i]!.type === "function_call_output" || input[i]!.type === "custom_tool_call_output");
      i--
    )
      trailing.unshift(input[i]!);
  }
  return (ours.length > 0 ? ours : trailing).map((i) => ({ call_id: String(i.call_id), output: outputText(i.output) }));
}

/** The API's complaint when a tool call in the input has no output, else null. */
export function unansweredToolCalls(body: ResponsesRequest): string | null {
  const input = body.input ?? [];
  const answered = new Set(
    input.filter((i) => i.type === "function_call_output" || i.type === "custom_tool_call_output").map((i) => String(i.call_id)),
  );
  const missing = input
    .filter((i) => (i.type === "function_call" || i.type === "custom_tool_call") && !answered.has(String(i.call_id)))
    .map((i) => String(i.call_id));
  return missing.length > 0 ? `No tool output found for function call ${missing[0]}.` : null;
}
