// A scripted model server speaking OpenAI's Chat Completions API, so the real opencode and Qwen Code
// CLIs can run offline against a script: script.ts holds what a test writes (turns, tool calls, the
// CLIs' tools), stream.ts encodes a turn as the API's answer, server.ts is the HTTP server, cli.ts
// runs the real CLIs against it.
export { opencodeTools, qwenTools } from "./script.js";
export type { ChatRequest, ChatScript, ChatToolCall, ChatToolOutput, ChatTurn, ChatTurnRequest } from "./script.js";
export { startChatServer, chatTurnOf } from "./server.js";
export type { ChatServer, ChatServerOptions, InjectedChatError, RecordedChatRequest } from "./server.js";
export { chatChunks, chatBody } from "./stream.js";
export { AGENT_CLIS_BIN, opencodeBinary, qwenBinary, offlineChatEnv } from "./cli.js";
