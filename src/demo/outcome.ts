// The end of `forge demo`: what the run left on the local GitHub and in the App's journal (tasks,
// PRs, follow-ups, Change Requests, the final PR, the tracker), the project's tests on the
// integration branch, and the HTML report and JSON result written to the output folder.
import { execFile } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import type { Octokit } from "@octokit/rest";
import type { Journal } from "../core/journal.js";
import { LABELS, resultPath } from "../core/layout.js";
import { agentResultSchema } from "../core/schemas/agent-result.js";
import type { Sim } from "../local-github/server.js";
import type { PlanStages } from "./plan-stages.js";
import { DEMO_OWNER, DEMO_REPO, FULL } from "./project.js";
import { renderReport, type LinkMap, type ReportTask } from "../core/render/run-report.js";
import { DEMO_AGENT_LABEL, type DemoAgent, type DemoResult, type DemoTask } from "./types.js";

const run = promisify(execFile);

/** What the demo saw of the App's decisions while the run went. */
export interface RunRecord {
  firstRunning: Map<string, number>;
  mergedAt: Map<string, number>;
  failures: Map<string, DemoTask["failures"]>;
}

/** The App's stored facts the outcome reads (its issue numbers). */
export interface RunFacts {
  trackerIssue?: number;
}

export type Outcome = Pick<DemoResult, "tasks" | "followups" | "changeRequests" | "finalPr" | "trackerIssue"> & {
  finalBody: string;
  trackerBody?: string;
};

async function prOf(user: Octokit, branch: string | undefined): Promise<number | undefined> {
  if (!branch) return undefined;
  const { data } = await user.rest.pulls.list({ owner: DEMO_OWNER, repo: DEMO_REPO, head: `${DEMO_OWNER}:${branch}`, state: "all" });
  return data[0]?.number;
}

/**
 * The task sentinel's verdict on a task's last attempt (result.json's `sentinel`, docs/formats.md#result-json),
 * read from the attempt's record on its branch, else on the integration branch it was merged into.
 */
async function sentinelOf(
  user: Octokit,
  j: Journal,
  taskId: string,
  attempt: number,
  branch: string | undefined,
): Promise<DemoTask["sentinel"]> {
  for (const ref of [branch, j.integrationBranch].filter((x): x is string => !!x)) {
    try {
      const { data } = await user.rest.repos.getContent({
        owner: DEMO_OWNER,
        repo: DEMO_REPO,
        path: resultPath(j.runId, taskId, attempt),
        ref,
      });
      if (Array.isArray(data) || data.type !== "file" || !("content" in data)) continue;
      const parsed = agentResultSchema.safeParse(JSON.parse(Buffer.from(data.content, "base64").toString("utf8")));
      const v = parsed.success ? parsed.data.sentinel : undefined;
      return v ? { grade: v.grade, cycles: v.cycles, fixes: v.fixes } : undefined;
    } catch {
      // Not on this ref: try the next.
    }
  }
  return undefined;
}

/** Each node of the run with its PR, its time from first RUNNING to MERGED, its failures and the overlay that added it. */
async function tasksOf(user: Octokit, j: Journal | undefined, stages: PlanStages, record: RunRecord): Promise<DemoTask[]> {
  const addedBy = new Map(stages.overlays.flatMap((o) => o.addedTasks.map((t) => [t, o.id] as const)));
  const tasks: DemoTask[] = [];
  for (const [i, t] of (j?.tasks ?? []).entries()) {
    const node = j!.plan.nodes[i]!;
    const a = t.attempt;
    const pr = a?.prNumber ?? (await prOf(user, a?.branch));
    const start = record.firstRunning.get(t.id);
    const end = record.mergedAt.get(t.id);
    const sentinel = a && node.kind === "task" ? await sentinelOf(user, j!, t.id, t.attempts, a.branch) : undefined;
    tasks.push({
      id: t.id,
      kind: node.kind,
      title: node.title,
      status: t.status,
      attempts: t.attempts,
      retries: t.retries,
      ...(pr !== undefined ? { pr } : {}),
      ...(start !== undefined && end !== undefined ? { timeMs: end - start } : {}),
      ...(addedBy.has(t.id) ? { addedBy: addedBy.get(t.id)! } : {}),
      failures: record.failures.get(t.id) ?? [],
      ...(a?.revision.iteration ? { iteration: a.revision.iteration } : {}),
      ...(a?.reviewIterations ? { reviewIterations: a.reviewIterations } : {}),
      ...(a?.ciFixes ? { ciFixes: a.ciFixes } : {}),
      ...(sentinel ? { sentinel } : {}),
      ...(t.agents?.length ? { agents: t.agents.map((a) => ({ ...a })) } : {}),
    });
  }
  return tasks;
}

