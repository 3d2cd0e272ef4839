/**
 * The demo's person as a reviewer (docs/executor.md#iterations): when `pad`'s PR first reaches
 * MERGE_READY, `octocat` — a person with write access, through the REST API with their own token —
 * asks for changes in a review with a body and one inline comment; the agent answers in a revision
 * on the same PR (its push, a reply in the comment's thread); once the revision is MERGE_READY the
 * person approves it. A review that arrives while the task is still RUNNING or DONE is kept and
 * taken by a revision when the gate passes, instead of the merge.
 */
import type { Octokit } from "@octokit/rest";
import type { Journal } from "../core/journal.js";
import { iterationOf, prHead } from "../core/task-rules.js";
import { parseScriptedTask } from "../fake-agents/scripted-agent.js";
import { wipMarker } from "./demo-agent.js";
import type { PlanStages } from "./plan-stages.js";
import { DEMO_OWNER, DEMO_REPO } from "./project.js";

/** The task whose PR the demo's person reviews. */
export const REVIEWED_TASK = "pad";
/** What the person writes: the review's body and its inline comment (on `center`'s JSDoc line of src/pad.js). */
export const REVIEW = {
  body: "Looks right. One thing before it merges: see the comment on `center`.",
  path: "src/pad.js",
  line: 19,
  comment: "Say in the doc comment which side gets the extra fill character when the padding is odd.",
} as const;

export interface DemoReview {
  task: string;
  pr: number;
  /** The review asking for changes, and its inline comment. */
  reviewId: number;
  commentId: number;
  /** The approval of the revised head, when the person gave it. */
  approvalId?: number;
  approvedHead?: string;
}

export class DemoReviewer {
  review: DemoReview | undefined;
  private asking = false;
  private approving = false;

  constructor(
    private readonly user: Octokit,
    private readonly tell: (line: string) => void,
    private readonly problem: (line: string) => void,
  ) {}

  /** Called as the run goes: acts at most once per step. */
  async onJournal(j: Journal): Promise<void> {
    const t = j.tasks.find((x) => x.id === REVIEWED_TASK);
    const prNumber = t?.attempt?.prNumber;
    if (!t || prNumber === undefined) return;
    const iteration = iterationOf(t);
    if (!this.review && !this.asking && !iteration && ["RUNNING", "DONE", "MERGE_READY"].includes(t.status)) {
      // As soon as the agent's work is on the PR (ready for review): a review that comes while the
      // task is still RUNNING or DONE is kept and taken by a revision instead of the merge.
      const r = { owner: DEMO_OWNER, repo: DEMO_REPO, pull_number: prNumber };
      const { data: pr } = await this.user.rest.pulls.get(r);
      if (pr.draft || pr.state !== "open") return;
      // Every page: the attempt's record (walkthrough, stages, sentinel, checkpoints) lists before src/.
      const files = await this.user.paginate(this.user.rest.pulls.listFiles, { ...r, per_page: 100 });
      if (!files.some((f) => f.filename === REVIEW.path)) return;
      this.asking = true;
      try {
        const { data } = await this.user.rest.pulls.createReview({
          ...r,
          commit_id: pr.head.sha,
          event: "REQUEST_CHANGES",
          body: REVIEW.body,
          comments: [{ path: REVIEW.path, line: REVIEW.line, side: "RIGHT", body: REVIEW.comment }],
        });
        const { data: comments } = await this.user.rest.pulls.listCommentsForReview({ ...r, review_id: data.id });
        this.review = { task: t.id, pr: prNumber, reviewId: data.id, commentId: comments[0]?.id ?? 0 };
        this.tell(`requested changes on #${prNumber} (${t.id}): "${REVIEW.body}" and a comment on ${REVIEW.path}:${REVIEW.line}`);
      } catch (e) {
        this.problem(`the review of ${t.id}'s PR #${prNumber} failed: ${(e as Error).message}`);
      }
      return;
    }
    const head = prHead(t);
    if (t.status !== "MERGE_READY" || !head) return;
    if (this.review && this.review.approvalId === undefined && !this.approving && iteration >= 1) {
      this.approving = true;
      try {
        const { data } = await this.user.rest.pulls.createReview({
          owner: DEMO_OWNER,
          repo: DEMO_REPO,
          pull_number: prNumber,
          commit_id: head,
          event: "APPROVE",
          body: "Thanks, that answers it.",
        });
        this.review.approvalId = data.id;
        this.review.approvedHead = head;
        this.tell(`approved #${prNumber} (${t.id}) at ${head.slice(0, 7)}, revision ${iteration}`);
      } catch (e) {
        this.problem(`approving ${t.id}'s PR #${prNumber} failed: ${(e as Error).message}`);
      }
    }
  }
}

