// The four model APIs the agent CLIs speak, behind one shape for the table-driven real-CLI suite
// (rows.ts): a scripted server of src/fake-agents/ started from API-neutral turns, its requests as
// the suite reads them, and the tool calls of each CLI. What each server records is kept as it is
// (`raw`), for the checks that read an API's own fields.
import type http from "node:http";
import {
  startChatServer,
  opencodeTools,
  qwenTools,
  type ChatRequest,
  type ChatToolCall,
  type ChatTurn,
  type ChatTurnRequest,
} from "../../../src/fake-agents/chat/index.js";
import { textOf } from "../../../src/fake-agents/chat/server.js";
import { copilotTools } from "../../../src/fake-agents/copilot.js";
import {
  geminiTools,
  startGeminiServer,
  type GeminiRequest,
  type GeminiToolCall,
  type GeminiTurn,
  type GeminiTurnRequest,
} from "../../../src/fake-agents/gemini/index.js";
import {
  claudeTools,
  startModelServer,
  type MessagesRequest,
  type ScriptedToolCall,
  type ScriptedTurn,
  type TurnRequest,
} from "../../../src/fake-agents/model-server.js";
import {
  codexTools,
  startResponsesServer,
  type ResponsesRequest,
  type ResponsesToolCall,
  type ResponsesTurn,
  type ResponsesTurnRequest,
} from "../../../src/fake-agents/responses/index.js";

/** A tool call of one CLI (its API's shape). */
export type Call = ScriptedToolCall | ResponsesToolCall | GeminiToolCall | ChatToolCall;

/** A scripted model answer, API-neutral: a thought (where the API has them), text, tool calls; or a stall. */
export interface Turn {
  thought?: string;
  text?: string;
  toolCalls?: Call[];
  /** The answer starts and then nothing more comes (the connection stays open). */
  stall?: boolean;
}

/** A conversation turn asked of the server, as the suite reads it. */
export interface Req {
  turn: number;
  /** The user text (the session's prompt among the CLI's context). */
  userText: string;
  /** The system or developer text (where Forge's system prompt goes). */
  systemText: string;
  /** The outputs of the previous turn's tool calls, as one string. */
  toolOutput: string;
  /** Every text of the conversation, user and assistant. */
  conversation: string;
}

export type Step = Turn | ((req: Req) => Turn);

/** An injected API error: a 429 (rate limit, quota) answered before the script. */
export interface LimitError {
  status: 429;
  count?: number;
  retryAfter?: number;
  message?: string;
  /** The OpenAI error code (Chat Completions only), e.g. `insufficient_quota`. */
  code?: string;
}

/** A request the server recorded. */
export interface Seen {
  kind: string;
  turn: number | null;
  status: number;
  path: string;
  headers: http.IncomingHttpHeaders;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each API's own body; checks.ts reads its fields
  body: any;
  tokens?: { input: number; output: number };
}

export interface Served {
  url: string;
  requests: Seen[];
  /** Main requests (conversation turns) only. */
  turns(): Seen[];
  exhausted(): boolean;
  /** Drops the injected errors not yet answered (Chat Completions only). */
  clearErrors(): void;
  close(): Promise<void>;
}

/** One CLI's tools as scripts call them. */
export interface Tools {
  write(file: string, content: string): Call;
  edit(file: string, oldString: string, newString: string): Call;
  shell(command: string): Call;
}

export interface Api {
  name: "anthropic" | "responses" | "gemini" | "chat";
  serve(script: Step[], errors?: LimitError[]): Promise<Served>;
}

const map = <R, T>(script: Step[], req: (r: R) => Req, turn: (t: Turn) => T) =>
  script.map((s) => (typeof s === "function" ? (r: R) => turn(s(req(r))) : turn(s)));

function messagesText(body: MessagesRequest, roles: string[]): string {
  return (body.messages ?? [])
    .filter((m) => roles.includes(m.role))
    .map((m) => (typeof m.content === "string" ? m.content : textOf(m.content)))
    .join("\n");
}

/** Anthropic Messages (Claude Code, Copilot CLI): src/fake-agents/model-server.ts. */
export const anthropic: Api = {
  name: "anthropic",
  async serve(script, errors) {
    const req = (r: TurnRequest): Req => {
      const first = r.body.messages?.find((m) => m.role === "user");
      return {
        turn: r.turn,
        userText: first ? (typeof first.content === "string" ? first.content : textOf(first.content)) : "",
        systemText: typeof r.body.system === "string" ? r.body.system : textOf(r.body.system),
        toolOutput: JSON.stringify(r.toolResults),
        conversation: messagesText(r.body, ["user", "assistant"]),
      };
    };
    const turn = (t: Turn): ScriptedTurn => ({
      ...(t.text !== undefined ? { text: t.text } : {}),
      ...(t.toolCalls ? { toolCalls: t.toolCalls as ScriptedToolCall[] } : {}),
      ...(t.stall ? { stall: true } : {}),
    });
    const s = await startModelServer({ script: map(script, req, turn), ...(errors ? { errors } : {}) });
    return { ...wrap(s), clearErrors: () => undefined };
  },
};

