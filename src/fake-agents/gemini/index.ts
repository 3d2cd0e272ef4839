// A scripted model server speaking the Gemini API, so the real Gemini CLI (`gemini -p`) can run
// offline against a script: script.ts holds what a test writes (turns, function calls, the CLI's
// tools), server.ts is the HTTP server, cli.ts runs the real CLI against it.
export { geminiTools } from "./script.js";
export type { GeminiScript, GeminiToolCall, GeminiToolOutput, GeminiTurn, GeminiTurnRequest, GeminiRequest } from "./script.js";
export { startGeminiServer, geminiChunks, turnOf } from "./server.js";
export type { GeminiServer, GeminiServerOptions, InjectedGeminiError, RecordedGeminiRequest } from "./server.js";
export { geminiBinary, offlineGeminiEnv } from "./cli.js";
