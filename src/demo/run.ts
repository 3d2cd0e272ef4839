/**
 * `forge demo`, the whole of Forge in one process and a minute or two: the local GitHub (src/local-github), the
 * Forge App as a real Probot server receiving signed webhooks over HTTP, and the sim runner
 * executing the agent workflow from templates/workflows/forge-agent.yml with the real Forge action
 * from action/ (the scripted agent, or the real Claude Code CLI against the scripted model server).
 * A person (`octocat`) commits the plan; the App starts the run; the demo watches the App's
 * decisions, prints a line per state change, merges the Captain's overlay PR as a reviewer would,
 * and when the run is over checks the result, runs the project's tests on the integration branch
 * and writes an HTML report.
 *
 * Every job is the real action: tasks, refineries, follow-ups and the Captain (`_captain-<crId>`,
 * action/src/captain/overlay.ts), whose agent writes the plan folder's next overlay (the scripted agent reads
 * it from `--plan <dir>`, the Claude Code path gets it from the scripted model server) and whose job
 * validates it, commits it on the Captain's branch and opens the overlay PR that the person merges.
 *
 * This file holds the run's state and its order; services.ts starts the services and pushes the
 * plan, watch.ts is the person's part and the wait for the end, result.ts checks the outcome,
 * types.ts holds the options and the result.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Octokit } from "@octokit/rest";
import type { Decision } from "../core/decide/index.js";
import type { Journal } from "../core/journal.js";
import { LiveView } from "./live-view.js";
import type { RunRecord } from "./outcome.js";
import { DemoPlanError, loadPlanStages, unservedAgents, type PlanStages } from "./plan-stages.js";
import { PERSON } from "./project.js";
import { demoResult } from "./result.js";
import type { DemoAnswerer } from "./answer.js";
import type { MixedState } from "./mixed.js";
import type { DemoReviewer } from "./review.js";
import { createRepository, pushPlan, ROOT, startGitHubAndApp, startRunners, type Services } from "./services.js";
import { DEMO_SERVES, type DemoAgent, type DemoOptions, type DemoResult } from "./types.js";

const AGENT_LINE: Record<DemoAgent, string> = {
  scripted: "the scripted agent",
  claude: "the real Claude Code CLI against the scripted model server",
  gemini: "the real Gemini CLI against the scripted Gemini API server",
  opencode: "the real opencode CLI against the scripted Chat Completions server",
  qwen: "the real Qwen Code CLI against the scripted Chat Completions server",
  copilot: "the real GitHub Copilot CLI (bring-your-own-key) against the scripted Anthropic Messages server",
  mixed:
    "the real Claude Code, Codex and Gemini CLIs per task (type 1 on claude then codex, type 2 on codex, refineries on gemini), each against its scripted model server",
};
import { agentJobsDone, waitForTheEnd } from "./watch.js";

export type { DemoAgent, DemoOptions, DemoResult, DemoTask } from "./types.js";
export { ROOT };
export const DEFAULT_PLAN = path.join(ROOT, "examples", "plans", "textkit");

export async function runDemo(options: DemoOptions = {}): Promise<DemoResult> {
  const stages = await loadPlanStages(path.resolve(options.planDir ?? DEFAULT_PLAN));
  const agent = options.agent ?? "scripted";
  // A task that names its own agent runs on it: the demo must serve that agent a model.
  const unserved = unservedAgents(stages, DEMO_SERVES[agent]);
  if (unserved)
    throw new DemoPlanError(
      `--agent ${agent} serves a model to ${DEMO_SERVES[agent].join(", ")} only, and in the plan ${unserved}: give those tasks one of these agents, or none`,
    );
  return new DemoRun(options, stages).run();
}

/** The plan as the person commits it: its nodes, its committed overlays, and the overlays the Captain will write. */
export function planShape(stages: PlanStages): string {
  const comingNodes = stages.toCome.flatMap((o) => o.addedTasks).length;
  const parts = [`${stages.dag.nodes.length - comingNodes} nodes`];
  if (stages.committed) parts.push(`${stages.committed} overlay(s) committed with it`);
  if (stages.toCome.length) parts.push(`${stages.toCome.length} overlay(s) to come from the Captain`);
  return parts.join(", ");
}