/** OpenAI Responses (Codex): src/fake-agents/responses/. */
export const responses: Api = {
  name: "responses",
  async serve(script, errors) {
    const req = (r: ResponsesTurnRequest): Req => ({
      turn: r.turn,
      userText: r.userText,
      systemText: r.developerText,
      toolOutput: r.toolOutputs.map((o) => o.output).join("\n"),
      conversation: responsesText(r.body),
    });
    const turn = (t: Turn): ResponsesTurn => ({
      ...(t.thought !== undefined ? { reasoning: t.thought } : {}),
      ...(t.text !== undefined ? { text: t.text } : {}),
      ...(t.toolCalls ? { toolCalls: t.toolCalls as ResponsesToolCall[] } : {}),
      ...(t.stall ? { stall: true } : {}),
    });
    const s = await startResponsesServer({ script: map(script, req, turn), ...(errors ? { errors } : {}) });
    return { ...wrap(s), clearErrors: () => undefined };
  },
};

/** Every text of a Responses input's messages, user and assistant. */
function responsesText(body: ResponsesRequest): string {
  return (body.input ?? [])
    .filter((i) => i.role === "user" || i.role === "assistant")
    .map((i) => textOf(i.content))
    .join("\n");
}

/** The Gemini API (Gemini CLI): src/fake-agents/gemini/. */
export const gemini: Api = {
  name: "gemini",
  async serve(script, errors) {
    const req = (r: GeminiTurnRequest): Req => ({
      turn: r.turn,
      userText: r.userText,
      systemText: r.systemText,
      toolOutput: r.toolOutputs.map((o) => o.output).join("\n"),
      conversation: (r.body as GeminiRequest).contents?.flatMap((c) => (c.parts ?? []).map((p) => p.text ?? "")).join("\n") ?? "",
    });
    const turn = (t: Turn): GeminiTurn => ({
      ...(t.thought !== undefined ? { thought: t.thought } : {}),
      ...(t.text !== undefined ? { text: t.text } : {}),
      ...(t.toolCalls ? { toolCalls: t.toolCalls as GeminiToolCall[] } : {}),
      ...(t.stall ? { stall: true } : {}),
    });
    const s = await startGeminiServer({ script: map(script, req, turn), ...(errors ? { errors } : {}) });
    return { ...wrap(s), clearErrors: () => undefined };
  },
};

/** OpenAI Chat Completions (opencode, Qwen Code): src/fake-agents/chat/. Thoughts are left out, as the CLIs' tests always had them. */
export const chat: Api = {
  name: "chat",
  async serve(script, errors) {
    const req = (r: ChatTurnRequest): Req => ({
      turn: r.turn,
      userText: r.userText,
      systemText: r.systemText,
      toolOutput: r.toolOutputs.map((o) => o.output).join("\n"),
      conversation: ((r.body as ChatRequest).messages ?? [])
        .filter((m) => m.role === "user" || m.role === "assistant")
        .map((m) => textOf(m.content))
        .join("\n"),
    });
    const turn = (t: Turn): ChatTurn => ({
      ...(t.text !== undefined ? { text: t.text } : {}),
      ...(t.toolCalls ? { toolCalls: t.toolCalls as ChatToolCall[] } : {}),
      ...(t.stall ? { stall: true } : {}),
    });
    const s = await startChatServer({ script: map(script, req, turn), ...(errors ? { errors } : {}) });
    return { ...wrap(s), clearErrors: () => s.clearErrors() };
  },
};

function wrap(s: {
  url: string;
  requests: unknown[];
  turns(): unknown[];
  exhausted(): boolean;
  close(): Promise<void>;
}): Omit<Served, "clearErrors"> {
  return {
    url: s.url,
    requests: s.requests as Seen[],
    turns: () => s.turns() as Seen[],
    exhausted: () => s.exhausted(),
    close: () => s.close(),
  };
}

/** Each CLI's file and shell tools. */
export const TOOLS = {
  claude: { write: claudeTools.write, edit: claudeTools.edit, shell: (c: string) => claudeTools.bash(c, "Run a command") },
  codex: { write: codexTools.addFile, edit: codexTools.replaceLine, shell: (c: string) => codexTools.exec(c) },
  gemini: { write: geminiTools.writeFile, edit: geminiTools.replace, shell: geminiTools.shell },
  opencode: { write: opencodeTools.write, edit: opencodeTools.edit, shell: opencodeTools.bash },
  qwen: { write: qwenTools.writeFile, edit: qwenTools.edit, shell: qwenTools.shell },
  copilot: { write: copilotTools.create, edit: copilotTools.edit, shell: (c: string) => copilotTools.bash(c) },
} satisfies Record<string, Tools>;