/** Collects the outcome from GitHub and the App's stored run. */
export async function readOutcome(
  user: Octokit,
  j: Journal | undefined,
  facts: RunFacts | undefined,
  stages: PlanStages,
  record: RunRecord,
  finalPrNumber: number | undefined,
): Promise<Outcome> {
  const tasks = await tasksOf(user, j, stages, record);
  const followups: DemoResult["followups"] = [];
  for (const f of j?.followups ?? []) {
    const pr = f.prNumber ?? (await prOf(user, f.branch));
    followups.push({ id: f.id, sourceTaskId: f.sourceTaskId, text: f.text, status: f.status, ...(pr !== undefined ? { pr } : {}) });
  }
  const changeRequests: DemoResult["changeRequests"] = [];
  for (const c of j?.changeRequests ?? []) {
    const issue = c.issueNumber;
    // The issue's title as GitHub shows it: the emitter's own (docs/formats.md#change-request).
    const issueTitle =
      issue !== undefined
        ? (await user.rest.issues.get({ owner: DEMO_OWNER, repo: DEMO_REPO, issue_number: issue })).data.title
        : undefined;
    changeRequests.push({
      id: c.id,
      emittedBy: c.emittedBy,
      title: c.title,
      status: c.status,
      ...(c.overlayId ? { overlayId: c.overlayId } : {}),
      ...(issue !== undefined ? { issue } : {}),
      ...(issueTitle !== undefined ? { issueTitle } : {}),
    });
  }
  let finalPr: DemoResult["finalPr"];
  let finalBody = "";
  if (finalPrNumber !== undefined) {
    const { data } = await user.rest.pulls.get({ owner: DEMO_OWNER, repo: DEMO_REPO, pull_number: finalPrNumber });
    finalPr = { number: data.number, title: data.title, head: data.head.ref, base: data.base.ref };
    finalBody = data.body ?? "";
  }
  let trackerIssue = facts?.trackerIssue;
  if (trackerIssue === undefined) {
    const { data } = await user.rest.issues.listForRepo({ owner: DEMO_OWNER, repo: DEMO_REPO, state: "all", labels: LABELS.tracker });
    trackerIssue = data[0]?.number;
  }
  const trackerBody =
    trackerIssue !== undefined
      ? ((await user.rest.issues.get({ owner: DEMO_OWNER, repo: DEMO_REPO, issue_number: trackerIssue })).data.body ?? "")
      : undefined;
  return {
    tasks,
    followups,
    changeRequests,
    ...(finalPr ? { finalPr } : {}),
    finalBody,
    ...(trackerIssue !== undefined ? { trackerIssue } : {}),
    ...(trackerBody !== undefined ? { trackerBody } : {}),
  };
}

/**
 * Where a link of the run's bodies leads once the demo has ended: a pull request or issue of the
 * demo repository to its copy in the report; anything else on the local GitHub (`webUrl`: the
 * App's check and job links), on github.com under the demo repository's name (an agent's own link,
 * which does not exist there) or relative (to a page of the local GitHub) is local; any other
 * address is kept.
 */
