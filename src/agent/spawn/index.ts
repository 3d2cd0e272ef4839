/**
 * Layer 0: one agent session through an adapter, in three steps over one spawn context
 * (context.ts): `prepare` (prepare.ts) admits the session and builds the agent's
 * invocation, `runAgentOnce` (run.ts) runs its process, `collect` (collect.ts) decides
 * how the session ends — or waits out a rate limit, and the process runs again.
 *
 * Owns what every session needs whatever the CLI: the depth budget (`FORGE_SPAWN_DEPTH`, incremented
 * only here), the trace id carried into every child, who may spawn whom, the agent's environment (only
 * what it needs), wall-clock and idle timeouts and cancellation (partial work stays in `cwd`),
 * rate-limit backoff inside the job, and the session directory: `events.ndjson` (one progress event
 * per line), `transcript.log` (the agent's raw output, masked), `prompt.md`, `system-prompt.md`
 * and the signal file `.signals/<layer>-<name>.<done|fail|refine>`.
 */
import { collect } from "./collect.js";
import { openSpawn } from "./context.js";
import { prepare } from "./prepare.js";
import { runAgentOnce } from "./run.js";
import type { SpawnOptions, SpawnResult } from "../types.js";

export type { SpawnOptions, SpawnResult } from "../types.js";
export { explicitExitCode } from "./collect.js";
export { defaultReportPaths } from "./context.js";

export async function spawnAgent(options: SpawnOptions): Promise<SpawnResult> {
  const model = options.modelSession?.();
  try {
    return await spawnOnce(model ? { ...options, extraEnv: { ...options.extraEnv, ...model.env } } : options);
  } finally {
    model?.end();
  }
}

async function spawnOnce(options: SpawnOptions): Promise<SpawnResult> {
  const sc = await openSpawn(options);
  const prepared = await prepare(sc);
  if ("done" in prepared) return prepared.done;
  for (;;) {
    const run = await runAgentOnce(sc, prepared);
    if ("done" in run) return run.done;
    const end = await collect(sc, prepared, run);
    if (end !== "again") return end;
  }
}
