/**
 * The Action's inputs and the job environment, validated up front so a misconfigured workflow
 * fails with a message that says what to change, before anything is touched.
 */
import { z } from "zod";
import { feedbackSchema } from "../../src/core/feedback.js";
import { resumeContextSchema } from "../../src/core/schemas/checkpoint.js";
import { dispatchAgentSchema } from "../../src/core/agents.js";
import { fieldPath, formatProblem, toIssues } from "../../src/core/problems.js";
import { taskIdSchema } from "../../src/core/schemas/common.js";
import { ADAPTERS } from "../../src/core/schemas/adapters.js";
import { squashUpstreamSchema } from "../../src/core/task-record.js";
import { CAPTAIN_ID, FOLLOWUP_ID, PLAN_RUN_ID, RUN_ID_PATTERN } from "../../src/core/layout.js";

/** Forge run ids name branches (`forge/<runId>/…`), so they must be safe in a ref name. */
export const runIdSchema = z
  .string()
  .min(1, "is empty")
  .regex(RUN_ID_PATTERN, "must be letters, digits, '.', '_' or '-' (it names the branch forge/<runId>/…)");

/**
 * The dispatch `context` input: JSON `{ refinement?, answer? }` as the App sends it (layout.ts,
 * DISPATCH_INPUTS.context), `{ followup, sourceTaskId }` for a follow-up, `{ conflicts }` for a
 * refinery whose upstream merge conflicted (src/app/effects/branches-and-dispatch.ts). Empty means no
 * extra context.
 */
export const dispatchContextSchema = z
  .object({
    refinement: z.string().optional().describe("Refinement document of the previous attempt (exit 10)."),
    answer: z.string().optional().describe("A person's answer or message from /forge retry."),
    followup: z.string().optional().describe("A follow-up dispatch (`_followup-<n>`): the follow-up from the source task's walkthrough."),
    sourceTaskId: z.string().optional().describe("A follow-up dispatch: the task whose walkthrough listed it."),
    conflicts: z
      .array(z.string())
      .optional()
      .describe("A refinery dispatch: upstream branches whose server-side merge conflicted, left to the agent."),
    squash: z
      .array(squashUpstreamSchema)
      .optional()
      .describe(
        "A refinery dispatch whose branch must keep a linear history: upstream branches, each at its verified head, that the runner squashes onto the branch (one commit each) — the App merged none.",
      ),
    changeRequest: z.string().optional().describe("A Captain dispatch (`_captain-<crId>`): the Change Request to answer with an overlay."),
    planDir: z.string().optional().describe("A Captain dispatch: the plan folder."),
    reason: z.string().optional().describe("A Captain dispatch: the Change Request's reason."),
    issue: z
      .number()
      .int()
      .optional()
      .describe("A Captain dispatch: the Change Request's issue, or the issue a plan Captain writes a plan from."),
    title: z
      .string()
      .optional()
      .describe("A plan Captain dispatch (`_captain-plan-<issue>`): the issue's title (the job's token cannot read issues)."),
    body: z.string().optional().describe("A plan Captain dispatch: the issue's text, cut to 20,000 characters."),
    iteration: z.number().int().min(1).optional().describe("A revision of the attempt on its PR (docs/executor.md#iterations)."),
    feedback: z
      .array(feedbackSchema)
      .optional()
      .describe("A revision: what it must answer — reviews (read from GitHub by id), /forge fix messages, failing checks."),
    prNumber: z.number().int().optional().describe("A revision: the PR it revises."),
    resume: resumeContextSchema.optional(),
    agent: dispatchAgentSchema.optional(),
    budget: z
      .object({ usd: z.number().min(0).optional(), tokens: z.number().int().min(0).optional() })
      .strict()
      .optional()
      .describe("The attempt's caps (the App's reckoning of the attempt, task and run budgets): the runner stops the agent past them."),
    traceparent: z
      .string()
      .regex(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[0-3]$/, "must be a W3C traceparent")
      .optional()
      .describe("The App's dispatch span (W3C Trace Context), when telemetry is on: the runner's spans join the run's trace."),
    file: z
      .object({ path: z.string().min(1), sha: z.string().regex(/^[0-9a-f]{40}$/, "must be a git blob sha") })
      .strict()
      .optional()
      .describe(
        "Fields too long for the input (src/core/dispatch-inputs.ts): a JSON file on the run's state branch holding them, and its blob sha; the job reads it there (dispatch-context.ts).",
      ),
  })
  .strict();
export type DispatchContext = z.infer<typeof dispatchContextSchema>;

