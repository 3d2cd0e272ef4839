/**
 * The rest of Forge's loop as the demo shows it, read back from GitHub, the App's journal and the
 * jobs' logs once the run is over: a person's `/forge retry` on a task's PR (the answer to its
 * agent's question) and the attempt it started; an attempt that stalled, went STALE and was resumed
 * on the same PR from the stage it stopped in, with its agent's session; and whether the agents ran
 * as their own OS user (`isolation: auto`, docs/runner.md#isolation) or the machine did not allow it;
 * and the task sentinel (docs/runner.md#the-task-sentinel) checking every task after its own stages,
 * catching what a multi-stage task's own verify let through and sending it back to be fixed.
 */
import { execFileSync } from "node:child_process";
import type { Octokit } from "@octokit/rest";
import type { Journal } from "../core/journal.js";
import type { Sim } from "../local-github/server.js";
import { parseScriptedTask } from "../fake-agents/scripted-agent.js";
import type { DemoRetryComment } from "./answer.js";
import { stallAt } from "./demo-agent.js";
import type { PlanStages } from "./plan-stages.js";
import { DEMO_OWNER, DEMO_REPO, ISOLATION } from "./project.js";
import type { DemoTask } from "./types.js";

export interface DemoLoop {
  /** The person's `/forge retry <task> <answer>` on the PR where Forge asked the agent's question, and what it started. */
  retryByComment?: DemoRetryComment & {
    /** The attempt the comment started (the next after the one that asked), the task's attempts and status at the end. */
    retriedAttempt?: number;
    attempts: number;
    status: string;
    /** The PR of the task's last attempt, and whether its walkthrough (the PR body) gives the person's answer. */
    finalPr?: number;
    answerInPr: boolean;
  };
  /** An attempt that stalled (the runner stopped its silent agent, exit 21) and the attempt that resumed it. */
  staleResumed?: {
    task: string;
    staleAttempt: number;
    /** Why the App took it STALE, and its PR. */
    error: string;
    stalePr?: number;
    resumedAttempt: number;
    /** The resumed attempt's PR: the stalled one's. */
    pr?: number;
    samePr: boolean;
    /** How the stalled attempt ended, as the retry policy classes it (`stale`). */
    reason?: string;
    /** The stage the resumed attempt started at, and those it did not run again (the stalled attempt had done them). */
    stage?: string;
    skipped: string[];
    /** The agent's session the resumed attempt continued. */
    session?: string;
    /** The walkthrough's `## Resumed` section (the runner's words on the PR). */
    walkthrough: string;
    /** The run tracker's row for the task says the attempt resumed. */
    trackerSaysResumed: boolean;
    status: string;
  };
  /**
   * The task sentinel: how many tasks' last attempts it checked (result.json's `sentinel`), and the
   * task whose sentinel found a problem (FAIL), had it fixed and passed it on a later check.
   */
  sentinel?: {
    checked: number;
    passed: number;
    caught?: { task: string; grade: string; cycles: number; fixes: number; status: string };
  };
  /** Whom the agents ran as: `agent.isolation: auto`, and what each Forge job's log says it did. */
  isolation: {
    configured: string;
    /** `user`: every agent job ran its agent as a fresh OS user of its own; `none`: this machine does not allow it (`why`). */
    mode: "user" | "none" | "mixed";
    jobs: number;
    isolated: number;
    /** The OS users the jobs created (each job its own). */
    users: number;
    why?: string;
  };
}

