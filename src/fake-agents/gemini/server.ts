// A scripted model server speaking the Gemini API (`/v1beta/models/{model}:streamGenerateContent`,
// `:generateContent`, `:countTokens`), so the real Gemini CLI can run offline against a script. A
// request that declares functions is a conversation turn (`main`); any other generate call (the CLI's
// JSON-schema side calls) gets `sideReply`. Which turn to answer is read from the conversation: the
// model contents since the last user text (the session's prompt), so a retried request gets the same
// turn again and a resumed session's new prompt starts at turn 0.
import type http from "node:http";
import { randomBytes } from "node:crypto";
import { createScriptedServer, listen, readRequest, scriptTurn, sseHead, takeInjectedError } from "../scripted-server.js";
import type { ScriptedError, ScriptedRequestRecord, ScriptedServer } from "../scripted-server.js";
import type { GeminiContent, GeminiPart, GeminiRequest, GeminiScript, GeminiToolOutput, GeminiTurn } from "./script.js";

/** kind `main`: a conversation turn (it declares functions); `side`: any other generate call; `count`: countTokens; `models`; `other`. */
export type RecordedGeminiRequest = ScriptedRequestRecord<GeminiRequest, "main" | "side" | "count" | "models" | "other">;

export type InjectedGeminiError = ScriptedError<429 | 500 | 503 | 400 | 401 | 403>;

export interface GeminiServerOptions {
  script: GeminiScript;
  /** Reply for generate calls that declare no functions (default: `{"ok":true}` when JSON is asked for, else "Forge"). */
  sideReply?: (req: GeminiRequest) => GeminiTurn;
  /** Errors answered before the script, to the next main requests. */
  errors?: InjectedGeminiError[];
  /** Characters per streamed text chunk (default 24), so clients must reassemble. */
  chunkSize?: number;
  host?: string;
  port?: number;
}

export interface GeminiServer extends ScriptedServer<RecordedGeminiRequest, InjectedGeminiError> {
  /** The base URL (what GOOGLE_GEMINI_BASE_URL is set to; the CLI adds `/v1beta/...`). */
  url: string;
}

const STATUS: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  429: "RESOURCE_EXHAUSTED",
  500: "INTERNAL",
  503: "UNAVAILABLE",
};

function sendError(res: http.ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json; charset=UTF-8", ...headers });
  res.end(JSON.stringify({ error: { code: status, message, status: STATUS[status] ?? "UNKNOWN" } }));
}

export function estimateTokens(value: unknown): number {
  return Math.max(1, Math.ceil(JSON.stringify(value ?? "").length / 4));
}

const textOf = (c: GeminiContent | string | undefined): string =>
  typeof c === "string" ? c : (c?.parts ?? []).map((p) => (typeof p.text === "string" ? p.text : "")).join("\n");
const hasText = (c: GeminiContent) => (c.parts ?? []).some((p) => typeof p.text === "string" && !p.thought);

/** Model contents since the last user content with text. */
export function turnOf(body: GeminiRequest): number {
  const contents = body.contents ?? [];
  let turns = 0;
  for (let i = contents.length - 1; i >= 0; i--) {
    const c = contents[i]!;
    if (c.role === "model") turns++;
    else if (hasText(c)) break;
  }
  return turns;
}

function lastToolOutputs(body: GeminiRequest): GeminiToolOutput[] {
  const last = (body.contents ?? []).at(-1);
  return (last?.parts ?? [])
    .filter((p) => p.functionResponse)
    .map((p) => {
      const r = p.functionResponse!.response as Record<string, unknown> | undefined;
      const output = typeof r?.output === "string" ? r.output : typeof r?.error === "string" ? r.error : JSON.stringify(r ?? "");
      return { name: p.functionResponse!.name, output };
    });
}

function chunks(s: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
  return out.length > 0 ? out : [""];
}

/** The streamed chunks of a turn: thought, text in pieces, function calls, then the finish and the usage. */
export function geminiChunks(turn: GeminiTurn, model: string, promptTokens: number, chunkSize: number): Array<Record<string, unknown>> {
  const responseId = randomBytes(8).toString("hex");
  const parts: GeminiPart[][] = [];
  if (turn.thought !== undefined) parts.push([{ text: turn.thought, thought: true }]);
  if (turn.text) for (const piece of chunks(turn.text, chunkSize)) parts.push([{ text: piece }]);
  const calls = (turn.toolCalls ?? []).map((c) => ({ functionCall: { name: c.name, args: c.args } }));
  if (calls.length > 0) parts.push(calls);
  if (parts.length === 0) parts.push([{ text: "" }]);
  const output = estimateTokens(turn);
  const thoughts = turn.thought !== undefined ? estimateTokens(turn.thought) : 0;
  return parts.map((p, i) => {
    const last = i === parts.length - 1;
    return {
      candidates: [{ content: { role: "model", parts: p }, index: 0, ...(last ? { finishReason: "STOP" } : {}) }],
      ...(last
        ? {
            usageMetadata: {
              promptTokenCount: promptTokens,
              candidatesTokenCount: output,
              ...(thoughts ? { thoughtsTokenCount: thoughts } : {}),
              totalTokenCount: promptTokens + output + thoughts,
            },
          }
        : {}),
      modelVersion: model,
      responseId,
    };
  });
}

