// What the job pipeline's tests share: a job run with a shell-script agent in a fresh world, and
// readings of the commits it made.
import type { JobReport } from "../../action/src/main.js";
import { makeWorld, sh, testConfig, type World, type WorldOptions } from "./world.js";
import { commandAgent, JOB_URL, runJob as runJobIn } from "./job.js";
import { agentWalkthrough } from "./world.js";

const worlds: World[] = [];

/** Removes the worlds the last test made (`afterEach(cleanupWorld)`). */
export function cleanupWorld(): void {
  for (const w of worlds.splice(0)) w.cleanup();
}

export async function runJob(
  w: World,
  agentScript: string,
  opts: {
    config?: Record<string, unknown>;
    attempt?: number;
    taskId?: string;
    context?: { refinement?: string; answer?: string };
    cancel?: AbortSignal;
    uploadArtifact?: (name: string, root: string, files: string[]) => Promise<void>;
  } = {},
): Promise<JobReport> {
  return runJobIn(w, commandAgent(w, agentScript, { name: `agent-${Math.random().toString(36).slice(2)}` }), {
    config: testConfig(opts.config),
    input: { taskId: opts.taskId ?? "t1", attempt: opts.attempt ?? 1, context: opts.context ?? {}, jobUrl: JOB_URL },
    deps: {
      ...(opts.cancel ? { cancel: opts.cancel } : {}),
      ...(opts.uploadArtifact ? { uploadArtifact: opts.uploadArtifact } : {}),
    },
  });
}

export function world_(o: WorldOptions = {}): World {
  const world = makeWorld(o);
  worlds.push(world);
  return world;
}

export const trailers = (w: World, sha: string) => sh(w.origin, ["log", "-1", "--format=%(trailers:only,unfold)", sha]);
export const filesOf = (w: World, sha: string) =>
  sh(w.origin, ["diff-tree", "--no-commit-id", "--name-only", "-r", sha]).split("\n").filter(Boolean);

export const WRITE_WORK = `mkdir -p src && printf 'hello\\n' > src/out.txt`;
export const WRITE_WALKTHROUGH = (fm: Record<string, unknown> = {}) => `cat > "$FORGE_WALKTHROUGH_PATH" <<'WT'\n${agentWalkthrough(fm)}WT`;
