/** The agent layer's public API, used by the job pipeline (`action/`) and `forge spawn`. See README.md. */
export { spawnAgent, explicitExitCode, defaultReportPaths } from "./spawn.js";
export {
  runStages,
  defaultStages,
  loadStageConfig,
  stageConfigSchema,
  stagePrompt,
  readSubtasks,
  subtaskDir,
  DEFAULT_STAGES,
  STAGE_NAMES,
  STAGE_CONFIG_FILE,
} from "./stages.js";
export type {
  RunStagesOptions,
  StagesResult,
  StageManifest,
  StageRecord,
  StageName,
  StagedAgentType,
  TaskContext,
  StageSpawnOptions,
  StageConfig,
  Subtask,
} from "./stages.js";
export { loadSystemPrompt, builtinPromptDir, PromptNotFoundError, REPO_PROMPT_DIR } from "./prompts.js";
export { allowedToolsFor, mayCallerSpawn, SPAWNABLE_BY, ALLOWED_TOOLS, FORBIDDEN_TOOLS } from "./hierarchy.js";
export {
  detectRateLimit,
  parseResetTime,
  parseRetryAfter,
  planRateLimitWait,
  backoffDelay,
  nextWallClockTime,
  zonedTimeToUtc,
} from "./rate-limit.js";
export type { RateLimitInfo, RateLimitDecision } from "./rate-limit.js";
export { Masker, sanitizeUntrusted, quoteUntrusted, isSecretName, MASK } from "./secrets.js";
export { pickEnv, isForbiddenEnvName } from "./env.js";
export {
  subBranchName,
  startSubBranch,
  finishSubBranch,
  mergeRef,
  concludeMerge,
  abortMerge,
  commitAll,
  conflictedFiles,
  currentBranch,
} from "./branches.js";
export type { LocalMergeResult } from "./branches.js";
export {
  parseAgentWalkthrough,
  completeWalkthrough,
  agentWalkthroughSchema,
  splitFrontmatter,
  renderWalkthroughFile,
} from "./walkthrough.js";
export type { WalkthroughFacts, CompletedWalkthrough, ParsedWalkthrough } from "./walkthrough.js";
export { writeSignal, signalPath, writeFileAtomic } from "./signals.js";
export { checkDepth, traceIdFrom, newTraceId, currentDepth, effectiveMaxDepth, ENV as FORGE_ENV, DEFAULT_MAX_DEPTH } from "./depth.js";
export { ADAPTERS, adapterFor, claudeArgs, codexArgs, StreamJsonParser, CodexJsonParser } from "./adapters/index.js";
export * from "./types.js";
