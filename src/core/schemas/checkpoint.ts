import { z } from "zod";
import { ADAPTERS } from "./adapters.js";
import { RESUME_CLASSES } from "./retry-policy.js";

/**
 * The runner's checkpoint of an attempt (docs/formats.md#checkpoint): written after every stage to
 * `checkpoints/cp-<timestamp>.json` in the session folder (with `.session-state` beside it), and the
 * last one into `result.json`'s `checkpoint`, where the App reads it when the attempt ends. Nothing in
 * it is taken on trust: the App checks every field against what it knows (the attempt, its branch, the
 * node's stages, the depth budget) and refuses the whole checkpoint on any mismatch — the next attempt
 * then starts fresh.
 */
export const CHECKPOINT_VERSION = 1;

/** A checkpoint file larger than this is refused before it is parsed (one is well under 2 KiB). */
export const MAX_CHECKPOINT_BYTES = 16 * 1024;

const sha = z.string().regex(/^[0-9a-f]{40}$/);
/** Stage names are Forge's own (src/core/stages.ts): lower-case words. */
const stage = z.string().regex(/^[a-z][a-z-]{0,31}$/);
/** A CLI's session id: Claude Code's and Codex's are UUIDs; any id a command agent gives is bounded the same way. */
export const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

export const checkpointSchema = z
  .object({
    checkpoint_version: z.literal(CHECKPOINT_VERSION).describe("Checkpoint format version."),
    created_at: z.string().max(40).describe("When it was written (ISO-8601)."),
    run_id: z.string().min(1).max(200).describe("The run."),
    task_id: z.string().min(1).max(200).describe("The task."),
    attempt: z.number().int().min(1).max(10_000).describe("The attempt that wrote it."),
    trace_id: z
      .string()
      .regex(/^[0-9a-f]{16}$/)
      .describe("The attempt's trace id."),
    completed_stages: z
      .array(z.object({ name: stage.describe("The stage."), exit_code: z.number().int().describe("The stage's exit code.") }).strict())
      .max(32)
      .describe("Stages that ended well (exit 0 or 12), in order."),
    pending_stages: z.array(stage).max(32).describe("Stages still to run, in order: a resumed attempt starts at the first."),
    depth_used: z.number().int().min(0).max(10).describe("Spawn depth the attempt's sessions reached (FORGE_SPAWN_DEPTH)."),
    depth_max: z.number().int().min(1).max(10).describe("The attempt's depth budget."),
    agent_session: z
      .object({
        adapter: z.enum(ADAPTERS).describe("The CLI that holds the session."),
        id: z.string().regex(SESSION_ID).describe("Its session id (Claude Code's `session_id`, Codex's `thread_id`)."),
        stage: stage.describe("The stage whose session it is."),
      })
      .strict()
      .optional()
      .describe("The last agent session, which a resumed attempt continues where its adapter can."),
    head_sha: sha.describe("The branch's head when it was written: the work pushed so far."),
  })
  .strict();
export type Checkpoint = z.infer<typeof checkpointSchema>;

/**
 * What a resumed attempt's job is told it continues (the dispatch context's `resume`,
 * docs/formats.md#dispatch-context): the App's word, from a checkpoint it checked.
 */
export const resumeContextSchema = z
  .object({
    fromAttempt: z.number().int().min(1).describe("The attempt whose work it continues, on that attempt's branch and PR."),
    reason: z.enum(RESUME_CLASSES).describe("How that attempt ended."),
    head: sha.optional().describe("The head it continues from, when that attempt ended with a record commit."),
    stage: stage.optional().describe("The first stage that attempt's checkpoint left pending."),
    session: z
      .object({
        adapter: z.enum(ADAPTERS).describe("The CLI that holds the session."),
        id: z.string().regex(SESSION_ID).describe("Its session id."),
        stage: stage.describe("The stage whose session it is."),
      })
      .strict()
      .optional()
      .describe("The agent CLI's session to resume, and the stage it belongs to."),
    depthUsed: z.number().int().min(0).max(10).optional().describe("Spawn depth that attempt's sessions had used."),
  })
  .strict()
  .describe("A resumed attempt (docs/executor.md#resuming): what it continues.");
export type ResumeContext = z.infer<typeof resumeContextSchema>;