/** The section of a Markdown text under `heading` (`## Resumed`), up to the next heading of that level. */
export function section(markdown: string, heading: string): string | undefined {
  const at = markdown.indexOf(`${heading}\n`);
  if (at < 0) return undefined;
  const rest = markdown.slice(at);
  // Up to the next section, or the footer the PR body puts under the walkthrough.
  const next = rest.slice(heading.length).search(/\n## |\n---\n/);
  return (next < 0 ? rest : rest.slice(0, heading.length + next)).trim();
}

/** What a `## Resumed` section says: the stage started at, the stages not run again, the session resumed. */
export function resumedFacts(text: string): { stage?: string; skipped: string[]; session?: string } {
  const stage = /It started at stage `([a-z-]+)`/.exec(text)?.[1];
  const done = /; ((?:`[a-z-]+`(?:, )?)+) (?:was|were) done by attempt \d+ and not run again/.exec(text)?.[1] ?? "";
  const session = /session `([^`]+)` was resumed/.exec(text)?.[1];
  return {
    ...(stage ? { stage } : {}),
    skipped: [...done.matchAll(/`([a-z-]+)`/g)].map((m) => m[1]!),
    ...(session ? { session } : {}),
  };
}

/** The jobs of the Forge action (dispatched runs of the agent workflow) and whom their agents ran as. */
export function isolationOf(sim: Sim): DemoLoop["isolation"] {
  const users = new Set<string>();
  let jobs = 0;
  let isolated = 0;
  let why: string | undefined;
  for (const run of sim.core.state.runs.values()) {
    if (run.event !== "workflow_dispatch" || !run.path.endsWith("/forge-agent.yml")) continue;
    for (const job of run.jobs) {
      jobs++;
      const user = /The agent runs as the OS user (forge-agent-[0-9a-f]{8}) \(uid \d+\)/.exec(job.log)?.[1];
      if (user) {
        isolated++;
        users.add(user);
      } else
        why ??=
          /(the agent cannot run as its own user here[^\n]*?|the agent's own user could not be prepared[^\n]*?)(?:\. Set agent\.isolation|; the agent runs as)/.exec(
            job.log,
          )?.[1];
    }
  }
  const mode = jobs > 0 && isolated === jobs ? "user" : isolated === 0 ? "none" : "mixed";
  return { configured: ISOLATION, mode, jobs, isolated, users: users.size, ...(why ? { why } : {}) };
}

/** The loop's facts from GitHub and the journal. */
export async function readLoop(
  user: Octokit,
  sim: Sim,
  j: Journal | undefined,
  tasks: DemoTask[],
  comments: readonly DemoRetryComment[],
  trackerIssue: number | undefined,
): Promise<DemoLoop> {
  const r = { owner: DEMO_OWNER, repo: DEMO_REPO };
  const prBody = async (n: number | undefined) =>
    n === undefined ? "" : ((await user.rest.pulls.get({ ...r, pull_number: n })).data.body ?? "");
  const out: DemoLoop = { isolation: isolationOf(sim) };
  const asked = comments[0];
  if (asked) {
    const t = tasks.find((x) => x.id === asked.task);
    const body = await prBody(t?.pr);
    out.retryByComment = {
      ...asked,
      ...(t && t.attempts > asked.attempt ? { retriedAttempt: asked.attempt + 1 } : {}),
      attempts: t?.attempts ?? 0,
      status: t?.status ?? "unknown",
      ...(t?.pr !== undefined ? { finalPr: t.pr } : {}),
      answerInPr: body.includes(`a person answered on the PR: ${asked.answer}`),
    };
  }
  const checked = tasks.filter((t) => t.sentinel);
  if (checked.length) {
    const caught = checked.find((t) => t.sentinel!.fixes > 0);
    out.sentinel = {
      checked: checked.length,
      passed: checked.filter((t) => t.sentinel!.grade !== "FAIL").length,
      ...(caught ? { caught: { task: caught.id, ...caught.sentinel!, status: caught.status } } : {}),
    };
  }
  const stalled = tasks.find((t) => t.failures.some((f) => f.to === "STALE"));
  if (stalled) {
    const f = stalled.failures.find((x) => x.to === "STALE")!;
    const a = j?.tasks.find((x) => x.id === stalled.id)?.attempt;
    const walkthrough = section(await prBody(stalled.pr), "## Resumed") ?? "";
    const tracker = trackerIssue === undefined ? "" : ((await user.rest.issues.get({ ...r, issue_number: trackerIssue })).data.body ?? "");
    const row = tracker.split("\n").find((l) => l.startsWith(`| \`${stalled.id}\``)) ?? "";
    out.staleResumed = {
      task: stalled.id,
      staleAttempt: f.attempt,
      error: f.error,
      ...(f.pr !== undefined ? { stalePr: f.pr } : {}),
      resumedAttempt: stalled.attempts,
      ...(stalled.pr !== undefined ? { pr: stalled.pr } : {}),
      samePr: f.pr !== undefined && f.pr === stalled.pr,
      ...(a?.resumed ? { reason: a.resumed.reason } : {}),
      ...resumedFacts(walkthrough),
      walkthrough,
      trackerSaysResumed: row.includes(`resumed: continues attempt ${f.attempt}`),
      status: stalled.status,
    };
  }
  return out;
}

/** What the plan scripts of the loop (textkit: slugify asks, template stalls, its sentinel catches a gap), which the demo then demands. */
export function loopExpected(stages: PlanStages): { asks?: string; stalls?: string; catches?: string } {
  const scripted = (id: string) => {
    try {
      return parseScriptedTask(stages.taskText(id) ?? "");
    } catch {
      return undefined;
    }
  };
  const asks = stages.dag.nodes.find((n) => Object.values(scripted(n.id)?.directives.attempts ?? {}).some((b) => b.outcome === "ask"))?.id;
  const stalls = stages.dag.nodes.find((n) => stallAt(stages.taskText(n.id)) !== undefined)?.id;
  const catches = stages.dag.nodes.find((n) => scripted(n.id)?.directives.sentinel.grades.includes("FAIL"))?.id;
  return { ...(asks ? { asks } : {}), ...(stalls ? { stalls } : {}), ...(catches ? { catches } : {}) };
}

