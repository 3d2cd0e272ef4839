/**
 * `forge demo --issues`: the plan given as an issue tree on the local GitHub. The person files a
 * parent issue with a sub-issue per task and a "blocked by" per dependency (issue-tree.ts), comments
 * `/forge plan` on the parent, approves the plan PR Forge builds from the tree and merges it through
 * the default branch's merge queue; the run goes to its end with the scripted agents; the person
 * approves the final PR, which Forge has set to auto-merge (`final_pr.auto_merge: true`) and which
 * merges through the queue. The outcome is read back from the local GitHub: it is ok exactly when
 * every sub-issue is closed, the parent carries the run's summary and the final PR merged through the queue.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { Octokit } from "@octokit/rest";
import { planCaptainBranch } from "../core/layout.js";
import type { Sim } from "../local-github/server.js";
import { approveAndQueue, fileIssueTree, mergedByQueue, protectMain, until, type FiledIssue } from "./issue-tree.js";
import { DemoPlanError, loadPlanStages } from "./plan-stages.js";
import { DEMO_OWNER, DEMO_REPO, PERSON } from "./project.js";
import { DemoRun, ROOT } from "./run.js";
import { createRepository, startGitHubAndApp, startRunners } from "./services.js";
import type { DemoOptions } from "./types.js";
import { agentJobsDone } from "./watch.js";

export const ISSUE_TREE_PLAN = path.join(ROOT, "examples", "plans", "issue-tree");
const R = { owner: DEMO_OWNER, repo: DEMO_REPO };

export interface IssueDemoResult {
  ok: boolean;
  problems: string[];
  planId?: string;
  runId?: string;
  status: string;
  durationMs: number;
  /** The parent issue: its state, and whether Forge's summary comment on it says the run completed with every task merged. */
  parent?: { number: number; state: string; summary: boolean };
  /** Each sub-issue as GitHub has it at the end (`GET …/sub_issues`), with the task filed from it and the run's task for it. */
  subIssues: { number: number; title: string; state: string; task: string; runTask?: string; taskStatus?: string; pr?: number }[];
  planPr?: { number: number; merged: boolean; throughQueue: boolean };
  finalPr?: { number: number; merged: boolean; throughQueue: boolean; autoMerge: boolean; mergeCommitIsMain: boolean };
  /** Responses or webhooks of the local GitHub that broke GitHub's schema (should be 0). */
  schemaViolations: number;
}

/** One `forge demo --issues`; `inspect` (tests) reads the local GitHub before it closes. */
export async function runIssueDemo(
  options: DemoOptions & { inspect?: (sim: Sim, result: IssueDemoResult) => Promise<void> } = {},
): Promise<IssueDemoResult> {
  const stages = await loadPlanStages(path.resolve(options.planDir ?? ISSUE_TREE_PLAN));
  if (stages.overlays.length) throw new DemoPlanError(`--issues: the plan ${stages.planId} has overlays; an issue tree holds tasks only`);
  const run = new DemoRun({ ...options, issues: true }, stages);
  const { view } = run;
  const result: IssueDemoResult = {
    ok: false,
    problems: run.problems,
    status: "not started",
    durationMs: 0,
    subIssues: [],
    schemaViolations: 0,
  };
  try {
    view.line(
      `Forge demo — plan ${view.color("1", stages.planId)} as an issue tree (${stages.dag.nodes.length} sub-issues), agent: the scripted agent`,
    );
    const { sim, appId } = await startGitHubAndApp(run);
    await createRepository(run, sim, appId);
    await protectMain(sim);
    view.aside("main is protected: an approval, the test check, and only the merge queue merges");
    const user = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken(PERSON) });
    await startRunners(run, sim, user);
    const deadline = Date.now() + (options.timeoutMs ?? 600_000);
    const filed: FiledIssue[] = [];
    try {
      await personsPart(run, sim, user, deadline, result, filed);
    } catch (e) {
      run.problems.push((e as Error).message);
    }
    run.watching = false;
    await agentJobsDone(run).catch(() => undefined);
    await run.services.app!.forge.idle();
    view.endBar();
    await readBack(run, sim, user, result, filed);
    result.durationMs = view.elapsed();
    await options.inspect?.(sim, result);
    return result;
  } finally {
    await run.close();
  }
}

