// The sim runner's public surface: see README.md beside this file.
export {
  startJob,
  runJob,
  describeJob,
  inputEnvName,
  resolveShell,
  RunnerLostError,
  type RunContext,
  type RunJobOptions,
  type JobHandle,
  type JobResult,
  type JobConclusion,
  type StepResult,
  type StepConclusion,
  type StepEvent,
  type Annotation,
} from "./executor.js";
export {
  parseDispatchInputs,
  parseWorkflow,
  dispatchErrorBody,
  DispatchInputError,
  WorkflowError,
  resolvePermissions,
  resolveConcurrency,
  PERMISSION_SCOPES,
  type Permissions,
  type PermissionLevel,
  type Concurrency,
  type DispatchInputs,
} from "./workflow.js";
export { ExpressionError, evaluate, interpolate, evaluateCondition, type ExpressionContext, type ExprValue } from "./expressions/index.js";
export { createRunnerPool, type RunnerPool, type QueuedJob, type QueuedJobState } from "./pool.js";
export { BUILTIN_ACTIONS, checkoutAuthHeader, type BuiltinAction, type BuiltinActionContext } from "./builtin-actions.js";
export { parseKeyValueFile, FileCommandError } from "./file-commands.js";
