// A scripted model server speaking OpenAI's Responses API, so the real Codex CLI (`codex exec`) can
// run offline against it in tests and really edit files through its tools — the counterpart of
// model-server.ts (Anthropic's Messages API, for Claude Code).
//
// Endpoints: POST /v1/responses, streamed (SSE) or not. GET /v1/models answers a one-model list.
// Everything else answers 404 in the API's error shape and is recorded.
//
// script.ts holds what a test writes (turns, tool calls, Codex's tools); conversation.ts reads the
// request's input (which turn, the tool outputs); stream.ts encodes a turn as the API's response,
// streamed or not; server.ts is the HTTP server; codex.ts runs the real Codex CLI against it.
export type { ResponsesRequest, ResponsesScript, ResponsesToolCall, ResponsesTurn, ResponsesTurnRequest, ToolOutput } from "./script.js";
export { codexTools } from "./script.js";
export { lastToolOutputs, turnOf, unansweredToolCalls } from "./conversation.js";
export { responseBody, responsesSseEvents } from "./stream.js";
export type { InjectedResponsesError, RecordedResponsesRequest, ResponsesServer, ResponsesServerOptions } from "./server.js";
export { startResponsesServer } from "./server.js";
export { codexBinary, codexSandboxWorks, offlineCodexEnv } from "./codex.js";