/** One `forge demo`: the services it starts, what it saw of the App's decisions, the person's part, the outcome. */
export class DemoRun {
  readonly agent: DemoAgent;
  readonly view: LiveView;
  readonly problems: string[] = [];
  readonly notes: string[] = [];
  /** Jobs of the real Forge action, and how many of them were Captains. */
  readonly jobs = { action: 0, captain: 0, ci: 0 };
  readonly outDir: string;
  readonly scratch: string;
  readonly services: Services = {};
  readonly reviews: Promise<void>[] = [];
  // What the App decided, as it persists it.
  /** Why the run cannot go on without a person, when the demo sees it first. */
  stuck: string | undefined;
  runId: string | undefined;
  journal: Journal | undefined;
  readonly record: RunRecord = { firstRunning: new Map(), mergedAt: new Map(), failures: new Map() };
  /** Called (once) at the next decision or change: wakes the wait for the end. */
  readonly changed: (() => void)[] = [];
  /** Captain branches whose job ended without a PR: the demo stops waiting for their overlay. */
  readonly captainFailed = new Map<string, string>();
  watching = true;
  readonly overlayPrs: DemoResult["overlayPrs"] = [];
  /** Attempts stopped at their budget that the demo's person already raised. */
  readonly raised = new Set<string>();
  /** The person reviewing one task's PR (scripted agent only). */
  reviewer: DemoReviewer | undefined;
  /** The person answering agents' questions with `/forge retry <task> <answer>` on their PRs. */
  answerer: DemoAnswerer | undefined;
  /** `--agent mixed`: the task Claude's usage limit stops, and how often its server refused it. */
  mixed: MixedState | undefined;

  constructor(
    readonly options: DemoOptions,
    readonly stages: PlanStages,
  ) {
    this.agent = options.agent ?? "scripted";
    this.view = new LiveView(options.write ?? ((t: string) => void process.stdout.write(t)), options.tty ?? false);
    this.outDir = options.outDir ? path.resolve(options.outDir) : mkdtempSync(path.join(tmpdir(), "forge-demo-"));
    mkdirSync(this.outDir, { recursive: true });
    this.scratch = mkdtempSync(path.join(tmpdir(), "forge-demo-work-"));
  }

  async run(): Promise<DemoResult> {
    const { stages, view } = this;
    try {
      view.line(`Forge demo — plan ${view.color("1", stages.planId)} (${planShape(stages)}), agent: ${AGENT_LINE[this.agent]}`);
      const { sim, appId } = await startGitHubAndApp(this);
      await createRepository(this, sim, appId);
      const user = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken(PERSON) });
      await startRunners(this, sim, user);
      await pushPlan(this, user);
      const finalPrNumber = await waitForTheEnd(this, user);
      this.watching = false;
      await Promise.all(this.reviews);
      await agentJobsDone(this);
      await this.services.app!.forge.idle();
      view.endBar();
      return await demoResult(this, sim, user, finalPrNumber);
    } finally {
      await this.close();
    }
  }

  wake(): void {
    for (const fn of this.changed.splice(0)) fn();
  }

  onDecision(id: string, d: Decision): void {
    this.runId ??= id;
    if (id !== this.runId) return;
    this.journal = d.journal;
    const { firstRunning, mergedAt, failures } = this.record;
    for (const tr of d.transitions) {
      const t = d.journal.tasks.find((x) => x.id === tr.taskId);
      if (tr.to === "RUNNING" && !firstRunning.has(tr.taskId)) firstRunning.set(tr.taskId, this.view.elapsed());
      if (tr.to === "MERGED") mergedAt.set(tr.taskId, this.view.elapsed());
      if (tr.to === "FAILED" || tr.to === "STALE")
        failures.set(tr.taskId, [
          ...(failures.get(tr.taskId) ?? []),
          {
            attempt: tr.attempt,
            to: tr.to,
            error: t?.lastError ?? "",
            ...(t?.attempt?.prNumber !== undefined ? { pr: t.attempt.prNumber } : {}),
          },
        ]);
    }
    this.view.decision(id, d);
    this.wake();
  }

  async close(): Promise<void> {
    const { app, sim, executor, ciExecutor, model, gemini, chat, responses, copilotBin } = this.services;
    await app?.close().catch(() => undefined);
    await sim?.close().catch(() => undefined);
    executor?.dispose();
    ciExecutor?.dispose();
    await model?.close().catch(() => undefined);
    await gemini?.close().catch(() => undefined);
    await chat?.close().catch(() => undefined);
    await responses?.close().catch(() => undefined);
    copilotBin?.close();
    if (process.env.FORGE_DEMO_DEBUG) process.stderr.write(`forge demo: job workspaces kept in ${this.scratch}\n`);
    else rmSync(this.scratch, { recursive: true, force: true });
  }
}
