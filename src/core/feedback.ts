/**
 * Feedback on a task's pull request that a revision must answer (docs/executor.md#iterations). It is
 * untrusted text from people: the App bounds it before it reaches the journal, and the job treats it
 * as data for the agent, never as instructions to the runner.
 */
import { z } from "zod";

/** Bounds on feedback kept in the journal: one message, and how many items wait for one revision. */
export const FEEDBACK_LIMITS = { message: 4_000, items: 10, checks: 20, checkName: 200, details: 8_000, steer: 2_000 } as const;

/** Feedback on a task's PR that a revision must answer. Only people with write access (checked on GitHub) give it. */
export const feedbackSchema = z
  .object({
    source: z.enum(["review", "command", "ci"]).describe("A review asking for changes, `/forge fix`, or failing required checks."),
    actor: z.string().optional().describe("Who gave it (review and command)."),
    reviewId: z.number().int().optional().describe("The review: its body and inline comments are read from GitHub by the job."),
    message: z.string().optional().describe("The review body or the command's message, bounded."),
    headSha: z.string().optional().describe("The PR head it was given on."),
    checks: z.array(z.string()).optional().describe("Failing required checks (ci)."),
    details: z
      .string()
      .optional()
      .describe("Failing checks (ci): their summaries, annotations and the end of their logs, as the App read them, bounded."),
  })
  .strict();
export type Feedback = z.infer<typeof feedbackSchema>;

/** `text` cut to `max` characters, saying so. */
export function bounded(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n[… cut at ${max} of ${text.length} characters]`;
}