const contextInputSchema = z.string().transform((text, ctx): DispatchContext => {
  if (text.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    ctx.addIssue({
      code: "custom",
      message: `is not JSON (${(err as Error).message}); the App sends {"refinement": "…"} or {"answer": "…"}`,
    });
    return z.NEVER;
  }
  const parsed = dispatchContextSchema.safeParse(value);
  if (!parsed.success) {
    // Each complaint at its field inside the input (`context` → `context.answer`), as describeIssues names it.
    for (const issue of toIssues(parsed.error)) ctx.addIssue({ code: "custom", path: issue.path, message: issue.message });
    return z.NEVER;
  }
  return parsed.data;
});

/** The Action's inputs (action.yml), as `@actions/core` reads them: strings, "" when not given. */
export const actionInputSchema = z.object({
  githubToken: z
    .string()
    .min(1, "is empty: pass `${{ github.token }}` (the default) or a token with contents and pull-requests write access"),
  runId: z
    .string()
    .refine(
      (v) => runIdSchema.safeParse(v).success || PLAN_RUN_ID.test(v),
      "must be letters, digits, '.', '_' or '-' (it names the branch forge/<runId>/…), or a plan Captain's _plan-<issue>",
    ),
  // A plan task, or a follow-up the App spawned outside the DAG (`_followup-<n>`: the '_' keeps it apart from task ids).
  taskId: z
    .string()
    .refine(
      (v) => taskIdSchema.safeParse(v).success || FOLLOWUP_ID.test(v) || CAPTAIN_ID.test(v),
      "must match [a-z0-9][a-z0-9._-]* (lower-case letters, digits, '.', '_', '-'), or be a follow-up's _followup-<n> or a Captain's _captain-<crId>",
    ),
  attempt: z
    .string()
    .regex(/^[1-9][0-9]*$/, "must be a whole number from 1 (the App dispatches `attempt` as a string)")
    .transform(Number),
  context: contextInputSchema,
  adapter: z.union([z.literal(""), z.enum(ADAPTERS)]).transform((v) => (v === "" ? undefined : v)),
  model: z.string().transform((v) => v || undefined),
  command: z.string().transform((v) => v || undefined),
  anthropicApiKey: z.string().transform((v) => v || undefined),
  openaiApiKey: z.string().transform((v) => v || undefined),
  geminiApiKey: z.string().transform((v) => v || undefined),
  gitUserName: z.string().min(1, "is empty"),
  gitUserEmail: z.string().min(1, "is empty"),
});
export type ActionInput = z.output<typeof actionInputSchema>;

/** The input names of action.yml, by schema key. */
export const INPUT_NAMES: Record<keyof z.input<typeof actionInputSchema>, string> = {
  githubToken: "github-token",
  runId: "run-id",
  taskId: "task-id",
  attempt: "attempt",
  context: "context",
  adapter: "adapter",
  model: "model",
  command: "command",
  anthropicApiKey: "anthropic-api-key",
  openaiApiKey: "openai-api-key",
  geminiApiKey: "gemini-api-key",
  gitUserName: "git-user-name",
  gitUserEmail: "git-user-email",
};

/** What the job learns from the runner's environment (docs.github.com/actions/reference/variables-reference). */
export const jobEnvSchema = z.object({
  repository: z.string().regex(/^[^/\s]+\/[^/\s]+$/, "must be owner/name; is this running inside GitHub Actions?"),
  serverUrl: z.url("must be a URL"),
  apiUrl: z.url("must be a URL"),
  graphqlUrl: z.url("must be a URL").optional(),
  workspace: z.string().min(1, "is not set"),
  runnerTemp: z.string().min(1, "is not set"),
  /** The workflow run (not the Forge run): for links back to the job. */
  workflowRunId: z.string().optional(),
  actionsRuntimeToken: z.string().optional(),
});
export type JobEnv = z.infer<typeof jobEnvSchema>;

/** The environment variables of jobEnvSchema, by schema key. */
export const ENV_NAMES: Record<keyof JobEnv, string> = {
  repository: "GITHUB_REPOSITORY",
  serverUrl: "GITHUB_SERVER_URL",
  apiUrl: "GITHUB_API_URL",
  graphqlUrl: "GITHUB_GRAPHQL_URL",
  workspace: "GITHUB_WORKSPACE",
  runnerTemp: "RUNNER_TEMP",
  workflowRunId: "GITHUB_RUN_ID",
  actionsRuntimeToken: "ACTIONS_RUNTIME_TOKEN",
};

/**
 * zod issues as problems, one `- ` line each: the input (or variable) at fault named as the user wrote
 * it (`names`, shown by `label`), the field inside it, if any, and the message.
 */
export function describeIssues(
  error: z.ZodError,
  names: Record<string, string> = {},
  label: (name: string) => string = (name) => `input '${name}'`,
): string {
  return toIssues(error)
    .map(({ path: [key = "", ...inside], message }) => {
      const field = fieldPath(inside);
      return `- ${formatProblem({ file: label(names[String(key)] ?? String(key)), ...(field !== "" && { field }), message })}`;
    })
    .join("\n");
}