/** Whether this machine lets a job create the agent's OS user: root, or passwordless sudo (docs/runner.md#isolation). */
export function machineIsolates(): boolean {
  if (process.getuid?.() === 0) return true;
  try {
    execFileSync("sudo", ["-n", "true"], { stdio: "ignore", timeout: 5_000 });
    return true;
  } catch {
    return false;
  }
}

/** The loop's problems: what the plan scripts and the demo did not show. */
export function loopProblems(loop: DemoLoop, expects: ReturnType<typeof loopExpected>, isolates: boolean): string[] {
  const problems: string[] = [];
  const retry = loop.retryByComment;
  if (expects.asks && !retry) problems.push(`${expects.asks}'s question was never answered with /forge retry on its PR`);
  if (retry) {
    if (retry.retriedAttempt === undefined) problems.push(`the person's \`${retry.body}\` on #${retry.pr} started no attempt`);
    if (!retry.answerInPr) problems.push(`${retry.task}'s last PR (#${retry.finalPr ?? "?"}) does not give the person's answer`);
  }
  const stale = loop.staleResumed;
  if (expects.stalls && !stale) problems.push(`${expects.stalls} never went STALE`);
  if (stale) {
    if (!stale.samePr)
      problems.push(`${stale.task}'s resumed attempt is on #${stale.pr ?? "?"}, not the stalled attempt's #${stale.stalePr ?? "?"}`);
    if (!stale.walkthrough)
      problems.push(`${stale.task}'s PR #${stale.pr ?? "?"} says nothing of the resumed attempt (no ## Resumed section)`);
    if (!stale.trackerSaysResumed) problems.push(`the tracker's row for ${stale.task} does not say it resumed`);
  }
  const sentinel = loop.sentinel;
  if (expects.catches && sentinel?.caught?.task !== expects.catches)
    problems.push(`${expects.catches}'s sentinel never sent a problem back to be fixed`);
  else if (sentinel?.caught && sentinel.caught.grade === "FAIL")
    problems.push(`${sentinel.caught.task}'s sentinel still fails it after ${sentinel.caught.fixes} fix(es)`);
  if (isolates && loop.isolation.mode !== "user")
    problems.push(
      `this machine allows the agent its own OS user, but ${loop.isolation.jobs - loop.isolation.isolated} of ${loop.isolation.jobs} jobs ran it as the runner's user${loop.isolation.why ? ` (${loop.isolation.why})` : ""}`,
    );
  return problems;
}

/** The loop in words, for the summary. */
export function loopInWords(loop: DemoLoop): string[] {
  const out: string[] = [];
  const q = loop.retryByComment;
  if (q)
    out.push(
      `Question: ${q.task}'s attempt ${q.attempt} asked on #${q.pr}; octocat answered there with \`${q.body}\`; attempt ${q.retriedAttempt ?? "?"} ${q.answerInPr ? "took the answer" : "did not say the answer"}; ${q.status}`,
    );
  const s = loop.staleResumed;
  if (s)
    out.push(
      `Stalled: ${s.task}'s attempt ${s.staleAttempt} went silent${s.stage ? ` in ${s.stage}` : ""} and was stopped (STALE); attempt ${s.resumedAttempt} resumed it on ${s.samePr ? "the same PR" : "another PR"} #${s.pr ?? "?"}${s.skipped.length ? `, ${s.skipped.join(", ")} not run again` : ""}${s.session ? ", its agent's session resumed" : ""}; ${s.status}`,
    );
  const v = loop.sentinel;
  if (v)
    out.push(
      `Sentinel: checked ${v.checked} task(s) after their own stages, ${v.passed} passed${v.caught ? `; on ${v.caught.task} it found a problem, the fix went back to the agent, and it ended ${v.caught.grade} (${v.caught.cycles} cycle(s), ${v.caught.fixes} fix(es)); ${v.caught.status}` : ""}`,
    );
  const i = loop.isolation;
  out.push(
    i.mode === "user"
      ? `Isolation: agent.isolation ${i.configured} — each of the ${i.jobs} Forge jobs ran its agent as an OS user of its own (${i.users} users, each removed with its job).`
      : i.mode === "none"
        ? `Isolation: agent.isolation ${i.configured} — this machine does not allow an OS user per job, so the agents ran as the runner's user${i.why ? ` (${i.why})` : ""}.`
        : `Isolation: agent.isolation ${i.configured} — ${i.isolated} of ${i.jobs} Forge jobs ran their agent as an OS user of its own${i.why ? `; the others: ${i.why}` : ""}.`,
  );
  return out;
}