/** The person's part, from the issue tree to the final PR merged and the issues closed. */
async function personsPart(
  run: DemoRun,
  sim: Sim,
  user: Octokit,
  deadline: number,
  result: IssueDemoResult,
  filed: FiledIssue[],
): Promise<void> {
  const { view, stages } = run;
  const tree = await fileIssueTree(user, stages, readFileSync(path.join(stages.dir, "plan.md"), "utf8"));
  filed.push(...tree.subs);
  result.parent = { number: tree.parent.number, state: "open", summary: false };
  view.aside(
    `${PERSON} filed #${tree.parent.number} with sub-issues ${tree.subs.map((s) => `#${s.number}`).join(", ")} and their "blocked by"`,
  );
  await user.rest.issues.createComment({ ...R, issue_number: tree.parent.number, body: "/forge plan" });
  view.aside(`${PERSON} commented /forge plan on #${tree.parent.number}`);
  const planPr = await until("the plan PR", deadline, async () => {
    const { data } = await user.rest.pulls.list({ ...R, head: `${DEMO_OWNER}:${planCaptainBranch(tree.parent.number)}` });
    return data[0]?.number;
  });
  const how = await approveAndQueue(user, planPr);
  view.aside(
    `${PERSON} approved the plan PR #${planPr} and ${how === "auto-merge" ? "set it to auto-merge" : "added it to the merge queue"}`,
  );
  await until(`the plan PR #${planPr} merged`, deadline, async () =>
    (await user.rest.pulls.get({ ...R, pull_number: planPr })).data.merged ? true : undefined,
  );
  result.planPr = { number: planPr, merged: true, throughQueue: mergedByQueue(sim, planPr) };
  view.aside(`the merge queue merged the plan PR #${planPr}: the run starts`);
  const ended = () => (run.journal && run.journal.status !== "running" ? run.journal.status : undefined);
  const status = await until("the run's end", deadline, async () => ended());
  if (status !== "completed") throw new Error(`the run ended ${status}`);
  const integration = run.journal!.integrationBranch;
  const finalPr = await until("the final PR", deadline, async () => {
    const { data } = await user.rest.pulls.list({ ...R, head: `${DEMO_OWNER}:${integration}` });
    return data[0]?.number;
  });
  await run.services.app!.forge.idle();
  await user.rest.pulls.createReview({ ...R, pull_number: finalPr, event: "APPROVE" });
  view.aside(`${PERSON} approved the final PR #${finalPr}: Forge sets it to auto-merge (final_pr.auto_merge)`);
  await until(`the final PR #${finalPr} merged`, deadline, async () =>
    (await user.rest.pulls.get({ ...R, pull_number: finalPr })).data.merged ? true : undefined,
  );
  view.aside(`the merge queue merged the final PR #${finalPr} into main`);
  await until("the sub-issues closed", deadline, async () => ((await issuesClosed(user, tree.parent, tree.subs)) ? true : undefined));
  view.aside(`Forge closed ${tree.subs.map((s) => `#${s.number}`).join(", ")} and #${tree.parent.number}`);
}

async function issuesClosed(user: Octokit, parent: FiledIssue, subs: FiledIssue[]): Promise<boolean> {
  for (const s of [...subs, parent])
    if ((await user.rest.issues.get({ ...R, issue_number: s.number })).data.state !== "closed") return false;
  return true;
}

/** The outcome from the local GitHub's API and the App's stored run, and what falls short of it. */
async function readBack(run: DemoRun, sim: Sim, user: Octokit, result: IssueDemoResult, filed: FiledIssue[]): Promise<void> {
  const { problems } = run;
  const j = run.runId
    ? ((await run.services.app!.forge.runtimes.get(`${DEMO_OWNER}/${DEMO_REPO}`)?.engine.state(run.runId))?.state.journal ?? run.journal)
    : run.journal;
  result.schemaViolations = sim.violations.length;
  if (j) Object.assign(result, { planId: j.planId, runId: j.runId, status: j.status });
  const parent = result.parent;
  if (!parent) return void problems.push("no issue tree was filed");
  parent.state = (await user.rest.issues.get({ ...R, issue_number: parent.number })).data.state;
  const { data: subs } = await user.request("GET /repos/{owner}/{repo}/issues/{issue_number}/sub_issues", {
    ...R,
    issue_number: parent.number,
  });
  const comments = (await user.rest.issues.listComments({ ...R, issue_number: parent.number, per_page: 100 })).data;
  const total = j?.tasks.length ?? 0;
  parent.summary = comments.some(
    (c) =>
      c.user?.login === "forge[bot]" &&
      (c.body ?? "").includes("forge:issue") &&
      (c.body ?? "").includes(`**completed**, ${total}/${total} merged`),
  );
  for (const s of subs) {
    const t = j?.tasks.find((x) => x.id.startsWith(`issue-${s.number}-`));
    result.subIssues.push({
      number: s.number,
      title: s.title,
      state: s.state,
      task: filed.find((f) => f.number === s.number)?.task ?? "",
      ...(t ? { runTask: t.id, taskStatus: t.status, ...(t.attempt?.prNumber !== undefined ? { pr: t.attempt.prNumber } : {}) } : {}),
    });
  }
  const finalNumber = j
    ? (await user.rest.pulls.list({ ...R, head: `${DEMO_OWNER}:${j.integrationBranch}`, state: "all" })).data[0]?.number
    : undefined;
  if (finalNumber !== undefined) {
    const { data: pr } = await user.rest.pulls.get({ ...R, pull_number: finalNumber });
    const { data: main } = await user.rest.repos.getBranch({ ...R, branch: "main" });
    const autoMerge = sim.control
      .deliveries({ event: "pull_request", action: "auto_merge_enabled" })
      .some((d) => (d.payload as { number?: number }).number === finalNumber);
    result.finalPr = {
      number: finalNumber,
      merged: pr.merged,
      throughQueue: mergedByQueue(sim, finalNumber),
      autoMerge,
      mergeCommitIsMain: pr.merge_commit_sha === main.commit.sha,
    };
  }
  problems.push(...issueDemoProblems(result, run.stages.dag.nodes.length));
  result.ok = problems.length === 0;
}

/** What the demo demands: every sub-issue's task merged and the issue closed, the summary on the parent, the final PR merged by the queue. */
export function issueDemoProblems(r: IssueDemoResult, nodes: number): string[] {
  const out: string[] = [];
  if (r.status !== "completed") out.push(`the run is ${r.status}, not completed`);
  if (r.subIssues.length !== nodes) out.push(`the parent has ${r.subIssues.length} sub-issues, not ${nodes}`);
  for (const s of r.subIssues) {
    if (s.taskStatus !== "MERGED") out.push(`#${s.number}'s task is ${s.taskStatus ?? "missing"}, not MERGED`);
    if (s.state !== "closed") out.push(`#${s.number} is ${s.state}, not closed`);
  }
  if (r.parent && !r.parent.summary) out.push(`#${r.parent.number} carries no summary of the completed run`);
  if (r.parent && r.parent.state !== "closed") out.push(`#${r.parent.number} is ${r.parent.state}, not closed`);
  if (!r.planPr?.throughQueue) out.push("the plan PR did not merge through the merge queue");
  if (!r.finalPr) out.push("no final PR");
  else {
    if (!r.finalPr.merged) out.push(`the final PR #${r.finalPr.number} is not merged`);
    else if (!r.finalPr.throughQueue) out.push(`the final PR #${r.finalPr.number} did not merge through the merge queue`);
    if (!r.finalPr.autoMerge) out.push(`Forge did not set the final PR #${r.finalPr.number} to auto-merge`);
  }
  if (r.schemaViolations) out.push(`${r.schemaViolations} response(s) or webhook(s) of the local GitHub broke GitHub's schema`);
  return out;
}

/** The end of `forge demo --issues` in words. */
export function issueSummary(r: IssueDemoResult): string {
  const lines = [
    `Forge demo (issue tree) — ${r.ok ? "ok" : "FAILED"}: run ${r.runId ?? "?"} ${r.status} in ${(r.durationMs / 1000).toFixed(1)} s`,
  ];
  if (r.parent) lines.push(`  parent #${r.parent.number}: ${r.parent.state}${r.parent.summary ? ", carries the run's summary" : ""}`);
  for (const s of r.subIssues)
    lines.push(
      `  sub-issue #${s.number} ${s.title}: ${s.state}, task ${s.runTask ?? "?"} ${s.taskStatus ?? "?"}${s.pr ? ` (PR #${s.pr})` : ""}`,
    );
  if (r.planPr)
    lines.push(
      `  plan PR #${r.planPr.number}: ${r.planPr.merged ? "merged" : "open"}${r.planPr.throughQueue ? " through the merge queue" : ""}`,
    );
  if (r.finalPr)
    lines.push(
      `  final PR #${r.finalPr.number}: ${r.finalPr.autoMerge ? "set to auto-merge by Forge, " : ""}${r.finalPr.merged ? "merged" : "not merged"}${r.finalPr.throughQueue ? " through the merge queue" : ""}`,
    );
  for (const p of r.problems) lines.push(`  problem: ${p}`);
  return `${lines.join("\n")}\n`;
}
