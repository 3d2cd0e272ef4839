// What a script for the scripted Gemini API server is made of: turns, their function calls, the
// request a script function sees, and Gemini CLI's tools as helpers for writing turns.

/** One function call of a scripted turn (`functionCall { name, args }`). */
export interface GeminiToolCall {
  name: string;
  args: Record<string, unknown>;
}

/** A scripted model response: a thought summary, text, function calls (in this order; any may be left out). */
export interface GeminiTurn {
  thought?: string;
  text?: string;
  toolCalls?: GeminiToolCall[];
  /** Stream the first chunk, then nothing more (the connection stays open): a model that stalls. */
  stall?: boolean;
}

/** A function's response as the client sent it back (`functionResponse { name, response }`). */
export interface GeminiToolOutput {
  name: string;
  output: string;
}

/** What the script function sees when it is asked for a turn. */
export interface GeminiTurnRequest {
  /** 0-based index of the turn: model contents since the last user text (the session's prompt). */
  turn: number;
  body: GeminiRequest;
  /** Responses to the function calls of the previous turn. */
  toolOutputs: GeminiToolOutput[];
  /** The text of every user content with text, joined (the prompt, among the CLI's context). */
  userText: string;
  /** The system instruction's text (the CLI's own, with Forge's system prompt in it). */
  systemText: string;
}

export type GeminiScript = Array<GeminiTurn | ((req: GeminiTurnRequest) => GeminiTurn)>;

export type GeminiPart = Record<string, unknown> & {
  text?: string;
  thought?: boolean;
  functionCall?: { name: string; args?: Record<string, unknown>; id?: string };
  functionResponse?: { name: string; response?: unknown; id?: string };
};
export interface GeminiContent {
  role?: string;
  parts?: GeminiPart[];
}

export interface GeminiRequest {
  contents?: GeminiContent[];
  systemInstruction?: GeminiContent | string;
  tools?: Array<{ functionDeclarations?: Array<{ name: string }> }>;
  generationConfig?: Record<string, unknown>;
  [key: string]: unknown;
}

/** Gemini CLI's tools, for writing scripts. */
export const geminiTools = {
  /** `write_file { file_path, content }`: creates or overwrites a file. */
  writeFile: (file: string, content: string): GeminiToolCall => ({ name: "write_file", args: { file_path: file, content } }),
  /** `replace { file_path, old_string, new_string }`: one exact replacement. */
  replace: (file: string, oldString: string, newString: string): GeminiToolCall => ({
    name: "replace",
    args: { file_path: file, old_string: oldString, new_string: newString, instruction: "Edit as the task asks." },
  }),
  /** `run_shell_command { command }`: a shell command in the session's directory. */
  shell: (command: string): GeminiToolCall => ({ name: "run_shell_command", args: { command, description: "Run a command." } }),
};
