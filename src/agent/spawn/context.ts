/**
 * What one session shares from its start to its end, as one explicit object: its folder and files,
 * the masker, the trace id and depth (settled when the hierarchy admits it), the event and
 * transcript streams, and the hierarchy service it runs for its descendants. `emit` writes a
 * progress event; `finish` ends the session and builds its result.
 */
import { createWriteStream, existsSync, type WriteStream } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import type { ProgressDraft } from "../adapters/types.js";
import { checkDepth, traceIdFrom, type DepthCheck } from "../depth.js";
import type { HierarchyService } from "../hierarchy-service.js";
import { Masker } from "../secrets.js";
import { writeSignal } from "../signals.js";
import { EXIT_STATUS, signalStatusOf, type ExitCode } from "../../core/exit-codes.js";
import { type ProgressEvent, type ReportPaths, type SpawnError, type SpawnOptions, type SpawnResult } from "../types.js";

export interface SpawnContext {
  readonly options: SpawnOptions;
  readonly parentEnv: NodeJS.ProcessEnv;
  readonly name: string;
  /** The signal file's layer (`exec` unless the caller says). */
  readonly layer: NonNullable<SpawnOptions["layer"]>;
  readonly sessionDir: string;
  readonly eventsPath: string;
  readonly transcriptPath: string;
  readonly started: Date;
  readonly masker: Masker;
  readonly events: WriteStream;
  readonly transcript: WriteStream;
  /** The parent's trace, until the hierarchy service names the caller's. */
  traceId: string;
  depthCheck: DepthCheck;
  /** The agent's turn, as its output parser counts them. */
  turn: number;
  /** Rate-limit waits so far in this session. */
  rateLimitRetries: number;
  /** The hierarchy service this spawn runs for its descendants (a top-level spawn only). */
  service?: HierarchyService;
}

export function defaultReportPaths(sessionDir: string): ReportPaths {
  return {
    walkthrough: path.join(sessionDir, "walkthrough.md"),
    question: path.join(sessionDir, "question.md"),
    changeRequest: path.join(sessionDir, "change-request.md"),
    refinement: path.join(sessionDir, "refinement.md"),
  };
}

/** Creates the session folder and opens its event and transcript files. */
export async function openSpawn(options: SpawnOptions): Promise<SpawnContext> {
  const parentEnv = options.env ?? process.env;
  const sessionDir = path.resolve(options.sessionDir);
  await mkdir(sessionDir, { recursive: true });
  const eventsPath = path.join(sessionDir, "events.ndjson");
  const transcriptPath = path.join(sessionDir, "transcript.log");
  const started = new Date();
  const masker = options.masker ?? new Masker().addFromEnv(parentEnv);
  for (const [k, v] of Object.entries(options.extraEnv ?? {})) if (/KEY|TOKEN|SECRET|PASSWORD/i.test(k)) masker.add(v);
  const depthCheck = checkDepth(parentEnv, options.maxDepth);
  const events = createWriteStream(eventsPath, { flags: "a" });
  const transcript = createWriteStream(transcriptPath, { flags: "a" });
  // A full disk must not crash the runner: the session's own outcome still counts.
  events.on("error", () => undefined);
  transcript.on("error", () => undefined);
  return {
    options,
    parentEnv,
    name: options.name ?? "spawn",
    layer: options.layer ?? "exec",
    sessionDir,
    eventsPath,
    transcriptPath,
    started,
    masker,
    events,
    transcript,
    traceId: traceIdFrom(parentEnv),
    depthCheck,
    turn: 0,
    rateLimitRetries: 0,
  };
}

/** One progress event, masked, to `events.ndjson` and the caller's observer (whose failure never breaks the session). */
export function emit(sc: SpawnContext, draft: ProgressDraft): void {
  const event: ProgressEvent = {
    at: new Date().toISOString(),
    kind: draft.kind,
    summary: sc.masker.mask(draft.summary),
    ...(draft.tool ? { tool: draft.tool } : {}),
    ...(draft.costUsd !== undefined ? { costUsd: draft.costUsd } : {}),
    ...(draft.tokens ? { tokens: draft.tokens } : {}),
    ...(sc.turn > 0 ? { turn: sc.turn } : {}),
    traceId: sc.traceId,
    depth: sc.depthCheck.depth,
    name: sc.name,
  };
  sc.events.write(`${JSON.stringify(event)}\n`);
  try {
    sc.options.onProgress?.(event);
  } catch {
    // A failing observer must not break the session.
  }
}

/** What a session's end adds to its result. */
export type SpawnEnd = Partial<SpawnResult> & { error?: SpawnError };

/** Ends the session: closes the service and the files, writes the signal file, and returns the result, masked. */
export async function finish(
  sc: SpawnContext,
  exitCode: ExitCode,
  extra: SpawnEnd = {},
  reports: Partial<ReportPaths> = {},
): Promise<SpawnResult> {
  const { options, started, depthCheck } = sc;
  const finished = new Date();
  await sc.service?.close().catch(() => undefined);
  emit(sc, { kind: "exit", summary: `exit ${exitCode}${extra.error ? ` (${extra.error.code}: ${extra.error.message})` : ""}` });
  await Promise.all([closeStream(sc.events), closeStream(sc.transcript)]);
  const signalFile = await writeSignal({
    sessionDir: sc.sessionDir,
    layer: sc.layer,
    name: sc.name,
    status: signalStatusOf(exitCode),
    ...(reports.walkthrough
      ? { artifactPath: reports.walkthrough }
      : existsSync(sc.transcriptPath)
        ? { artifactPath: sc.transcriptPath }
        : {}),
    traceId: sc.traceId,
    createdAt: started,
    completedAt: finished,
    extra: { exit_code: exitCode, depth: depthCheck.depth, ...(extra.error ? { error_code: extra.error.code } : {}) },
  }).catch(() => undefined);
  const result: SpawnResult = {
    adapter: options.adapter,
    ...(options.agentType ? { agentType: options.agentType } : {}),
    sessionDir: sc.sessionDir,
    eventsPath: sc.eventsPath,
    transcriptPath: sc.transcriptPath,
    traceId: sc.traceId,
    depth: depthCheck.depth,
    maxDepth: depthCheck.maxDepth,
    exitCode,
    status: EXIT_STATUS[exitCode],
    startedAt: started.toISOString(),
    finishedAt: finished.toISOString(),
    durationMs: finished.getTime() - started.getTime(),
    rateLimitRetries: 0,
    reports,
    ...extra,
    ...(signalFile ? { signalPath: signalFile } : {}),
  };
  if (result.error) result.error = { code: result.error.code, message: sc.masker.mask(result.error.message) };
  if (result.result !== undefined) result.result = sc.masker.mask(result.result);
  return result;
}

function closeStream(s: WriteStream): Promise<void> {
  return new Promise((resolve) => {
    if (s.closed || s.destroyed) return resolve();
    s.end(() => resolve());
  });
}
