/** What an adapter provides: how to start its CLI, and how to read its output. */
import type { AdapterName, ProgressKind } from "../types.js";
import type { TierName } from "../../core/tiers.js";

export interface AdapterInput {
  prompt: string;
  systemPrompt?: string;
  model?: string;
  /** The tier `model` came from, when it came from one. */
  modelTier?: TierName;
  cwd: string;
  allowedTools: string[];
  maxTurns?: number;
  /** Host environment the adapter picks its own variables from. */
  parentEnv: NodeJS.ProcessEnv;
  /** Forge's variables (FORGE_*), already computed by spawn. */
  forgeEnv: Record<string, string>;
  passEnv: string[];
  extraEnv: Record<string, string>;
  command?: string;
  args?: string[];
  binary?: string;
  /** A session of the CLI to continue (SpawnOptions.resumeSession). */
  resumeSession?: string;
}

export interface Invocation {
  command: string;
  args: string[];
  env: Record<string, string>;
  stdin?: string;
}

/** A progress event as an adapter sees it; spawn adds time, trace id, depth and name. */
export interface ProgressDraft {
  kind: ProgressKind;
  summary: string;
  tool?: string;
  /** The session's cost so far as the CLI reported it (Claude Code's result). */
  costUsd?: number;
  /** Tokens of a turn as the CLI reported them (Codex's turn.completed). */
  tokens?: { input: number; output: number };
}

/** What the adapter learnt from the whole output. */
export interface AdapterOutcome {
  /** The session ended well by the CLI's own account. */
  ok: boolean;
  /** The final message. */
  result?: string;
  model?: string;
  turns?: number;
  costUsd?: number;
  sessionId?: string;
  /** HTTP status of the API error that ended the session, when reported (Claude Code: api_error_status). */
  apiErrorStatus?: number;
  /** Error text the CLI reported (besides stderr). */
  errorText?: string;
}

export interface OutputParser {
  stdoutLine(line: string): ProgressDraft[];
  stderrLine(line: string): ProgressDraft[];
  /** Called once the process ended; `exitCode` is the process's. */
  finish(exitCode: number | null): AdapterOutcome;
  /** Assistant turns seen so far. */
  turns(): number;
  /**
   * True while a tool call is running (seen started, not finished). Agent CLIs print nothing while
   * their Bash tool runs a long build, so the idle limit is stretched then (RunProcessOptions.busyIdleTimeoutMs).
   */
  busy?(): boolean;
  /** Progress learnt only once the process ended, after `finish` (Copilot CLI's usage file). */
  afterExit?(): ProgressDraft[];
}

export interface Adapter {
  name: AdapterName;
  invocation(input: AdapterInput): Invocation;
  /** A parser for one run of `invocation` (an adapter may read where the CLI was told to write). */
  parser(invocation?: Invocation): OutputParser;
}

/** One line, at most `max` characters. */
export function oneLine(text: string, max = 200): string {
  const s = text.replace(/\s+/g, " ").trim();
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}