/** One whole answer (`:generateContent`): the chunks' parts in one candidate. */
function wholeAnswer(turn: GeminiTurn, model: string, promptTokens: number): Record<string, unknown> {
  const streamed = geminiChunks(turn, model, promptTokens, Number.MAX_SAFE_INTEGER);
  const parts = streamed.flatMap(
    (c) => ((c.candidates as Array<{ content: { parts: GeminiPart[] } }>)[0]!.content.parts ?? []) as GeminiPart[],
  );
  const last = streamed.at(-1)!;
  return { ...last, candidates: [{ content: { role: "model", parts }, index: 0, finishReason: "STOP" }] };
}

const ROUTE = /^\/v1(?:beta|alpha)?\/models\/([^/:]+):(streamGenerateContent|generateContent|countTokens)$/;

export async function startGeminiServer(options: GeminiServerOptions): Promise<GeminiServer> {
  const requests: RecordedGeminiRequest[] = [];
  const pendingErrors: InjectedGeminiError[] = (options.errors ?? []).map((e) => ({ ...e }));
  let exhausted = false;
  const chunkSize = options.chunkSize ?? 24;

  const server = createScriptedServer(
    async (req, res) => {
      const { url, body, record: read } = await readRequest<GeminiRequest>(req);
      const record: RecordedGeminiRequest = read;
      requests.push(record);
      const reply = (status: number) => (record.status = status);
      const route = ROUTE.exec(url.pathname);
      if (req.method === "GET" && /^\/v1(?:beta)?\/models$/.test(url.pathname)) {
        record.kind = "models";
        reply(200);
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ models: [{ name: "models/gemini-2.5-pro" }, { name: "models/gemini-2.5-flash" }] }));
        return;
      }
      if (req.method !== "POST" || !route) {
        reply(404);
        sendError(res, 404, `Not found: ${req.method} ${url.pathname}`);
        return;
      }
      const model = decodeURIComponent(route[1]!);
      if (route[2] === "countTokens") {
        record.kind = "count";
        reply(200);
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ totalTokens: estimateTokens(body?.contents) }));
        return;
      }
      if (!body || !Array.isArray(body.contents)) {
        reply(400);
        sendError(res, 400, "* GenerateContentRequest.contents: contents is not specified");
        return;
      }
      const isMain = (body.tools ?? []).some((t) => (t.functionDeclarations ?? []).length > 0);
      record.kind = isMain ? "main" : "side";
      const promptTokens = estimateTokens(body.contents) + estimateTokens(body.systemInstruction);
      let turn: GeminiTurn;
      if (isMain) {
        const injected = takeInjectedError(pendingErrors, "x-ratelimit-remaining-requests");
        if (injected) {
          const { error, headers } = injected;
          reply(error.status);
          sendError(
            res,
            error.status,
            error.message ?? (error.status === 429 ? "Resource has been exhausted (e.g. check quota)." : "Internal error encountered."),
            headers,
          );
          return;
        }
        const index = turnOf(body);
        record.turn = index;
        const scripted = scriptTurn(options.script, index, () => ({
          turn: index,
          body,
          toolOutputs: lastToolOutputs(body),
          userText: (body.contents ?? [])
            .filter((c) => c.role === "user")
            .map(textOf)
            .join("\n"),
          systemText: textOf(body.systemInstruction),
        }));
        exhausted ||= scripted.exhausted;
        turn = scripted.turn;
      } else {
        const json = (body.generationConfig as { responseMimeType?: string } | undefined)?.responseMimeType === "application/json";
        turn = options.sideReply?.(body) ?? { text: json ? "{}" : "Forge" };
      }
      reply(200);
      if (route[2] === "streamGenerateContent") {
        sseHead(res, {});
        const all = geminiChunks(turn, model, promptTokens, chunkSize);
        for (const c of turn.stall ? all.slice(0, 1) : all) res.write(`data: ${JSON.stringify(c)}\r\n\r\n`);
        if (!turn.stall) res.end();
      } else {
        res.writeHead(200, { "content-type": "application/json; charset=UTF-8" });
        res.end(JSON.stringify(wholeAnswer(turn, model, promptTokens)));
      }
    },
    (res, err) => sendError(res, 500, String(err)),
  );

  const { url, port, close } = await listen(server, options.host, options.port);
  return {
    url,
    port,
    requests,
    turns: () => requests.filter((r) => r.kind === "main"),
    exhausted: () => exhausted,
    failNext: (error) => void pendingErrors.unshift({ ...error }),
    close,
  };
}
