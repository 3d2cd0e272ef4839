// Encoding a scripted turn as a Chat Completions answer: the streamed chunks (text in pieces, tool
// calls with their arguments in pieces, the finish, the usage chunk `stream_options.include_usage`
// asks for) and the one JSON body of an answer not streamed.
import { randomBytes } from "node:crypto";
import type { ChatTurn } from "./script.js";

export function estimateTokens(value: unknown): number {
  return Math.max(1, Math.ceil(JSON.stringify(value ?? "").length / 4));
}

function pieces(s: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
  return out;
}

/** Call ids carry the turn (`call_forge_<turn>_<n>`), as the Responses server's do. */
const callId = (turn: number, n: number) => `call_forge_${turn}_${n}_${randomBytes(3).toString("hex")}`;

function usageOf(turn: ChatTurn, promptTokens: number): Record<string, number> {
  const completion = estimateTokens(turn);
  return { prompt_tokens: promptTokens, completion_tokens: completion, total_tokens: promptTokens + completion };
}

/** The chunks of a streamed answer, in order (without the final `[DONE]`). */
export function chatChunks(
  turn: ChatTurn,
  o: { model: string; promptTokens: number; chunkSize: number; index: number; includeUsage: boolean },
): Array<Record<string, unknown>> {
  const id = `chatcmpl-${randomBytes(8).toString("hex")}`;
  const created = Math.floor(Date.now() / 1000);
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
    id,
    object: "chat.completion.chunk",
    created,
    model: o.model,
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...(o.includeUsage ? { usage: null } : {}),
  });
  const out: Array<Record<string, unknown>> = [chunk({ role: "assistant", content: "" })];
  if (turn.reasoning) out.push(chunk({ reasoning_content: turn.reasoning }));
  for (const p of pieces(turn.text ?? "", o.chunkSize)) out.push(chunk({ content: p }));
  (turn.toolCalls ?? []).forEach((call, n) => {
    const args = JSON.stringify(call.args);
    out.push(chunk({ tool_calls: [{ index: n, id: callId(o.index, n), type: "function", function: { name: call.name, arguments: "" } }] }));
    for (const p of pieces(args, o.chunkSize)) out.push(chunk({ tool_calls: [{ index: n, function: { arguments: p } }] }));
  });
  out.push(chunk({}, (turn.toolCalls ?? []).length > 0 ? "tool_calls" : "stop"));
  if (o.includeUsage)
    out.push({ id, object: "chat.completion.chunk", created, model: o.model, choices: [], usage: usageOf(turn, o.promptTokens) });
  return out;
}

/** The one JSON body of an answer not streamed. */
export function chatBody(turn: ChatTurn, model: string, promptTokens: number, index: number): Record<string, unknown> {
  const calls = (turn.toolCalls ?? []).map((call, n) => ({
    id: callId(index, n),
    type: "function",
    function: { name: call.name, arguments: JSON.stringify(call.args) },
  }));
  return {
    id: `chatcmpl-${randomBytes(8).toString("hex")}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: { role: "assistant", content: turn.text ?? null, ...(calls.length > 0 ? { tool_calls: calls } : {}) },
        finish_reason: calls.length > 0 ? "tool_calls" : "stop",
      },
    ],
    usage: usageOf(turn, promptTokens),
  };
}
