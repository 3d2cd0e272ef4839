import { z } from "zod";
import { MODEL_ROLES, TIER_NAMES } from "../tiers.js";

/** Frontmatter of `walkthrough.md`, written by the agent and completed by the runner (see docs/formats.md#walkthrough). */
export const walkthroughFrontmatterSchema = z
  .object({
    task_id: z.string().min(1).describe("The task (or follow-up) id."),
    run_id: z.string().min(1).describe("The run id."),
    attempt: z.number().int().min(1).describe("Attempt number, from 1."),
    branch: z.string().min(1).describe("Task branch; filled in by the runner."),
    base_ref: z.string().min(1).describe("Ref the branch was cut from; filled in by the runner."),
    head_sha: z.string().regex(/^[0-9a-f]{40}$/, "must be a 40-character commit sha").describe("Commit the walkthrough describes; filled in by the runner."),
    status: z.enum(["completed", "failed", "partial"]).describe("The agent's verdict on its own work."),
    confidence: z.number().min(0).max(1).describe("The agent's self-assessed confidence, 0–1."),
    time_spent_minutes: z.number().min(0).describe("Wall-clock minutes; measured by the runner."),
    files_changed: z
      .array(z.object({ path: z.string().min(1).describe("Repository-relative path."), reason: z.string().describe("Why it changed.") }).strict())
      .describe("Files changed on the branch; the list is measured by the runner, the reasons come from the agent."),
    tests: z
      .array(
        z
          .object({
            name: z.string().min(1).describe("Test name."),
            result: z.enum(["pass", "fail", "skip", "error"]).describe("Outcome."),
          })
          .strict(),
      )
      .default([])
      .describe("Tests the agent ran and their results."),
    risks: z.array(z.string()).default([]).describe("Risks the reviewer should know; each becomes a warning event."),
    followups: z.array(z.string()).default([]).describe("Work left for later; bug-like ones spawn follow-up agents."),
    agent: z.string().optional().describe("Agent adapter that did the work (claude, codex, gemini, opencode, qwen, copilot, command)."),
    model: z.string().optional().describe("Model used, where known."),
    models: z
      .array(
        z
          .object({
            stage: z.string().min(1).describe("The stage."),
            role: z.enum(MODEL_ROLES).describe("Its sessions' role (implementer, analyst, verifier, sentinel, captain)."),
            tier: z.enum(TIER_NAMES).optional().describe("The tier the model came from, when it came from one."),
            model: z.string().optional().describe("The model asked of the CLI (absent: the CLI's own default)."),
          })
          .strict(),
      )
      .max(32)
      .optional()
      .describe("The model of each stage the attempt ran, as the runner chose it (see docs/runner.md#model-tiers)."),
    cost_usd: z.number().min(0).optional().describe("Model cost in US dollars, where known."),
    turns: z.number().int().min(0).optional().describe("Agent turns used, where known."),
  })
  .strict()
  .describe("A task walkthrough: what the agent did, for reviewers and for the executor's review.");
export type WalkthroughFrontmatter = z.infer<typeof walkthroughFrontmatterSchema>;

/** Sections a walkthrough body must have. */
export const WALKTHROUGH_BODY_SECTIONS = ["Summary", "Approach", "Issues Encountered", "Testing"] as const;
