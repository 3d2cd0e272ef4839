/**
 * `/forge plan` on an issue that has sub-issues: the plan is built from the tree, without an agent
 * (src/core/plan/from-issues.ts), validated by the rules of `forge validate`, committed as one commit
 * on `forge/_plan-<issue>` and opened as a pull request for a person to merge — merging it starts a
 * run like any plan's. What keeps the tree from being a plan is said on the issue, as one comment.
 * docs/formats.md#plans-from-an-issue-tree.
 */
import { planCaptainBranch, planDir } from "../core/layout.js";
import { MAX_DEPTH, MAX_TREE_TASKS, planFromIssueTree, type IssueRef, type IssueTreeNode } from "../core/plan/from-issues.js";
import { parsePlan } from "../core/plan/parse.js";
import { validatePlan } from "../core/plan/validate.js";
import { formatProblem } from "../core/problems.js";
import { inlineData } from "../core/render/as-data.js";
import type { GitHubPort, LinkedIssue } from "../github/port.js";

/** At most this many problems are listed in the comment, each cut to `PROBLEM_LIMIT` characters. */
export const PROBLEMS_SHOWN = 20;
export const PROBLEM_LIMIT = 300;
/** Issues read from one tree at most (each costs two reads): past it the tree is refused, not cut. */
export const TREE_READ_LIMIT = MAX_TREE_TASKS + 100;

export type IssuePlanOutcome =
  /** The issue has no sub-issues (or the port cannot read them): the Captain writes the plan. */
  | { kind: "no-tree" }
  | { kind: "opened"; planId: string; prNumber: number; tasks: number }
  | { kind: "open-already"; prNumber: number }
  | { kind: "problems"; problems: string[] };

class TooBigError extends Error {}

/** The tree under `parent`, depth first; a blocker's state and repository come from the dependency list. */
async function readTree(port: GitHubPort, parent: number): Promise<{ children: IssueTreeNode[] } | undefined> {
  const first = await port.subIssues!(parent);
  if (first.length === 0) return undefined;
  let read = 0;
  const node = async (i: LinkedIssue, level: number): Promise<IssueTreeNode> => {
    if (++read > TREE_READ_LIMIT) throw new TooBigError();
    // Another repository's issue is a problem of the plan: nothing under it is read. GitHub nests
    // eight levels at most; one more is read only to be refused.
    const here = i.sameRepo && level <= MAX_DEPTH + 1;
    const subs = here && i.state === "open" ? await port.subIssues!(i.number) : [];
    const blockers: IssueRef[] =
      here && i.state === "open"
        ? (await port.blockedBy!(i.number)).map((b) => ({ number: b.number, state: b.state, sameRepo: b.sameRepo }))
        : [];
    const children: IssueTreeNode[] = [];
    for (const s of subs) children.push(await node(s, level + 1));
    return {
      number: i.number,
      state: i.state,
      sameRepo: i.sameRepo,
      title: i.title,
      body: i.body,
      labels: i.labels,
      children,
      blockedBy: blockers,
    };
  };
  const children: IssueTreeNode[] = [];
  for (const s of first) children.push(await node(s, 2));
  return { children };
}

/** A plan id no folder of the default branch has: `issue-<n>`, else `issue-<n>-2`, `-3`, … */
async function freshPlanId(port: GitHubPort, issue: number, ref: string): Promise<string> {
  const taken = new Set((await port.listDirectory(".forge/plans", ref)).map((e) => e.name));
  if (!taken.has(`issue-${issue}`)) return `issue-${issue}`;
  let k = 2;
  while (taken.has(`issue-${issue}-${k}`)) k++;
  return `issue-${issue}-${k}`;
}

/**
 * Build and open the plan of `issue`'s tree, or say why not. Idempotent: a plan PR already open from
 * the issue is named, not opened again (close it and comment again to build the plan anew).
 */
