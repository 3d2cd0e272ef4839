// Encoding a scripted turn as the Responses API's answer: the output items, the usage, the response
// object, and the SSE events of a streamed response.
import { randomBytes } from "node:crypto";
import type { ResponsesTurn } from "./script.js";

export function hex(n: number): string {
  return randomBytes(n).toString("hex");
}

export function estimateTokens(value: unknown): number {
  return Math.max(1, Math.ceil(JSON.stringify(value ?? "").length / 4));
}

function chunks(s: string, size: number): string[] {
  if (s === "") return [""];
  const out: string[] = [];
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
  return out;
}

type OutputItem = Record<string, unknown> & { type: string; id: string };

function outputItems(turn: ResponsesTurn, index: number): OutputItem[] {
  const items: OutputItem[] = [];
  if (turn.reasoning !== undefined) {
    items.push({ type: "reasoning", id: `rs_forge_${index}_${hex(6)}`, summary: [{ type: "summary_text", text: turn.reasoning }] });
  }
  if (turn.text !== undefined && turn.text !== "") {
    items.push({
      type: "message",
      id: `msg_forge_${index}_${hex(6)}`,
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: turn.text, annotations: [] }],
    });
  }
  (turn.toolCalls ?? []).forEach((call, n) => {
    const callId = call.callId ?? `call_forge_${index}_${n}`;
    if (call.input !== undefined) {
      items.push({
        type: "custom_tool_call",
        id: `ctc_forge_${index}_${n}`,
        status: "completed",
        call_id: callId,
        name: call.name,
        input: call.input,
      });
    } else {
      items.push({
        type: "function_call",
        id: `fc_forge_${index}_${n}`,
        status: "completed",
        call_id: callId,
        name: call.name,
        arguments: JSON.stringify(call.arguments ?? {}),
      });
    }
  });
  if (items.length === 0) {
    items.push({
      type: "message",
      id: `msg_forge_${index}_${hex(6)}`,
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: "", annotations: [] }],
    });
  }
  return items;
}

function usageOf(inputTokens: number, items: OutputItem[]) {
  const outputTokens = estimateTokens(items);
  const reasoningTokens = items.filter((i) => i.type === "reasoning").reduce((n, i) => n + estimateTokens(i.summary), 0);
  return {
    input_tokens: inputTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: reasoningTokens },
    total_tokens: inputTokens + outputTokens,
  };
}

function responseObject(
  id: string,
  model: string,
  status: "in_progress" | "completed",
  output: OutputItem[],
  usage: ReturnType<typeof usageOf> | null,
) {
  return {
    id,
    object: "response",
    created_at: Math.floor(Date.now() / 1000),
    status,
    error: null,
    incomplete_details: null,
    model,
    output,
    parallel_tool_calls: true,
    tool_choice: "auto",
    tools: [],
    usage,
  };
}

/**
 * The SSE events of one streamed response, in the Responses API's order: `response.created`,
 * `response.in_progress`, then per output item `response.output_item.added`, its deltas and their
 * `.done`, `response.output_item.done`; last `response.completed` with the whole output and usage.
 * Every event carries `type` and a growing `sequence_number`.
 */
export function responsesSseEvents(
  turn: ResponsesTurn,
  model: string,
  inputTokens: number,
  turnIndex = 0,
  chunkSize = 24,
): Array<{ event: string; data: Record<string, unknown> }> {
  const id = `resp_forge_${turnIndex}_${hex(8)}`;
  const items = outputItems(turn, turnIndex);
  const events: Array<{ event: string; data: Record<string, unknown> }> = [];
  const push = (type: string, data: Record<string, unknown>) =>
    events.push({ event: type, data: { type, sequence_number: events.length, ...data } });
  push("response.created", { response: responseObject(id, model, "in_progress", [], null) });
  push("response.in_progress", { response: responseObject(id, model, "in_progress", [], null) });
  items.forEach((item, output_index) => {
    const item_id = item.id;
    if (item.type === "reasoning") {
      const text = (item.summary as Array<{ text: string }>)[0]!.text;
      push("response.output_item.added", { output_index, item: { ...item, summary: [] } });
      const part = { type: "summary_text", text: "" };
      push("response.reasoning_summary_part.added", { item_id, output_index, summary_index: 0, part });
      for (const delta of chunks(text, chunkSize))
        push("response.reasoning_summary_text.delta", { item_id, output_index, summary_index: 0, delta });
      push("response.reasoning_summary_text.done", { item_id, output_index, summary_index: 0, text });
      push("response.reasoning_summary_part.done", { item_id, output_index, summary_index: 0, part: { ...part, text } });
    } else if (item.type === "message") {
      const text = (item.content as Array<{ text: string }>)[0]!.text;
      push("response.output_item.added", { output_index, item: { ...item, status: "in_progress", content: [] } });
      const part = { type: "output_text", text: "", annotations: [] };
      push("response.content_part.added", { item_id, output_index, content_index: 0, part });
      for (const delta of chunks(text, chunkSize))
        push("response.output_text.delta", { item_id, output_index, content_index: 0, delta, logprobs: [] });
      push("response.output_text.done", { item_id, output_index, content_index: 0, text, logprobs: [] });
      push("response.content_part.done", { item_id, output_index, content_index: 0, part: { ...part, text } });
    } else if (item.type === "function_call") {
      const args = item.arguments as string;
      push("response.output_item.added", { output_index, item: { ...item, status: "in_progress", arguments: "" } });
      for (const delta of chunks(args, chunkSize)) push("response.function_call_arguments.delta", { item_id, output_index, delta });
      push("response.function_call_arguments.done", { item_id, output_index, arguments: args });
    } else {
      const input = item.input as string;
      push("response.output_item.added", { output_index, item: { ...item, status: "in_progress", input: "" } });
      for (const delta of chunks(input, chunkSize)) push("response.custom_tool_call_input.delta", { item_id, output_index, delta });
      push("response.custom_tool_call_input.done", { item_id, output_index, input });
    }
    push("response.output_item.done", { output_index, item });
  });
  push("response.completed", { response: responseObject(id, model, "completed", items, usageOf(inputTokens, items)) });
  return events;
}

/** The non-streamed JSON body of one response. */
export function responseBody(turn: ResponsesTurn, model: string, inputTokens: number, turnIndex = 0): Record<string, unknown> {
  const items = outputItems(turn, turnIndex);
  return responseObject(`resp_forge_${turnIndex}_${hex(8)}`, model, "completed", items, usageOf(inputTokens, items));
}