export function demoLinks(webUrl: string, inReport: { pulls: number[]; issues: number[]; finalPr?: number; tracker?: number }): LinkMap {
  const quote = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const repo = new RegExp(`^(?:${quote(webUrl.replace(/\/+$/, ""))}|https?://github\\.com)/${quote(FULL)}(?=[/?#]|$)(.*)$`, "i");
  const local = new RegExp(`^${quote(webUrl.replace(/\/+$/, ""))}(?=[/?#]|$)`, "i");
  return (url) => {
    const m = repo.exec(url);
    // A relative link is relative to a page of the local GitHub, not to this file.
    if (!m) return local.test(url) || !/^([a-z][a-z0-9+.-]*:|#)/i.test(url) ? { local: url } : undefined;
    const n = Number(/^\/(?:pull|issues)\/(\d+)(?:[/?#]|$)/.exec(m[1]!)?.[1] ?? Number.NaN);
    if (n === inReport.finalPr) return { href: "#final-pr" };
    if (n === inReport.tracker) return { href: "#tracker" };
    if (inReport.pulls.includes(n)) return { href: `#pr-${n}` };
    if (inReport.issues.includes(n)) return { href: `#issue-${n}` };
    return { local: url };
  };
}

/**
 * The report, standing alone once the local GitHub is gone: every task, follow-up and overlay PR's
 * body (the rendered walkthroughs), every Change Request's issue, the tracker and the final PR in
 * it, links between them inside the file, the rest marked local; and the JSON result beside it.
 */
export async function writeReport(
  user: Octokit,
  out: {
    outDir: string;
    agent: DemoAgent;
    stages: PlanStages;
    journal: Journal | undefined;
    outcome: Outcome;
    log: string[];
    webUrl: string;
    facts: string[];
  },
  result: DemoResult,
): Promise<void> {
  const { stages, outcome } = out;
  const j = out.journal;
  const r = { owner: DEMO_OWNER, repo: DEMO_REPO };
  const prBodies: { number: number; title: string; body: string }[] = [];
  const prNumbers = [...result.tasks.map((t) => t.pr), ...result.followups.map((f) => f.pr), ...result.overlayPrs.map((p) => p.number)];
  for (const n of [...new Set(prNumbers)].filter((x): x is number => x !== undefined)) {
    const { data } = await user.rest.pulls.get({ ...r, pull_number: n });
    prBodies.push({ number: n, title: data.title, body: data.body ?? "" });
  }
  const issues: { number: number; title: string; body: string }[] = [];
  for (const n of result.changeRequests.map((c) => c.issue).filter((x): x is number => x !== undefined)) {
    const { data } = await user.rest.issues.get({ ...r, issue_number: n });
    issues.push({ number: n, title: data.title, body: data.body ?? "" });
  }
  const links = demoLinks(out.webUrl, {
    pulls: prBodies.map((p) => p.number),
    issues: issues.map((i) => i.number),
    ...(outcome.finalPr ? { finalPr: outcome.finalPr.number } : {}),
    ...(outcome.trackerIssue !== undefined ? { tracker: outcome.trackerIssue } : {}),
  });
  const reportTasks: ReportTask[] = result.tasks.map((t, i) => ({
    id: t.id,
    kind: t.kind,
    title: t.title,
    dependencies: j!.plan.nodes[i]!.dependencies,
    status: j!.tasks[i]!.status,
    attempts: t.attempts,
    ...(t.pr !== undefined ? { pr: t.pr } : {}),
    ...(t.timeMs !== undefined ? { timeMs: t.timeMs } : {}),
    ...(t.addedBy ? { addedBy: `added by ${t.addedBy}` } : {}),
    ...(j!.tasks[i]!.spentUsd !== undefined ? { spentUsd: j!.tasks[i]!.spentUsd } : {}),
  }));
  const html = renderReport({
    title: `Forge demo: ${stages.planId}`,
    runId: result.runId ?? "(none)",
    planId: stages.planId,
    agent: DEMO_AGENT_LABEL[out.agent],
    status: result.ok ? "completed" : `${result.status} — ${result.problems.join("; ")}`,
    durationMs: result.durationMs,
    repo: FULL,
    tasks: reportTasks,
    ...(outcome.trackerIssue !== undefined ? { trackerIssue: outcome.trackerIssue } : {}),
    ...(outcome.trackerBody !== undefined ? { trackerBody: outcome.trackerBody } : {}),
    ...(outcome.finalPr ? { finalPr: { number: outcome.finalPr.number, title: outcome.finalPr.title, body: outcome.finalBody } } : {}),
    changeRequests: result.changeRequests,
    followups: result.followups,
    ...(result.testsOnIntegration ? { testsOnIntegration: result.testsOnIntegration } : {}),
    notes: result.notes,
    facts: out.facts,
    pulls: prBodies,
    issues,
    links,
    log: out.log,
  });
  const base = `forge-demo-${result.runId ?? "no-run"}`;
  result.reportPath = path.join(out.outDir, `${base}.html`);
  result.jsonPath = path.join(out.outDir, `${base}.json`);
  writeFileSync(result.reportPath, html);
  writeFileSync(result.jsonPath, `${JSON.stringify(result, null, 2)}\n`);
}

/**
 * Clones the integration branch and runs the plan's own checks there (its `test_command`s, one
 * after another in a shell): the work of every task, together. Passes when every command exits 0;
 * the counts are those `node --test` prints (`# pass N`), summed.
 */
export async function testIntegration(
  sim: Sim,
  token: string,
  branch: string,
  scratch: string,
  commands: string[],
): Promise<DemoResult["testsOnIntegration"]> {
  const dir = path.join(scratch, "integration");
  const auth = `AUTHORIZATION: basic ${Buffer.from(`x-access-token:${token}`).toString("base64")}`;
  const env = {
    ...process.env,
    GIT_CONFIG_COUNT: "1",
    GIT_CONFIG_KEY_0: "http.extraheader",
    GIT_CONFIG_VALUE_0: auth,
    GIT_TERMINAL_PROMPT: "0",
  };
  try {
    await run("git", ["clone", "--quiet", "--depth", "1", "--branch", branch, `${sim.gitUrl}/${FULL}.git`, dir], { env });
  } catch (e) {
    return { ok: false, commands, pass: 0, fail: 0, summary: `could not clone ${branch}: ${(e as Error).message.split("\n")[0]}` };
  }
  let pass = 0;
  let fail = 0;
  const failed: string[] = [];
  const home = path.join(scratch, "integration-home");
  mkdirSync(home, { recursive: true });
  for (const command of commands) {
    const out = await run("sh", ["-c", command], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "", HOME: home, CI: "1" },
      timeout: 120_000,
      maxBuffer: 16 * 1024 * 1024,
    }).then(
      (r) => ({ code: 0, text: r.stdout }),
      (e: { code?: number | string; stdout?: string; stderr?: string }) => ({
        code: typeof e.code === "number" ? e.code : 1,
        text: `${e.stdout ?? ""}\n${e.stderr ?? ""}`,
      }),
    );
    const count = (k: string) => Number(new RegExp(`^# ${k} (\\d+)`, "m").exec(out.text)?.[1] ?? 0);
    pass += count("pass");
    fail += count("fail");
    if (out.code !== 0) failed.push(`\`${command}\` exited ${out.code}${failingTests(out.text) || lastLine(out.text)}`);
  }
  const counts = `${pass} passed, ${fail} failed`;
  return { ok: failed.length === 0, commands, pass, fail, summary: failed.length ? `${counts}; ${failed.join("; ")}` : counts };
}

/**
 * The tests a `node --test` run reports failing (its TAP `not ok N - name` lines, the innermost
 * first), as `: failing: a; b` — at most three names of 100 characters — or "" when it names none.
 */
export function failingTests(text: string): string {
  const names = [...text.matchAll(/^(\s*)not ok \d+ - (.+)$/gm)]
    .sort((a, b) => b[1]!.length - a[1]!.length)
    .map((m) => m[2]!.trim().slice(0, 100));
  const unique = [...new Set(names)];
  if (!unique.length) return "";
  return `: failing: ${unique.slice(0, 3).join("; ")}${unique.length > 3 ? ` (and ${unique.length - 3} more)` : ""}`;
}

/** The last non-empty line of a command's output, as `: <line>` (at most 160 characters), for its failure. */
function lastLine(text: string): string {
  const line = text
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)
    .at(-1);
  return line ? `: ${line.slice(0, 160)}` : "";
}
