import { z } from "zod";

/**
 * How an attempt ended, as the retry policy sees it (docs/executor.md#resuming): the classes whose
 * next attempt may continue the work rather than start it again.
 *
 * - `stale`: the agent stalled, went idle or ran out of time (exit 21), or the App found its job silent;
 * - `lost`: the job ended without a result, or its runner went away mid-step (an infrastructure failure);
 * - `usage_limit`: the model's usage limit stopped it (retried after the reset);
 * - `budget`: the runner stopped it at its budget (retried by `/forge budget`);
 * - `failure`: the work itself failed (exit 1: tests red, the agent's own failure, no walkthrough);
 * - `refinement`: a quality gate asked for another try with its refinement document (exit 10).
 */
export const RESUME_CLASSES = ["stale", "lost", "usage_limit", "budget", "failure", "refinement"] as const;
export type ResumeClass = (typeof RESUME_CLASSES)[number];

const way = z.enum(["resume", "fresh"]);
export type RetryWay = z.infer<typeof way>;

/** The defaults: work interrupted from outside goes on; work that failed by itself starts again. */
export const DEFAULT_RETRY_POLICY: Record<ResumeClass, RetryWay> = {
  stale: "resume",
  lost: "resume",
  usage_limit: "resume",
  budget: "resume",
  failure: "fresh",
  refinement: "fresh",
};

const describeClass: Record<ResumeClass, string> = {
  stale: "The agent stalled, went idle or ran out of time (exit 21), or its job went silent.",
  lost: "The job ended without a result, or its runner went away mid-step.",
  usage_limit: "The model's usage limit stopped the attempt.",
  budget: "The runner stopped the agent at its budget; `/forge budget` retries it.",
  failure: "The work failed (exit 1): tests red, the agent's own failure, no valid walkthrough.",
  refinement: "A quality gate asked for another try with its refinement document (exit 10).",
};

/** `.github/forge.yml`'s `retry_policy`: every class with its default. */
export const retryPolicySchema = z
  .object(
    Object.fromEntries(RESUME_CLASSES.map((c) => [c, way.default(DEFAULT_RETRY_POLICY[c]).describe(describeClass[c])])) as {
      [C in ResumeClass]: z.ZodDefault<typeof way>;
    },
  )
  .strict()
  .prefault({})
  .describe(
    "Per way an attempt ended, whether its retry resumes — continues on the same branch and PR from the pushed head and from the first stage its checkpoint left pending, resuming the agent CLI's session where the adapter can — or starts fresh on a new branch (see docs/executor.md#resuming).",
  );
export type RetryPolicy = z.infer<typeof retryPolicySchema>;

/** A task's front matter `retry_policy`: the classes it overrides. */
export const taskRetryPolicySchema = z
  .object(Object.fromEntries(RESUME_CLASSES.map((c) => [c, way.optional().describe(describeClass[c])])) as {
    [C in ResumeClass]: z.ZodOptional<typeof way>;
  })
  .strict()
  .describe("The task's own retry policy, overriding the config's `retry_policy` class by class.");
export type TaskRetryPolicy = z.infer<typeof taskRetryPolicySchema>;
