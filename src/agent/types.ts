/**
 * Types shared by the agent layer (layers 0–2, see docs/runner.md#layers): what a spawn takes and returns, and the
 * progress events the runner's heartbeat watches.
 */
import type { AgentUser } from "./isolation.js";
import type { ExitCode, ExitStatus } from "../core/exit-codes.js";
import type { Masker } from "./secrets.js";
import type { TierName } from "../core/tiers.js";
import type { SubAgentCap } from "./sub-agents.js";

/** Agent adapters: Claude Code CLI, Codex CLI, Gemini CLI, opencode, Qwen Code, GitHub Copilot CLI, or any executable. */
export type AdapterName = "claude" | "codex" | "gemini" | "opencode" | "qwen" | "copilot" | "command";
export const ADAPTER_NAMES: readonly AdapterName[] = ["claude", "codex", "gemini", "opencode", "qwen", "copilot", "command"];

/** Kinds of agents Forge spawns: the DAG's agent types, the Captain, and the sentinel roles. */
export const AGENT_KINDS = [
  "1",
  "2",
  "3",
  "refinery",
  "captain",
  "sentinel",
  "sentinel-writer",
  "sentinel-executor",
  "sentinel-auditor",
  "sentinel-consolidator",
] as const;
export type AgentKind = (typeof AGENT_KINDS)[number];

export function isAgentKind(value: unknown): value is AgentKind {
  return typeof value === "string" && (AGENT_KINDS as readonly string[]).includes(value);
}

export type ProgressKind =
  "start" | "system" | "text" | "tool_use" | "tool_result" | "result" | "stderr" | "output" | "rate_limit" | "retry" | "exit";

/** One thing the agent did, parsed from its output stream. Also one line of `events.ndjson`. */
export interface ProgressEvent {
  at: string;
  kind: ProgressKind;
  /** One human-readable line (masked, truncated). */
  summary: string;
  tool?: string;
  /** Assistant turns seen so far. */
  turn?: number;
  traceId: string;
  depth: number;
  /** The spawn's name (its stage). */
  name: string;
  /** Spend the adapter reported with this event: the session's cost so far, or one turn's tokens. */
  costUsd?: number;
  tokens?: { input: number; output: number };
}

/** Files the agent writes to report to its caller. */
export interface ReportPaths {
  walkthrough: string;
  question: string;
  changeRequest: string;
  refinement: string;
}

