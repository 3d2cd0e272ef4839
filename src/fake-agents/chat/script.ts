// What a script for the scripted Chat Completions server is made of: turns, their tool calls, the
// request a script function sees, and opencode's and Qwen Code's tools as helpers for writing turns.

/** One tool call of a scripted turn (`tool_calls[] { function { name, arguments } }`, arguments sent as a JSON string). */
export interface ChatToolCall {
  name: string;
  args: Record<string, unknown>;
}

/** A scripted model response: reasoning, text, tool calls (in this order; any may be left out). */
export interface ChatTurn {
  reasoning?: string;
  text?: string;
  toolCalls?: ChatToolCall[];
  /** Stream the first chunk, then nothing more (the connection stays open): a model that stalls. */
  stall?: boolean;
}

/** A tool's result as the client sent it back (a `tool` message). */
export interface ChatToolOutput {
  tool_call_id: string;
  output: string;
}

/** What the script function sees when it is asked for a turn. */
export interface ChatTurnRequest {
  /** 0-based index of the turn: assistant messages since the last user message with text (the session's prompt). */
  turn: number;
  body: ChatRequest;
  /** Results of the tool calls of the previous turn. */
  toolOutputs: ChatToolOutput[];
  /** The text of every user message, joined (the prompt, among the CLI's context). */
  userText: string;
  /** The text of every system message, joined (the CLI's own, with Forge's system prompt in it). */
  systemText: string;
}

export type ChatScript = Array<ChatTurn | ((req: ChatTurnRequest) => ChatTurn)>;

export interface ChatMessage {
  role: string;
  content?: unknown;
  tool_calls?: Array<{ id: string; type?: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
  [key: string]: unknown;
}

export interface ChatRequest {
  model?: string;
  messages?: ChatMessage[];
  tools?: Array<{ type: string; function?: { name: string } }>;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  [key: string]: unknown;
}

/** opencode's tools, for writing scripts. */
export const opencodeTools = {
  /** `write { filePath, content }`: creates or overwrites a file (absolute path). */
  write: (file: string, content: string): ChatToolCall => ({ name: "write", args: { filePath: file, content } }),
  /** `edit { filePath, oldString, newString }`: one exact replacement. */
  edit: (file: string, oldString: string, newString: string): ChatToolCall => ({
    name: "edit",
    args: { filePath: file, oldString, newString },
  }),
  /** `bash { command, description }`: a shell command in the session's directory. */
  bash: (command: string): ChatToolCall => ({ name: "bash", args: { command, description: "Run a command" } }),
};

/** Qwen Code's tools, for writing scripts. */
export const qwenTools = {
  /** `write_file { file_path, content }`: creates or overwrites a file (absolute path). */
  writeFile: (file: string, content: string): ChatToolCall => ({ name: "write_file", args: { file_path: file, content } }),
  /** `edit { file_path, old_string, new_string }`: one exact replacement. */
  edit: (file: string, oldString: string, newString: string): ChatToolCall => ({
    name: "edit",
    args: { file_path: file, old_string: oldString, new_string: newString },
  }),
  /** `run_shell_command { command }`: a shell command in the session's directory. */
  shell: (command: string): ChatToolCall => ({
    name: "run_shell_command",
    args: { command, description: "Run a command", is_background: false },
  }),
};
