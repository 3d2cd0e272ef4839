/**
 * The person's part in `forge demo --issues`: the default branch protected by a ruleset that wants
 * an approval, the project's `test` check and a merge queue; the plan filed as an issue tree (a
 * parent issue, a sub-issue per task, a "blocked by" per dependency); pull requests approved and
 * merged the only way the ruleset leaves — through the queue.
 */
import type { Octokit } from "@octokit/rest";
import { readFrontMatter } from "../core/front-matter.js";
import type { Sim } from "../local-github/server.js";
import type { PlanStages } from "./plan-stages.js";
import { DEMO_OWNER, DEMO_REPO, FULL } from "./project.js";

const R = { owner: DEMO_OWNER, repo: DEMO_REPO };

/** The project's test workflow, also on the merge queue's groups (`merge_group`), whose `test` check the ruleset requires. */
export const QUEUED_TEST_WORKFLOW = `name: Tests
on:
  push:
    branches: [main]
  pull_request:
    branches: [main]
  merge_group:
    types: [checks_requested]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-node@v4
        with:
          node-version: 20
      - run: npm test
`;

/** The default branch's ruleset: an approval, the `test` check, and only the merge queue merges. */
export const MAIN_RULESET = {
  name: "main through the merge queue",
  target: "branch",
  enforcement: "active",
  conditions: { ref_name: { include: ["~DEFAULT_BRANCH"], exclude: [] } },
  rules: [
    {
      type: "pull_request",
      parameters: {
        required_approving_review_count: 1,
        dismiss_stale_reviews_on_push: false,
        require_code_owner_review: false,
        require_last_push_approval: false,
        required_review_thread_resolution: false,
      },
    },
    {
      type: "merge_queue",
      parameters: {
        check_response_timeout_minutes: 60,
        grouping_strategy: "ALLGREEN",
        max_entries_to_build: 1,
        max_entries_to_merge: 1,
        merge_method: "MERGE",
        min_entries_to_merge: 1,
        min_entries_to_merge_wait_minutes: 0,
      },
    },
    {
      type: "required_status_checks",
      parameters: { required_status_checks: [{ context: "test" }], strict_required_status_checks_policy: false },
    },
  ],
};

/** The repository's owner allows auto-merge and protects the default branch with MAIN_RULESET. */
export async function protectMain(sim: Sim): Promise<void> {
  const settings = await sim.control.api(DEMO_OWNER, "PATCH", `/repos/${FULL}`, { allow_auto_merge: true });
  if (settings.status !== 200) throw new Error(`allow_auto_merge was refused: ${JSON.stringify(settings.body)}`);
  const ruleset = await sim.control.api(DEMO_OWNER, "POST", `/repos/${FULL}/rulesets`, MAIN_RULESET);
  if (ruleset.status !== 201) throw new Error(`the default branch's ruleset was refused: ${JSON.stringify(ruleset.body)}`);
}

export interface FiledIssue {
  number: number;
  id: number;
  title: string;
  /** The plan's task it was filed from. */
  task: string;
}

/** A sub-issue's body: the task file's Markdown, its acceptance criteria as a task list (which the tree's plan reads back). */
export function issueBody(text: string): { title: string; body: string; agentType?: string } {
  const fm = readFrontMatter("task.md", text);
  const data = (fm.data ?? {}) as { title?: unknown; acceptance_criteria?: unknown };
  const criteria = Array.isArray(data.acceptance_criteria) ? data.acceptance_criteria.map(String) : [];
  const list = criteria.length ? `\n\n## Done when\n\n${criteria.map((c) => `- [ ] ${c}`).join("\n")}\n` : "\n";
  return { title: String(data.title ?? "").trim(), body: `${fm.body.trim()}${list}` };
}

/** The plan filed as an issue tree: the parent (plan.md), a sub-issue per node with its type's label, "blocked by" per dependency. */
export async function fileIssueTree(
  user: Octokit,
  stages: PlanStages,
  planText: string,
): Promise<{ parent: FiledIssue; subs: FiledIssue[] }> {
  const title = /^#\s+(.+)$/m.exec(planText)?.[1]?.trim() ?? stages.planId;
  const { data: p } = await user.rest.issues.create({ ...R, title, body: planText });
  const parent = { number: p.number, id: p.id, title: p.title, task: "" };
  const subs: FiledIssue[] = [];
  for (const node of stages.dag.nodes) {
    const { title: t, body } = issueBody(stages.taskText(node.id) ?? "");
    const labels = node.type === "refinery" ? ["forge:refinery"] : [`forge:type-${node.agentType}`];
    const { data } = await user.rest.issues.create({ ...R, title: t || node.id, body, labels });
    await user.request("POST /repos/{owner}/{repo}/issues/{issue_number}/sub_issues", {
      ...R,
      issue_number: parent.number,
      sub_issue_id: data.id,
    });
    subs.push({ number: data.number, id: data.id, title: data.title, task: node.id });
  }
  for (const node of stages.dag.nodes) {
    const issue = subs.find((s) => s.task === node.id)!;
    for (const dep of node.dependencies) {
      const blocker = subs.find((s) => s.task === dep)!;
      await user.request("POST /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by", {
        ...R,
        issue_number: issue.number,
        issue_id: blocker.id,
      });
    }
  }
  return { parent, subs };
}

/** Polls `read` every 200 ms until it gives a value, `stop` says why not, or the deadline passes. */
export async function until<T>(
  what: string,
  deadline: number,
  read: () => Promise<T | undefined>,
  stop?: () => string | undefined,
): Promise<T> {
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    const why = stop?.();
    if (why) throw new Error(`${what}: ${why}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * The person approves a pull request into the default branch and sets it to merge automatically
 * (GraphQL `enablePullRequestAutoMerge`), which enqueues it once its checks pass; a pull request
 * with nothing left to wait for ("clean status") is enqueued at once (`enqueuePullRequest`).
 */
export async function approveAndQueue(user: Octokit, number: number): Promise<"auto-merge" | "enqueued"> {
  const { data: pr } = await user.rest.pulls.get({ ...R, pull_number: number });
  await user.rest.pulls.createReview({ ...R, pull_number: number, event: "APPROVE", commit_id: pr.head.sha });
  try {
    await user.graphql(
      "mutation($id: ID!) { enablePullRequestAutoMerge(input: { pullRequestId: $id, mergeMethod: MERGE }) { clientMutationId } }",
      { id: pr.node_id },
    );
    return "auto-merge";
  } catch (e) {
    if (!/\b(clean|unstable) status\b/i.test((e as Error).message)) throw e;
    await user.graphql("mutation($id: ID!) { enqueuePullRequest(input: { pullRequestId: $id }) { clientMutationId } }", { id: pr.node_id });
    return "enqueued";
  }
}

/** Whether the merge queue merged pull request `number`: its `pull_request.dequeued` delivery with reason MERGE. */
export function mergedByQueue(sim: Sim, number: number): boolean {
  return sim.control.deliveries({ event: "pull_request", action: "dequeued" }).some((d) => {
    const p = d.payload as { number?: number; reason?: string };
    return p.number === number && p.reason === "MERGE";
  });
}
