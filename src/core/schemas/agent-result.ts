import { z } from "zod";
import { ALL_EXIT_CODES } from "../exit-codes.js";
import { changeRequestFrontmatterSchema } from "./change-request.js";
import { checkpointSchema } from "./checkpoint.js";
import { walkthroughFrontmatterSchema } from "./walkthrough.js";

const sha = z.string().regex(/^[0-9a-f]{40}$/);

/** An exit code of `ALL_EXIT_CODES` (src/core/exit-codes.ts). */
export const exitCodeSchema = z
  .union(ALL_EXIT_CODES.map((n) => z.literal(n)) as [z.ZodLiteral<0>, ...z.ZodLiteral<number>[]])
  .describe("Exit code: 0 success, 1 failure, 2 depth exceeded, 3 human input, 10 refinement, 11 escalation, 12 partial, 20 interrupted, 21 timeout (see docs/runner.md#exit-codes).");

/**
 * What the runner reports at the end of a job (`result.json` beside the walkthrough on the task
 * branch, and the job's outputs). The App reads it; facts are checked against GitHub before use.
 */
export const agentResultSchema = z
  .object({
    version: z.literal(1).describe("Result format version."),
    run_id: z.string().min(1).describe("The run id."),
    task_id: z.string().min(1).describe("The task or follow-up id."),
    attempt: z.number().int().min(1).describe("Attempt number."),
    exit_code: exitCodeSchema,
    branch: z.string().min(1).describe("Branch the runner pushed."),
    head_sha: z
      .string()
      .regex(/^[0-9a-f]{40}$/)
      .optional()
      .describe("The agent's work commit (the walkthrough's head_sha). The record commit holding this file is its child and adds only the attempt's record folder."),
    squashed: z
      .array(
        z
          .object({
            branch: z.string().min(1).describe("The upstream task's branch."),
            head_sha: sha.describe("The upstream head the runner squashed (git merge --squash)."),
            commit_sha: sha.describe(
              "The runner's commit on the refinery's branch that holds it: its squash commit, or the head that already held that content.",
            ),
          })
          .strict(),
      )
      .optional()
      .describe(
        "A refinery whose branch must keep a linear history: each upstream the runner squashed onto the branch (docs/executor.md#merging-under-the-repositorys-rules). The App counts an upstream contained when its verified head is listed here and the commit is an ancestor of the record commit.",
      ),
    walkthrough_path: z.string().optional().describe("Repository path of the walkthrough, when one was written."),
    walkthrough: walkthroughFrontmatterSchema
      .optional()
      .describe("The validated walkthrough frontmatter, so the App reads one file per result."),
    error: z.string().optional().describe("Why the attempt failed, for people (shown in the check run)."),
    refinement: z.string().optional().describe("Refinement document (exit 10): what the next attempt must fix."),
    question: z.string().optional().describe("Question for a person (exit 3); answered with `/forge retry <answer>`."),
    change_request_path: z.string().optional().describe("Repository path of the Change Request document (exit 11)."),
    change_request: changeRequestFrontmatterSchema
      .optional()
      .describe("The Change Request's front matter (exit 11), as the runner validated and completed it: the agent's title, reason and suggestions."),
    rate_limited_until: z
      .string()
      .optional()
      .describe("The model's usage limit resets at this time (ISO-8601); the attempt is not counted as a failure."),
    started_at: z.string().describe("When the agent started (ISO-8601)."),
    finished_at: z.string().describe("When the job finished (ISO-8601)."),
    agent: z.string().optional().describe("Adapter used."),
    model: z.string().optional().describe("Model used."),
    cost_usd: z.number().min(0).optional().describe("Model cost in US dollars."),
    turns: z.number().int().min(0).optional().describe("Turns used."),
    tokens: z
      .object({
        input: z.number().int().min(0).describe("Input tokens (cache reads and writes included)."),
        output: z.number().int().min(0).describe("Output tokens."),
      })
      .optional()
      .describe("Model tokens of the attempt, where the adapter or the runner's model proxy counted them."),
    agent_ms: z.number().int().min(0).optional().describe("How long the agent ran (milliseconds), by the job's clock."),
    sentinel: z
      .object({
        role: z.literal("sentinel").describe("The role that checked the work: never the implementer's."),
        grade: z.enum(["PASS", "WARN", "FAIL"]).describe("The verdict: FAIL ends the attempt with exit 10 and the findings as its refinement document."),
        cycles: z.number().int().min(0).describe("Checks that found something to fix, or that passed (the final check after the last fix is not one)."),
        fixes: z.number().int().min(0).describe("Fix sessions of the implementer the sentinel's findings started."),
        blocking_counts: z.array(z.number().int().min(0)).describe("Blocking problems after each check, in order."),
      })
      .strict()
      .optional()
      .describe("The task sentinel's verdict (see docs/runner.md#the-task-sentinel), when its stage ran to one."),
    checkpoint: checkpointSchema
      .optional()
      .describe(
        "The runner's last checkpoint of the attempt: the stages done and pending, the depth used, the agent CLI's session and the head pushed. The App checks it before a retry resumes from it; one that does not hold is refused and the retry starts fresh (see docs/executor.md#resuming).",
      ),
    budget_exceeded: z
      .object({
        limit_usd: z.number().min(0).optional().describe("The attempt's dollar cap."),
        limit_tokens: z.number().int().min(0).optional().describe("The attempt's token cap."),
        spent_usd: z.number().min(0).optional().describe("Dollars spent when the agent was stopped."),
        spent_tokens: z.number().int().min(0).optional().describe("Tokens used when the agent was stopped."),
      })
      .strict()
      .optional()
      .describe("The runner stopped the agent when it crossed the attempt's budget (exit 20); its work is committed and pushed."),
    sub_agents: z
      .object({
        limit: z.number().int().min(0).describe("The job's cap (`agent.max_sub_agents`)."),
        spawned: z.number().int().min(0).describe("Sub-agents started, every depth counted."),
        refused: z.number().int().min(0).describe("Spawns refused because the cap was reached (exit 2, `sub_agents_exceeded`)."),
        refusals: z
          .array(
            z
              .object({
                at: z.string().describe("When (ISO-8601)."),
                agentType: z.string().optional().describe("The type asked for."),
                depth: z.number().int().min(0).describe("Depth the sub-agent would have run at."),
                message: z.string().describe("What the spawn answered."),
              })
              .strict(),
          )
          .optional()
          .describe("The first refusals (at most 20)."),
      })
      .strict()
      .optional()
      .describe("Sub-agents of the attempt against the job's cap (see docs/runner.md#sub-agent-cap)."),
    proxy: z
      .object({
        requests: z.number().int().min(0).describe("Model answers that reported usage."),
        input_tokens: z.number().int().min(0).describe("Input tokens, cache reads and writes included."),
        output_tokens: z.number().int().min(0).describe("Output tokens."),
        cost_usd: z.number().min(0).optional().describe("The tokens priced by the config's `prices` (absent when a model has no price)."),
      })
      .strict()
      .optional()
      .describe("What the runner's model proxy measured of the attempt's model calls (tokens from the API's answers, priced by `prices`)."),
  })
  .strict()
  .describe("The runner's report of one attempt.");
export type AgentResult = z.infer<typeof agentResultSchema>;
