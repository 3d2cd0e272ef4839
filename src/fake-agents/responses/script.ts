// What a script for the scripted Responses server is made of: turns, their tool calls, the request a
// script function sees, and Codex's tools as helpers for writing turns.

/**
 * One tool call of a scripted turn. A function tool (Codex: `exec_command`) takes `arguments`, sent
 * as a JSON string; a freeform custom tool (Codex: `apply_patch`) takes `input`, sent verbatim.
 */
export interface ResponsesToolCall {
  name: string;
  arguments?: Record<string, unknown>;
  input?: string;
  callId?: string;
}

/** A scripted model response: reasoning summary, text, tool calls (in this order; any may be left out). */
export interface ResponsesTurn {
  reasoning?: string;
  text?: string;
  toolCalls?: ResponsesToolCall[];
  /** Stream `response.created`, `response.in_progress` and the first item's opening events, then nothing more (the connection stays open): a model that stalls. */
  stall?: boolean;
}

/** A tool's output as the client sent it back (`function_call_output` / `custom_tool_call_output`). */
export interface ToolOutput {
  call_id: string;
  output: string;
}

/** What the script function sees when it is asked for a turn. */
export interface ResponsesTurnRequest {
  /** 0-based index of the turn (responses of this server already in the conversation). */
  turn: number;
  body: ResponsesRequest;
  /** Outputs of the tool calls of the previous turn. */
  toolOutputs: ToolOutput[];
  /** The text of every `user` message of the input, joined (the prompt, among Codex's context). */
  userText: string;
  /** The text of every `developer` message of the input, joined (Codex's instructions, Forge's system prompt). */
  developerText: string;
}

export type ResponsesScript = Array<ResponsesTurn | ((req: ResponsesTurnRequest) => ResponsesTurn)>;

export interface ResponsesRequest {
  model?: string;
  input?: Array<Record<string, unknown>>;
  instructions?: string;
  tools?: Array<{ type: string; name?: string }>;
  stream?: boolean;
  [key: string]: unknown;
}

/** Codex's tools, for writing scripts. */
export const codexTools = {
  /** `exec_command { cmd, workdir? }`: a shell command (Codex runs it in its sandbox). */
  exec: (cmd: string, workdir?: string): ResponsesToolCall => ({
    name: "exec_command",
    arguments: { cmd, ...(workdir ? { workdir } : {}) },
  }),
  /** `apply_patch`, freeform: the whole patch text. */
  applyPatch: (patch: string): ResponsesToolCall => ({ name: "apply_patch", input: patch }),
  /** An `apply_patch` that adds one file (path absolute or relative to the session's cwd). */
  addFile: (file: string, content: string): ResponsesToolCall => ({
    name: "apply_patch",
    input: `*** Begin Patch\n*** Add File: ${file}\n${content
      .replace(/\n$/, "")
      .split("\n")
      .map((l) => `+${l}`)
      .join("\n")}\n*** End Patch\n`,
  }),
  /** An `apply_patch` that replaces one line of an existing file. */
  replaceLine: (file: string, oldLine: string, newLine: string): ResponsesToolCall => ({
    name: "apply_patch",
    input: `*** Begin Patch\n*** Update File: ${file}\n@@\n-${oldLine}\n+${newLine}\n*** End Patch\n`,
  }),
};