/**
 * The feedback the plan scripts, which the demo then demands: the person's review when the plan has
 * the reviewed task writing the reviewed file (textkit's `pad`); a CI fix for the first task whose
 * `forge-scripted-agent` block names a `wip_marker` (textkit's `truncate`). Other plans script neither.
 */
export function feedbackExpected(stages: PlanStages): { review: boolean; ciFix?: string } {
  const reviewed = stages.taskText(REVIEWED_TASK);
  let review = false;
  try {
    review = reviewed !== undefined && parseScriptedTask(reviewed).files.some(([file]) => file === REVIEW.path);
  } catch {
    // A task file the scripted agent cannot read writes nothing to review.
  }
  const ciFix = stages.dag.nodes.find((n) => wipMarker(stages.taskText(n.id)) !== undefined)?.id;
  return { review, ...(ciFix ? { ciFix } : {}) };
}

/**
 * The feedback loop as it ended, read back from GitHub and the run's journal: the review, its
 * thread's reply and the approval; the CI fix with the required check's conclusions on the PR's heads.
 */
export async function readFeedback(
  user: Octokit,
  j: Journal | undefined,
  review: DemoReview | undefined,
  ciFixTask: string | undefined,
): Promise<DemoFeedback> {
  const out: DemoFeedback = {};
  const r = { owner: DEMO_OWNER, repo: DEMO_REPO };
  if (review) {
    const t = j?.tasks.find((x) => x.id === review.task);
    const { data: comments } = await user.rest.pulls.listReviewComments({ ...r, pull_number: review.pr, per_page: 100 });
    const reply = comments.find((c) => c.in_reply_to_id === review.commentId)?.body;
    // What the thread holds, for the problem's text when the reply is missing.
    const thread = comments.map((c) => `${c.id}${c.in_reply_to_id ? `→${c.in_reply_to_id}` : ""} by ${c.user?.login ?? "?"}`).join(", ");
    out.review = {
      ...review,
      ...(reply !== undefined ? { reply } : {}),
      thread,
      status: t?.status ?? "unknown",
      iteration: t ? iterationOf(t) : 0,
    };
  }
  const t = ciFixTask === undefined ? undefined : j?.tasks.find((x) => x.id === ciFixTask);
  const a = t?.attempt;
  if (t && a?.ciFixes) {
    // The project's CI on the task's branch, oldest first: red on the first head, green on the fix.
    const conclusions: string[] = [];
    const { data } = await user.rest.actions.listWorkflowRunsForRepo({ ...r, branch: a.branch, event: "push", per_page: 100 });
    const runs = [...data.workflow_runs].filter((w) => w.name === "CI").sort((x, y) => x.id - y.id);
    for (const run of runs) conclusions.push(`${run.head_sha.slice(0, 7)} ${run.conclusion ?? run.status ?? "?"}`);
    const red = runs.find((w) => w.conclusion === "failure");
    const green = runs.findLast((w) => w.conclusion === "success");
    const counted = (c: string) => runs.filter((w) => w.conclusion === c).length;
    out.ciFix = {
      task: t.id,
      ...(a.prNumber !== undefined ? { pr: a.prNumber } : {}),
      failedCheck: "check",
      iteration: a.revision.iteration,
      status: t.status,
      ...(red ? { failedHead: red.head_sha.slice(0, 7) } : {}),
      ...(green && green.id > (red?.id ?? 0) ? { fixedHead: green.head_sha.slice(0, 7) } : {}),
      runs: { total: runs.length, success: counted("success"), failure: counted("failure"), cancelled: counted("cancelled") },
      conclusions,
    };
  }
  return out;
}

export interface DemoFeedback {
  review?: DemoReview & {
    /** The agent's reply in the inline comment's thread. */
    reply?: string;
    /** The PR's review comments: id, the comment each replies to, author. */
    thread: string;
    /** The task's status and iteration at the end. */
    status: string;
    iteration: number;
  };
  ciFix?: {
    task: string;
    pr?: number;
    /** The required check that failed on the first head; the fix revision's iteration. */
    failedCheck: string;
    iteration: number;
    status: string;
    /** The head the required check failed on, and the fix revision's head it passed on (7 characters). */
    failedHead?: string;
    fixedHead?: string;
    /** The project's CI runs on the task's branch, counted by conclusion. */
    runs: { total: number; success: number; failure: number; cancelled: number };
    /** The project's CI runs on the task's branch, oldest first (`<sha7> <conclusion>`). */
    conclusions: string[];
  };
}
