// Effect runner, continued: merging a task's pull request through the integration branch's merge
// queue, where its rules hold a `merge_queue` rule (docs/executor.md#merge-queue-and-auto-merge).
import type { TaskState } from "../../core/journal.js";
import { checksFailedInput, ciVerdict, onGroup } from "../../github/ci-checks.js";
import type { EffectContext, EffectOf, EffectOutcome } from "./context.js";

/**
 * How often a merge waiting in the queue asks GitHub where it stands. The queue's webhooks
 * (`merge_group`, `pull_request` enqueued/dequeued/closed) flush the merge at once; this is the
 * pace at which a lost one is made up for.
 */
export const QUEUE_POLL_MS = 20_000;

/** The merge groups Forge saw a task's head tested in, by `<taskId>:<attempt>` (run facts). */
export type MergeGroups = Record<string, { head: string; group: string }>;

export interface QueueMerge {
  t: TaskState;
  number: number;
  /** the head that passed the gate, which goes into the queue */
  head: string;
  /** the checks the config and the rules require */
  required: { all: string[]; configured: string[] };
}

/**
 * The task's pull request through the merge queue: enqueued at its verified head (GraphQL
 * `enqueuePullRequest`), then followed until it merges — its `pull_request.closed` or the next look
 * finds it merged (the caller's first read). GitHub tests it in a merge group (the PR merged onto
 * the base's tip, on a `gh-readonly-queue/…` branch) with the repository's own CI: a required check
 * that fails there drops the PR from the queue (`dequeued`, `CI_FAILURE`), and the failure goes to
 * the task as red CI — a fix revision of the same PR, whose new head is enqueued again. Nothing is
 * taken from the order of webhooks: every look reads the queue entry, and the group's checks, again.
 * `refused` answers GitHub's refusal to queue it (approvals, checks on the head, …) as a refused merge.
 */
export async function throughQueue(
  ctx: EffectContext,
  effect: EffectOf<"MergePullRequest">,
  q: QueueMerge,
  refused: (message: string) => Promise<EffectOutcome>,
): Promise<EffectOutcome> {
  const key = `${q.t.id}:${q.t.attempts}`;
  const seen: MergeGroups = ctx.facts.mergeGroups ?? {};
  const remember = (group: string) =>
    seen[key]?.group === group && seen[key]?.head === q.head
      ? {}
      : { learned: { mergeGroups: { ...seen, [key]: { head: q.head, group } } } };
  const entry = await ctx.port.queue.entry(q.number);
  if (entry) {
    if (!entry.groupSha)
      return {
        kind: "later",
        reason: `#${q.number} waits in the merge queue (${entry.state}, position ${entry.position + 1})`,
        retryInMs: QUEUE_POLL_MS,
      };
    const red = await redGroup(ctx, q, entry.groupSha);
    if (red) return red;
    return {
      kind: "later",
      reason: `#${q.number} is being tested in the merge queue (group ${entry.groupSha.slice(0, 7)}, ${entry.state})`,
      retryInMs: QUEUE_POLL_MS,
      ...remember(entry.groupSha),
    };
  }
  // Not queued (and not merged, which the caller read first): dropped, or never queued. A group of
  // this head whose required checks failed is what dropped it — its webhook may be late or lost.
  const last = seen[key]?.head === q.head ? seen[key]!.group : await lastGroup(ctx, q);
  if (last) {
    const red = await redGroup(ctx, q, last);
    if (red) return red;
  }
  if (ctx.stillWanted && !ctx.stillWanted()) return { kind: "later", reason: "the merge left the outbox while it was being checked" };
  const res = await ctx.port.queue.enqueue(q.number, q.head);
  if (res.kind === "refused") return refused(res.message);
  const { groupSha } = res.entry;
  return {
    kind: "later",
    reason: `#${q.number} entered ${ctx.journal.integrationBranch}'s merge queue at ${q.head.slice(0, 7)} (${effect.branch})`,
    retryInMs: QUEUE_POLL_MS,
    ...(groupSha ? remember(groupSha) : {}),
  };
}

/** The newest merge group of the task's head that GitHub Actions ran on, if any (a CI App's alone leave none to find). */
async function lastGroup(ctx: EffectContext, q: QueueMerge): Promise<string | undefined> {
  if (q.required.all.length === 0) return undefined;
  const heads = await ctx.port.queue.groupHeads(`gh-readonly-queue/${ctx.journal.integrationBranch}/pr-${q.number}-${q.head}`);
  return heads[0];
}

/**
 * The required checks of a merge group, done and red: `checks.failed` of the task's head (the one
 * the group merged), each failure saying it ran on the merge group. Undefined otherwise.
 */
async function redGroup(ctx: EffectContext, q: QueueMerge, group: string): Promise<EffectOutcome | undefined> {
  if (q.required.all.length === 0) return undefined;
  const ci = await ctx.port.ciChecks(group, q.required.all);
  if (ciVerdict(ci, q.required.configured) !== "red") return undefined;
  return {
    kind: "later",
    reason: `required checks failed on the merge group ${group.slice(0, 7)}: ${ci.failing.map((c) => c.name).join(", ")}`,
    inputs: [
      checksFailedInput({ taskId: q.t.id, attempt: q.t.attempts }, q.head, onGroup(ci.failing, group, ctx.journal.integrationBranch)),
    ],
  };
}