export interface SpawnOptions {
  adapter: AdapterName;
  /** WHAT to do; the system prompt says WHO and HOW (see docs/runner.md#system-prompts). */
  prompt: string;
  /** WHO/HOW: the system prompt text. */
  systemPrompt?: string;
  /** The kind of agent being spawned; checked against the caller's type (hierarchy-service.ts). */
  agentType?: AgentKind;
  /**
   * The spawning agent's type when Forge's own code spawns on an agent's behalf (runStages: type 3's
   * subtasks, the refinery's helpers). Trusted because it comes from code; inside an agent the
   * caller's type comes from the hierarchy service, never from the environment.
   */
  caller?: AgentKind;
  model?: string;
  /** The tier `model` came from (docs/runner.md#model-tiers): Codex takes it as its reasoning effort; a command agent gets `FORGE_MODEL_TIER`. */
  modelTier?: TierName;
  cwd: string;
  /** Created when missing; receives events.ndjson, transcript.log, .signals/. */
  sessionDir: string;
  /** Signal and event name (a stage name). Default "spawn". */
  name?: string;
  /** Signal layer (see docs/formats.md#signal-files). Default "exec". */
  layer?: "exec" | "orch" | "coord" | "sentinel" | "monitor";
  /** Default: allowedToolsFor(agentType, adapter). */
  allowedTools?: string[];
  maxTurns?: number;
  /** Spawn depth budget (see docs/runner.md#depth-budget). Default 3. */
  maxDepth?: number;
  /** Wall clock; → exit 21, timedOut "wall". */
  timeoutMs?: number;
  /** No output for this long; → killed, exit 21, timedOut "idle". */
  idleTimeoutMs?: number;
  /**
   * The idle limit while one of the agent's tool calls is running (a long build or test run prints
   * nothing to the agent's stream). Default 10 min — Claude Code's longest Bash timeout — and never
   * less than idleTimeoutMs.
   */
  toolIdleTimeoutMs?: number;
  signal?: AbortSignal;
  onProgress?: (event: ProgressEvent) => void;
  /** Epoch ms: rate-limit backoff happens inside the job only until then. Default: now + timeoutMs, else 30 min. */
  deadline?: number;
  /** Backoff retries on a rate limit before giving up (default 5). */
  maxRateLimitRetries?: number;
  /** Parent environment: PATH, model keys, FORGE_SPAWN_DEPTH, FORGE_TRACE_ID are read from it. Default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Passed to the agent as given. */
  extraEnv?: Record<string, string>;
  /**
   * The model's credentials for this session alone (the runner's model proxy, src/agent/model-proxy.ts):
   * opened as the session starts, their variables added to `extraEnv`, ended with it — a token
   * left behind (a process that outlived the session) is refused afterwards.
   */
  modelSession?: () => { env: Record<string, string>; end(): void };
  /** Names of parent variables to pass through in addition to the adapter's own (e.g. a model key for a command agent). */
  passEnv?: string[];
  masker?: Masker;
  /** Adapter "command": the executable and its arguments. */
  command?: string;
  args?: string[];
  /** The CLI executable for claude/codex (default: found on PATH). */
  binary?: string;
  /**
   * Continue this agent CLI session instead of starting a new one (docs/executor.md#resuming): Claude
   * Code `--resume <id>`, Codex `codex exec resume <id>`, a command agent `FORGE_RESUME_SESSION`.
   */
  resumeSession?: string;
  /** The conversation of `resumeSession` carried from the earlier job (src/agent/agent-sessions.ts), read only inside `root`. */
  resumeFile?: { path: string; root: string };
  /** Report file locations (default: in sessionDir). */
  reports?: Partial<ReportPaths>;
  /**
   * The `forge` command put on the agent's PATH (as `<sessionDir>/.bin/forge`, also `FORGE_CLI`): a JS
   * entry run with this Node, or a command and its leading arguments. Default: this package's
   * bin/forge.js when it is built. False: none.
   */
  forgeCli?: string | false | { command: string; args: string[] };
  /** Sleep used for rate-limit backoff (tests replace it). */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Random source for jitter (tests replace it). */
  random?: () => number;
  /**
   * Called once the spawn is allowed (hierarchy and depth checked), before the agent starts: returns
   * the directory the agent works in instead of `cwd` (`forge spawn` puts a sub-agent in its own
   * worktree this way). Not called for a refused spawn.
   */
  prepareCwd?: () => Promise<string>;
  /**
   * Run the agent as this OS user (src/agent/isolation.ts): the working directory, the session folder
   * and the hierarchy's socket folder are handed over to it for the session. Sessions already running
   * as that user (a sub-agent's `forge spawn`) run as they are.
   */
  runAs?: AgentUser;
  /**
   * The job's cap on sub-agents (src/agent/sub-agents.ts), shared by all its sessions: a top-level
   * session's hierarchy service takes a place for every sub-agent it admits, and Forge's own
   * `caller` spawns take one too. Absent: no cap besides depth.
   */
  subAgents?: SubAgentCap;
}

export interface SpawnError {
  code: string;
  message: string;
}

export interface SpawnResult {
  /** See docs/runner.md#exit-codes (src/core/exit-codes.ts). */
  exitCode: ExitCode;
  status: ExitStatus;
  error?: SpawnError;
  timedOut?: "wall" | "idle";
  /** ISO time the model's usage limit resets, when it outlasts the deadline (exit code 1, not a failure for the App). */
  rateLimitedUntil?: string;
  /** The agent's final message. */
  result?: string;
  adapter: AdapterName;
  agentType?: AgentKind;
  model?: string;
  turns?: number;
  costUsd?: number;
  sessionId?: string;
  traceId: string;
  depth: number;
  maxDepth: number;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  /** Rate-limit retries made inside this spawn. */
  rateLimitRetries: number;
  sessionDir: string;
  eventsPath: string;
  transcriptPath: string;
  signalPath?: string;
  /** Report files the agent actually wrote. */
  reports: Partial<ReportPaths>;
}
