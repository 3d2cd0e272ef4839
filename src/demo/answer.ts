/**
 * The demo's person answering an agent's question (docs/executor.md: exit 3 holds the task for a
 * person): once Forge has posted the question on the task's PR ("Answer with `/forge retry <task>
 * <your answer>`"), `octocat` — write access, the REST API with their own token — comments
 * `/forge retry <task> <answer>` on that PR. GitHub delivers the comment to the App as a signed
 * `issue_comment` webhook like any other; the App retries the task with the answer, which reaches
 * the next attempt's prompt. The answer is the task's `person_answer:` in its `forge-scripted-agent`
 * block, else "Go ahead as the task says."; the person answers each task once.
 */
import type { Octokit } from "@octokit/rest";
import { parse as parseYaml } from "yaml";
import type { Journal, TaskState } from "../core/journal.js";
import { DEMO_OWNER, DEMO_REPO } from "./project.js";

/** What the person answers a task whose plan scripts no answer. */
export const DEFAULT_ANSWER = "Go ahead as the task says.";

/** The `person_answer:` of the first `forge-scripted-agent` block in a text. */
export function scriptedAnswer(text: string | undefined): string | undefined {
  const m = /^(`{3,})forge-scripted-agent[^\n]*\n([\s\S]*?)^\1[ \t]*$/m.exec(text ?? "");
  if (!m) return undefined;
  const answer = (parseYaml(m[2]!) as { person_answer?: unknown } | null)?.person_answer;
  return typeof answer === "string" && answer.trim() ? answer.trim() : undefined;
}

/** One `/forge retry` the person commented. */
export interface DemoRetryComment {
  task: string;
  pr: number;
  /** The attempt that asked. */
  attempt: number;
  question: string;
  /** Forge's comment with the question on the PR, which the person answered. */
  questionCommentId: number;
  /** The person's comment: `/forge retry <task> <answer>`. */
  body: string;
  commentId: number;
  answer: string;
}

export class DemoAnswerer {
  readonly comments: DemoRetryComment[] = [];

  constructor(
    private readonly user: Octokit,
    private readonly taskText: (id: string) => string | undefined,
    private readonly tell: (line: string) => void,
  ) {}

  /** The person will answer this task's question (it asks for the first time). */
  willAnswer(t: TaskState): boolean {
    return t.attempt?.hold === "human" && !this.comments.some((c) => c.task === t.id);
  }

  /** The task waits for the person's answer, or for the App to take the answer already given to this attempt. */
  answering(t: TaskState): boolean {
    return this.willAnswer(t) || this.comments.some((c) => c.task === t.id && c.attempt === t.attempts);
  }

  /** Called as the run goes: answers each task waiting for a person once Forge's question is on its PR. */
  async onJournal(j: Journal): Promise<void> {
    for (const t of j.tasks) {
      const pr = t.attempt?.prNumber;
      if (t.status !== "FAILED" || !this.willAnswer(t) || pr === undefined) continue;
      const r = { owner: DEMO_OWNER, repo: DEMO_REPO, issue_number: pr };
      const { data: comments } = await this.user.rest.issues.listComments({ ...r, per_page: 100 });
      // Forge's comment (docs/executor.md): the question, and how to answer it.
      const asked = comments.findLast((c) => (c.body ?? "").includes(`Answer with \`/forge retry ${t.id} <your answer>\``));
      if (!asked || this.comments.some((c) => c.task === t.id)) continue;
      const answer = scriptedAnswer(this.taskText(t.id)) ?? DEFAULT_ANSWER;
      const body = `/forge retry ${t.id} ${answer}`;
      const { data } = await this.user.rest.issues.createComment({ ...r, body });
      this.comments.push({
        task: t.id,
        pr,
        attempt: t.attempts,
        question: t.attempt?.question ?? "",
        questionCommentId: asked.id,
        body,
        commentId: data.id,
        answer,
      });
      this.tell(`answered ${t.id}'s question on #${pr}: \`${body}\``);
    }
  }
}