export async function planFromIssue(
  port: GitHubPort,
  parent: { number: number; title: string; body: string; subIssues?: number | undefined },
  now: number,
): Promise<IssuePlanOutcome> {
  if (!port.subIssues || !port.blockedBy || !port.commitFiles) return { kind: "no-tree" };
  // The webhook's issue counts its sub-issues (`sub_issues_summary`): none, and nothing is asked.
  if (parent.subIssues === 0) return { kind: "no-tree" };
  let tree: { children: IssueTreeNode[] } | undefined;
  try {
    tree = await readTree(port, parent.number);
  } catch (e) {
    if (e instanceof TooBigError)
      return { kind: "problems", problems: [`the tree of #${parent.number} has more than ${TREE_READ_LIMIT} issues`] };
    throw e;
  }
  if (!tree) return { kind: "no-tree" };
  const branch = planCaptainBranch(parent.number);
  const open = await port.findPullRequest(branch, "open");
  if (open) return { kind: "open-already", prNumber: open.number };
  const base = await port.defaultBranch();
  const head = (await port.branchHead(base))!;
  const planId = await freshPlanId(port, parent.number, head);
  const built = planFromIssueTree({
    parent: { number: parent.number, title: parent.title, body: parent.body },
    children: tree.children,
    planId,
    createdAt: new Date(now).toISOString(),
  });
  if (!built.ok) return { kind: "problems", problems: built.problems };
  // The same rules as `forge validate`: a tree that makes an invalid plan (a refinery with nothing to merge) is a problem too.
  const problems = validatePlan(parsePlan({ planId, files: built.plan.files, dirs: new Set(["tasks"]), unreadable: [] }));
  if (problems.length)
    return { kind: "problems", problems: problems.map((p) => formatProblem({ ...p, file: `${planDir(planId)}/${p.file}` })) };
  const files = new Map([...built.plan.files].map(([rel, text]) => [`${planDir(planId)}/${rel}`, text]));
  // A branch left from an earlier plan (its PR closed or merged) is cut again from the default branch.
  const title = `forge: plan ${planId} from #${parent.number}`;
  let made = await port.commitFiles(branch, head, files, `${title}\n\nBuilt from the sub-issues of #${parent.number}.`);
  if (!made.created) {
    await port.deleteBranch(branch);
    made = await port.commitFiles(branch, head, files, `${title}\n\nBuilt from the sub-issues of #${parent.number}.`);
  }
  const pr = await port.createPullRequest({ head: branch, base, title, body: planPrBody(parent.number, planId, built.plan.taskOf) });
  return { kind: "opened", planId, prNumber: pr.number, tasks: built.plan.taskOf.size };
}

function planPrBody(parent: number, planId: string, taskOf: ReadonlyMap<number, string>): string {
  return [
    `Plan \`${planId}\`, built from the sub-issues of #${parent} by \`/forge plan\`: a task per open sub-issue, edges from "blocked by". \`forge validate\` passes.`,
    "",
    `Review it like code: merging this PR starts a run of \`${planId}\` (with \`autostart: true\`, the default), or comment \`/forge run ${planId}\` once it is merged. While it runs, each sub-issue shows its task's state, and #${parent} the run's summary.`,
    "",
    "| Issue | Task |",
    "|---|---|",
    ...[...taskOf].map(([n, id]) => `| #${n} | \`${id}\` |`),
  ].join("\n");
}

/** The reply to `/forge plan` on a tree: bounded, each problem shown as data. */
export function issuePlanReply(outcome: Exclude<IssuePlanOutcome, { kind: "no-tree" }>, issue: number): string {
  if (outcome.kind === "opened")
    return `Built plan \`${outcome.planId}\` from the sub-issues of this issue (${outcome.tasks} tasks): #${outcome.prNumber}. Merging it starts the run.`;
  if (outcome.kind === "open-already")
    return `The plan from this issue's sub-issues is already open: #${outcome.prNumber}. Close it and comment \`/forge plan\` again to build it anew.`;
  const shown = outcome.problems.slice(0, PROBLEMS_SHOWN).map((p) => `- ${inlineData(p, PROBLEM_LIMIT)}`);
  const more = outcome.problems.length - shown.length;
  return [
    `No plan was built from the sub-issues of #${issue}:`,
    "",
    ...shown,
    ...(more > 0 ? [`- … and ${more} more`] : []),
    "",
    "Fix the tree and comment `/forge plan` again.",
  ].join("\n");
}
