import { z } from "zod";
import { ADAPTERS } from "./adapters.js";
import { MODEL_ID, MODEL_ROLES, TIER_NAMES, modelSpecSchema, type ModelRole, type TierName } from "../tiers.js";
import { retryPolicySchema } from "./retry-policy.js";
import { AGENT_KINDS, kindAgentSchema } from "../agents.js";
import { DEFAULT_BRANCH_TEMPLATE, DEFAULT_INTEGRATION_BRANCH_TEMPLATE } from "../layout.js";

/**
 * `.github/forge.yml` — every field has a default, so an empty file (or none) is a valid config.
 * Field names are snake_case because users write them in YAML.
 */
export const forgeConfigSchema = z
  .object({
    version: z.literal(1).default(1).describe("Config format version. Only 1 exists."),
    autostart: z
      .boolean()
      .default(true)
      .describe("Start a run when a plan is merged to the default branch. When false, runs start only with `/forge run <planId>`."),
    issue_sync: z
      .enum(["tree", "linked", "off"])
      .default("tree")
      .describe(
        "Which runs show on their tasks' issues (a comment kept up to date on each, the run's summary on the plan's issue, the issues closed when the final PR merges): `tree`, runs of plans built from an issue tree by `/forge plan`; `linked`, also any plan whose tasks name an `issue:`; `off`, none (see docs/formats.md#plans-from-an-issue-tree).",
      ),
    max_parallel_agents: z
      .number()
      .int()
      .min(1)
      .max(256)
      .default(5)
      .describe("Maximum number of agents running at once in one run (see docs/executor.md#scheduling)."),
    heartbeat_interval_seconds: z
      .number()
      .positive()
      .default(30)
      .describe("How often the runner checks the agent's progress (its output stream), in seconds (see docs/runner.md#heartbeats)."),
    stale_threshold_seconds: z
      .number()
      .positive()
      .default(60)
      .describe("Seconds without agent progress after which the runner declares the agent stalled: 2 missed heartbeats (see docs/runner.md#heartbeats)."),
    max_retries: z
      .number()
      .int()
      .min(0)
      .max(20)
      .default(3)
      .describe("Automatic retries per task after its first attempt; past this the task is exhausted (see docs/executor.md#retries)."),
    retry_policy: retryPolicySchema,
    low_confidence_threshold: z
      .number()
      .min(0)
      .max(1)
      .default(0.6)
      .describe("A walkthrough whose confidence is below this raises a review.low_confidence event (see docs/executor.md#review)."),
    merge_policy: z
      .enum(["auto", "manual", "review"])
      .default("auto")
      .describe(
        "auto: the App merges a task PR once its required checks pass. manual: a person merges it. review: the App merges it once its required checks pass and a person with write access has approved its current head in a review.",
      ),
    review: z
      .object({
        max_iterations: z
          .number()
          .int()
          .min(0)
          .max(20)
          .default(3)
          .describe(
            "Revisions of one task PR that reviews asking for changes (or `/forge fix`) may start; past this the task waits for a person and the tracker says why.",
          ),
      })
      .prefault({})
      .describe("The PR feedback loop: a review asking for changes starts a revision on the same PR (see docs/executor.md#iterations)."),
    required_checks: z
      .array(z.string().min(1))
      .default([])
      .describe(
        "Names of check runs and commit-status contexts (the repository's own CI) a task PR's head must pass before Forge merges it, besides what branch protection requires; their failure starts a fix revision (ci_fix), their output given to the agent as CI output. Only these count: any token that may post a status or a check run can name it anything. Empty: Forge merges when GitHub allows and starts no CI fix.",
      ),
    ci_fix: z
      .object({
        max_attempts: z
          .number()
          .int()
          .min(0)
          .max(10)
          .default(2)
          .describe("Fix revisions started when the repository's own required checks fail on a task PR; past this the task waits for a person."),
      })
      .prefault({})
      .describe("Red CI on a task PR starts a fix revision with the failing checks as context (see docs/executor.md#iterations)."),
    cr_mode: z
      .enum(["replan", "review"])
      .default("replan")
      .describe("replan: a Change Request dispatches a Captain agent that writes an overlay PR. review: the CR waits for `/forge approve` or `/forge reject`."),
    refinery_approval: z
      .boolean()
      .default(false)
      .describe("When true, a refinery's PR is merged only after a person comments `/forge approve` on it."),
    protected_paths: z
      .array(z.string().min(1))
      .default([])
      .describe("Globs of paths, besides .forge/plans/**, .github/**, .env* and the files agents read as instructions (AGENTS.md, CLAUDE.md, .claude/, …), that a task's or refinery's PR may change only with a person's approval: Forge holds its merge until someone with write access comments `/forge approve` on it."),
    branch_template: z
      .string()
      .regex(/\{runId\}/, "must contain {runId}")
      .regex(/\{taskId\}/, "must contain {taskId}")
      .regex(/\{attempt\}/, "must contain {attempt}")
      .default(DEFAULT_BRANCH_TEMPLATE)
      .describe("Task branch name. Placeholders: {runId}, {taskId}, {attempt}. Run-scoped so two runs never share a branch (see docs/formats.md#branches)."),
    integration_branch_template: z
      .string()
      .regex(/\{runId\}/, "must contain {runId}")
      .default(DEFAULT_INTEGRATION_BRANCH_TEMPLATE)
      .describe("The run's integration branch, which task PRs target. Placeholder: {runId}. Forge's own names start with '_', which no task id can, so they never collide with task branches."),
    base_branch: z
      .string()
      .optional()
      .describe("Branch the integration branch is cut from and the final PR targets. Default: the repository's default branch."),
    final_pr: z
      .object({
        auto_merge: z
          .boolean()
          .default(false)
          .describe(
            "Once a person with write access approves the run's final PR, Forge sets it to merge automatically (GitHub's auto-merge, by the method the base's rules allow; through the base's merge queue where it has one). Needs \"Allow auto-merge\" in the repository's settings. Off: a person merges it.",
          ),
      })
      .prefault({})
      .describe("The run's final PR (integration branch → base) (see docs/executor.md#merge-queue-and-auto-merge)."),
    followups: z
      .object({
        keywords: z
          .array(z.string().min(1))
          .default(["bug", "fix", "broken", "regression"])
          .describe("A follow-up containing one of these words (case-insensitive, whole word) spawns a Type 1 agent outside the DAG."),
        spawn_open_ended: z
          .boolean()
          .default(false)
          .describe("Also spawn agents for follow-ups without a keyword (refactor, investigate, …). Otherwise they are only logged."),
        max_per_run: z
          .number()
          .int()
          .min(0)
          .default(10)
          .describe("Upper bound on follow-up agents spawned in one run."),
      })
      .prefault({})
      .describe("Follow-up agents spawned from walkthrough review (see docs/executor.md#follow-ups)."),
    retry_backoff: z
      .object({
        base_seconds: z.number().min(0).default(2).describe("Base delay of the exponential backoff before a retry."),
        max_seconds: z.number().min(0).default(60).describe("Upper bound on the backoff delay."),
      })
      .prefault({})
      .describe("delay = min(base · 2^retry + jitter(0, base), max). Jitter is derived from the task and attempt, so decisions are reproducible (see docs/executor.md#retries)."),
    timeouts: z
      .object({
        agent_minutes: z.number().positive().default(60).describe("Wall-clock limit of one agent attempt inside its job; partial work is kept."),
        idle_minutes: z.number().positive().default(10).describe("The runner stops an agent that produced no output for this long; partial work is kept."),
        stage_minutes: z
          .number()
          .positive()
          .default(30)
          .describe(
            "Wall-clock limit of one stage's agent session: one that reaches it is stopped and the stage tried once more from the work it left; a second time the attempt ends timed out (exit 21). The attempt's own limit, agent_minutes, still bounds every stage.",
          ),
        job_minutes: z.number().positive().default(90).describe("timeout-minutes of the agent workflow job."),
        dispatch_start_minutes: z
          .number()
          .positive()
          .default(15)
          .describe("A dispatched attempt whose job has not started after this long is STALE (a lost dispatch)."),
        liveness_minutes: z
          .number()
          .positive()
          .default(10)
          .describe("A started attempt with no sign of life (job events, reconciler sweeps) for this long is STALE."),
      })
      .prefault({})
      .describe("Time limits. The runner enforces the agent ones; the App enforces dispatch and liveness."),
    agent: z
      .object({
        adapter: z.enum(ADAPTERS).default("claude").describe("Which agent CLI runs tasks (a kind's `kinds` entry or a task's `agent` may choose another)."),
        kinds: z
          .partialRecord(z.enum(AGENT_KINDS), kindAgentSchema)
          .optional()
          .describe(
            "Per agent kind (`1`, `2`, `3`, `refinery`): `{ agent, model }` — its agent (an adapter name, or an ordered fallback list) and the model of its implementer sessions, over `adapter` and `models.implementer`; a task's own `agent` and `model` win (see docs/runner.md#agents-per-task).",
          ),
        model: modelSpecSchema
          .optional()
          .describe("A tier (low, medium, high) or a model id for every agent session without a model of its own (see docs/runner.md#model-tiers)."),
        models: z
          .object(Object.fromEntries(MODEL_ROLES.map((r) => [r, modelSpecSchema.optional()])) as Record<ModelRole, z.ZodOptional<typeof modelSpecSchema>>)
          .strict()
          .optional()
          .describe(
            "A tier or a model id per role: implementer (implement, work, fix, merge stages; default high), analyst (plan, walkthrough; medium), verifier (verify; low), sentinel (every sentinel role; low), captain (high). A role without one takes `model`, else its default tier.",
          ),
        tiers: z
          .partialRecord(
            z.enum(ADAPTERS),
            z
              .object(Object.fromEntries(
                  TIER_NAMES.map((t) => [t, z.string().regex(MODEL_ID, "not a model id").optional().describe(`The model of the ${t} tier.`)]),
                ) as Record<TierName, z.ZodOptional<z.ZodString>>)
              .strict(),
          )
          .optional()
          .describe("The model of each tier, per adapter, over Forge's defaults (claude: haiku, sonnet, opus; codex: gpt-5.5 at low, medium and high reasoning effort; gemini: gemini-2.5-flash, gemini-2.5-pro, gemini-2.5-pro; opencode: gpt-5.5; qwen: qwen3-coder-flash, qwen3-coder-plus, qwen3-coder-plus; copilot: claude-haiku-4-5, claude-sonnet-4-5, claude-opus-4-5)."),
        long_context: z
          .boolean()
          .default(false)
          .describe(
            "Claude Code on Anthropic's API: run its models in their 1M-token context variant (the `context-1m` beta; Haiku has none). Off for other providers (another ANTHROPIC_BASE_URL, Vertex, Bedrock) and other adapters.",
          ),
        command: z.string().optional().describe("For adapter `command`: the executable to run (environment in, exit code and files out)."),
        max_turns: z.number().int().positive().default(100).describe("Turn limit passed to the agent CLI."),
        max_depth: z.number().int().min(1).max(10).default(3).describe("Spawn depth budget: how deep agent sessions may nest, the task agent's own session counting as 1, so 3 leaves two levels of sub-agents (see docs/runner.md#depth-budget)."),
        max_sub_agents: z
          .number()
          .int()
          .min(0)
          .max(100)
          .default(10)
          .describe(
            "Sub-agents one job may start in all, every depth counted (`forge spawn`, type 3's subtasks, the refinery's helpers); past it a spawn is refused with exit 2 and recorded in result.json's `sub_agents` (see docs/runner.md#sub-agent-cap).",
          ),
        isolation: z
          .enum(["auto", "user", "none"])
          .default("auto")
          .describe(
            "Run agents and the test command as an OS user of their own (one per job, removed with its processes at the end), so they cannot read the job's token from the runner's processes (needs root or passwordless sudo, as GitHub's hosted runners have): `auto` when possible (else a warning), `user` always (else the job fails), `none` never (see docs/runner.md#isolation).",
          ),
      })
      .prefault({})
      .describe("How the runner invokes agents."),
    test_command: z
      .string()
      .optional()
      .describe("Command refineries (and tasks without their own) run to verify work, e.g. `npm test`."),
    sentinel: z
      .object({
        enabled: z
          .boolean()
          .default(true)
          .describe(
            "After a type 1, 2 or 3 task's own stages, an agent of another role (the sentinel, which did not write the code) checks the work against the task's acceptance criteria and its test command; what it finds the implementer fixes, and it checks again (see docs/runner.md#the-task-sentinel). A task turns it off for itself with `sentinel: false`.",
          ),
        max_cycles: z
          .number()
          .int()
          .min(0)
          .max(5)
          .default(2)
          .describe("Fixes the sentinel may ask for before the attempt ends with exit 10 and the sentinel's findings as its refinement document; the last fix is judged by a final check."),
      })
      .strict()
      .prefault({})
      .describe("Independent verification of every task (refineries verify in their own test and fix stages)."),
    branch_cleanup: z
      .enum(["on_merge", "on_complete", "never"])
      .default("never")
      .describe("When Forge deletes task branches: as each PR merges, when the run completes, or never (default: GitHub's 'Automatically delete head branches' setting does it for merged PRs without an API call)."),
    workflow: z
      .string()
      .default("forge-agent.yml")
      .describe("File name of the agent workflow under .github/workflows/."),
    budgets: z
      .object({
        attempt_usd: z.number().positive().optional().describe("Dollars one task attempt may spend; the runner stops the agent past it, its work kept."),
        attempt_tokens: z.number().int().positive().optional().describe("Model tokens one task attempt may use."),
        task_usd: z.number().positive().optional().describe("Dollars all attempts of one task together may spend."),
        run_usd: z
          .number()
          .positive()
          .optional()
          .describe("Dollars the whole run may spend; the App dispatches only what the rest can cover (each running attempt's cap reserved) and pauses the run when it is spent. `/forge budget +<amount>` raises it."),
      })
      .strict()
      .prefault({})
      .describe("Spend caps; none by default. A task's front matter `budget` overrides the attempt and task caps (see docs/runner.md#budgets)."),
    prices: z
      .record(
        z.string().min(1),
        z
          .object({
            input_per_mtok: z.number().min(0).describe("Dollars per million input tokens."),
            output_per_mtok: z.number().min(0).describe("Dollars per million output tokens."),
            cache_write_per_mtok: z.number().min(0).optional().describe("Dollars per million tokens written to the prompt cache (default: the input price)."),
            cache_read_per_mtok: z.number().min(0).optional().describe("Dollars per million tokens read from the prompt cache (default: the input price)."),
          })
          .strict(),
      )
      .default({})
      .describe("Model prices by model id, for spend an adapter reports as tokens (Codex) and for the runner's model proxy; `default` prices a model not listed."),
    telemetry: z
      .object({
        otlp_endpoint: z
          .url({ protocol: /^https?$/ })
          .optional()
          .describe(
            "OpenTelemetry collector (OTLP over HTTP, e.g. `http://collector:4318`): when set, the App and the runner export traces (run → task → attempt → stage) and metrics to `<endpoint>/v1/traces` and `/v1/metrics`. Off when unset.",
          ),
        service_name: z.string().min(1).max(100).default("forge").describe("The `service.name` of what Forge exports."),
      })
      .strict()
      .prefault({})
      .describe("Optional export of traces and metrics (see docs/runner.md#telemetry)."),
  })
  .strict()
  .describe("Forge configuration, read from .github/forge.yml on the default branch.");

export type ForgeConfig = z.infer<typeof forgeConfigSchema>;

/** The config with every default applied. */
export function defaultConfig(): ForgeConfig {
  return forgeConfigSchema.parse({});
}
