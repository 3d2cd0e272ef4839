/** Depth budget (docs/runner.md#depth-budget) and trace ids (docs/runner.md#trace-ids), read from and written to the environment. */
import { randomBytes } from "node:crypto";

export const ENV = {
  depth: "FORGE_SPAWN_DEPTH",
  maxDepth: "FORGE_MAX_DEPTH",
  trace: "FORGE_TRACE_ID",
  agentType: "FORGE_AGENT_TYPE",
} as const;

export const DEFAULT_MAX_DEPTH = 3;

const TRACE = /^[0-9a-f]{16}$/;

export function newTraceId(): string {
  return randomBytes(8).toString("hex");
}

/** The trace id carried in `env`, or a new one when there is none (the top of a trace). */
export function traceIdFrom(env: NodeJS.ProcessEnv): string {
  const v = env[ENV.trace]?.trim().toLowerCase();
  return v && TRACE.test(v) ? v : newTraceId();
}

/** Depth of the process whose environment this is: 0 outside any spawn. */
export function currentDepth(env: NodeJS.ProcessEnv): number {
  const n = Number.parseInt(env[ENV.depth] ?? "", 10);
  return Number.isFinite(n) && n >= 0 ? n : 0;
}

/**
 * The budget in force: the caller's `maxDepth`, never more than a budget already set by an ancestor
 * (`FORGE_MAX_DEPTH`), so an agent cannot raise its own.
 */
export function effectiveMaxDepth(requested: number | undefined, env: NodeJS.ProcessEnv): number {
  const wanted = requested ?? DEFAULT_MAX_DEPTH;
  const inherited = Number.parseInt(env[ENV.maxDepth] ?? "", 10);
  return Number.isFinite(inherited) && inherited >= 0 ? Math.min(wanted, inherited) : wanted;
}

export interface DepthCheck {
  /** Depth the child would run at. */
  depth: number;
  maxDepth: number;
  ok: boolean;
  /** Spawns still possible below the child (0: the child cannot spawn). */
  remaining: number;
}

export function checkDepth(env: NodeJS.ProcessEnv, requestedMax?: number): DepthCheck {
  const depth = currentDepth(env) + 1;
  const maxDepth = effectiveMaxDepth(requestedMax, env);
  return { depth, maxDepth, ok: depth <= maxDepth, remaining: Math.max(0, maxDepth - depth) };
}
