/**
 * `forge demo --agent mixed`: the plan's tasks on different real agent CLIs, each against the scripted
 * model server speaking its API, all started at once — Claude Code (Anthropic Messages,
 * claude-script.ts), Codex (OpenAI Responses, codex-script.ts) and Gemini CLI (Gemini API,
 * gemini-script.ts). The repository's config chooses the agent per kind (`agent.kinds`): type 1 on
 * `[claude, codex]`, type 2 on Codex, refineries on Gemini CLI, Captains on the config's Claude Code.
 * Each job starts its own model proxy for its attempt's agent (action/src/agent-access.ts), whose
 * upstream is that agent's scripted server.
 *
 * One task's first attempt hits Claude's usage limit: the Anthropic server answers its conversation
 * with the API's 429 (`rate_limit_error`, "Claude AI usage limit reached, resets at …"), which the
 * claude adapter reads as `rateLimitedUntil`, so its next attempt goes to Codex, the next agent of
 * its list, and merges. The result says which agent ran each attempt and why it changed, as the
 * journal, the task's PR (`## Agent`) and the tracker say it; the demo checks that they do.
 */
import { mkdirSync } from "node:fs";
import path from "node:path";
import type { Octokit } from "@octokit/rest";
import type { Journal } from "../core/journal.js";
import { offlineClaudeEnv } from "../fake-agents/claude-code.js";
import { offlineGeminiEnv, startGeminiServer } from "../fake-agents/gemini/index.js";
import { startModelServer, type ScriptedTurn } from "../fake-agents/model-server.js";
import { startResponsesServer } from "../fake-agents/responses/index.js";
import { demoClaudeScript, promptTask, type CaptainAnswer } from "./claude-script.js";
import { demoCodexScript } from "./codex-script.js";
import { demoGeminiScript } from "./gemini-script.js";
import type { PlanStages } from "./plan-stages.js";
import { ANTHROPIC_SECRET, DEMO_OWNER, DEMO_REPO } from "./project.js";
import type { DemoRun } from "./run.js";
import type { DemoResult } from "./types.js";

/** The agents of the mixed demo, per agent kind, as `.github/forge.yml` gives them (`agent.kinds`). */
export const MIXED_KINDS = { "1": ["claude", "codex"], "2": ["codex"], refinery: ["gemini"] } as const;

/** The `agent:` section of the mixed demo's config: Claude Code for what no kind names (Captains), the kinds' agents. */
export function mixedAgentConfig(isolation: string): string {
  const kinds = Object.entries(MIXED_KINDS)
    .map(([kind, agents]) => `    "${kind}": { agent: ${agents.length === 1 ? agents[0] : `[${agents.join(", ")}]`} }\n`)
    .join("");
  return `agent:\n  adapter: claude\n  # Per agent kind: type 1 on Claude Code, then Codex when Claude stops it; type 2 on Codex; refineries on Gemini CLI.\n  kinds:\n${kinds}  max_turns: 12\n  isolation: ${isolation}\n`;
}

/**
 * The task whose first attempt hits Claude's usage limit: the first type-1 task (the kind on
 * `[claude, codex]`) that depends on another, so the limit lands while other tasks run on Claude;
 * else the first type-1 task; undefined when the plan has none.
 */
export function usageLimitedTask(stages: PlanStages): string | undefined {
  const type1 = stages.dag.nodes.filter((n) => n.agentType === "1" && !stages.toCome.some((o) => o.addedTasks.includes(n.id)));
  return (type1.find((n) => n.dependencies.length > 0) ?? type1[0])?.id;
}

/** The reset time the usage limit names: five hours on, on the hour, in UTC (past any job's time limit). */
export function usageLimitMessage(now = new Date()): string {
  const hour = (now.getUTCHours() + 5) % 24;
  return `Claude AI usage limit reached, resets at ${String(hour).padStart(2, "0")}:00 (UTC)`;
}

/**
 * The scripted servers of every API the mixed demo's agents speak, started at once, and the runners'
 * environment that points each agent's job proxy at its own: ANTHROPIC_BASE_URL, OPENAI_BASE_URL,
 * GOOGLE_GEMINI_BASE_URL, a dummy key for each (the proxy holds it; the agent gets a session token).
 */
export async function startMixedServers(run: DemoRun, captain: CaptainAnswer, PATH: string): Promise<Record<string, string>> {
  const limited = usageLimitedTask(run.stages);
  run.mixed = { usageLimited: limited, usageLimits: 0 };
  const before = (prompt: string): ScriptedTurn | undefined => {
    const p = promptTask(prompt);
    if (!limited || p?.taskId !== limited || p.attempt !== 1) return undefined;
    run.mixed!.usageLimits++;
    // The Messages API's 429 (`rate_limit_error`) with the message Claude Code shows for a usage limit.
    return { error: { status: 429, retryAfter: 0, message: usageLimitMessage() } };
  };
  const claude = (run.services.model = await startModelServer({ script: demoClaudeScript(12, captain, before) }));
  const codex = (run.services.responses = await startResponsesServer({ script: demoCodexScript(12, captain) }));
  const gemini = (run.services.gemini = await startGeminiServer({ script: demoGeminiScript(12, captain) }));
  const home = path.join(run.scratch, "home");
  mkdirSync(home, { recursive: true });
  const env: Record<string, string> = {
    ...offlineGeminiEnv(gemini.url, home, { PATH }, { maxAttempts: 3 }),
    ...offlineClaudeEnv(claude.url, home, { PATH }),
    // Claude Code retries a 429 itself (10 times by default) before it gives up with the limit's message.
    CLAUDE_CODE_MAX_RETRIES: "2",
    OPENAI_BASE_URL: codex.url,
    OPENAI_API_KEY: "sk-forge-demo-dummy",
  };
  run.mixed.runnerKeys = [ANTHROPIC_SECRET, env.ANTHROPIC_API_KEY!, env.OPENAI_API_KEY!, env.GEMINI_API_KEY!];
  run.view.line(`        scripted model servers: Anthropic Messages ${claude.url} (Claude Code), OpenAI Responses ${codex.url} (Codex),`);
  run.view.line(`        Gemini API ${gemini.url} (Gemini CLI); each job's model proxy forwards its agent's requests to its own`);
  if (limited) run.view.line(`        ${limited}'s first attempt on Claude Code gets Claude's usage limit; Codex is next on its list`);
  return env;
}

/** What the mixed demo saw of the agents: the task limited, how often, the keys only the job's proxies hold. */
export interface MixedState {
  usageLimited?: string | undefined;
  usageLimits: number;
  runnerKeys?: string[];
}

/** The key a request to a scripted server presented: `x-api-key`, `x-goog-api-key` or a bearer token. */
function presentedKey(headers: Record<string, string | string[] | undefined>): string | undefined {
  const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
  return one(headers["x-api-key"]) ?? one(headers["x-goog-api-key"]) ?? one(headers.authorization)?.replace(/^Bearer /i, "");
}

/**
 * Each scripted server's conversation requests, and how many came through a job's model proxy: those
 * that present the runner's key, which only the proxy holds (the agent has a session token of its own).
 */
export function modelRequests(run: DemoRun, runnerKeys = run.mixed?.runnerKeys ?? []): NonNullable<DemoResult["modelServers"]> {
  const keys = new Set(runnerKeys);
  const count = (requests: ReadonlyArray<{ kind: string; headers: Record<string, string | string[] | undefined> }>) => {
    const main = requests.filter((r) => r.kind === "main");
    return { requests: main.length, throughProxy: main.filter((r) => keys.has(presentedKey(r.headers) ?? "")).length };
  };
  const { model, responses, gemini } = run.services;
  return {
    ...(model ? { [`Anthropic Messages (${run.agent === "copilot" ? "Copilot CLI" : "Claude Code"})`]: count(model.requests) } : {}),
    ...(responses ? { "OpenAI Responses (Codex)": count(responses.requests) } : {}),
    ...(gemini ? { "Gemini API (Gemini CLI)": count(gemini.requests) } : {}),
  };
}

/** The `## Agent` section of a PR body (up to the next section), or undefined. */
export function agentSectionOf(body: string): string | undefined {
  const m = /^## Agent\n\n([\s\S]*?)(?=\n## |\n<!--|$)/m.exec(body);
  return m?.[1]?.trim() || undefined;
}

/** The tracker's row of a task (`| \`<id>\` …`), or undefined. */
export function trackerRowOf(body: string | undefined, taskId: string): string | undefined {
  return body?.split("\n").find((l) => l.startsWith(`| \`${taskId}\` `));
}

/**
 * Each change of agent in the run (the journal's `agents` of every task), with what the task's PR
 * and the tracker say of it; and the problems of a mixed run that does not show what it should: an
 * agent of the config that ran no attempt, the limited task not moved to Codex, its PR or the
 * tracker silent about it.
 */
export async function readAgentChanges(
  run: DemoRun,
  user: Octokit,
  j: Journal | undefined,
  tasks: DemoResult["tasks"],
  trackerBody: string | undefined,
): Promise<NonNullable<DemoResult["agentChanges"]>> {
  const changes: NonNullable<DemoResult["agentChanges"]> = [];
  for (const t of j?.tasks ?? []) {
    const history = t.agents ?? [];
    for (const [k, a] of history.entries()) {
      const prev = history[k - 1];
      if (!prev || prev.agent === a.agent) continue;
      const pr = tasks.find((x) => x.id === t.id)?.pr;
      const body =
        pr !== undefined ? ((await user.rest.pulls.get({ owner: DEMO_OWNER, repo: DEMO_REPO, pull_number: pr })).data.body ?? "") : "";
      const prSection = agentSectionOf(body);
      const trackerRow = trackerRowOf(trackerBody, t.id);
      changes.push({
        task: t.id,
        attempt: a.attempt,
        from: prev.agent,
        to: a.agent,
        why: a.why ?? "",
        ...(pr !== undefined ? { pr } : {}),
        ...(prSection ? { prSection } : {}),
        ...(trackerRow ? { trackerRow } : {}),
      });
    }
  }
  if (run.agent !== "mixed" || !j) return changes;
  const ran = new Set(j.tasks.flatMap((t) => (t.agents ?? []).map((a) => a.agent)));
  for (const agent of new Set(Object.values(MIXED_KINDS).flat()))
    if (!ran.has(agent) && j.plan.nodes.some((n) => (MIXED_KINDS as Record<string, readonly string[]>)[n.agentType]?.includes(agent)))
      run.problems.push(`no attempt ran on ${agent}`);
  for (const [server, n] of Object.entries(modelRequests(run))) {
    if (!n.requests) run.problems.push(`the scripted ${server} server answered no conversation`);
    else if (n.throughProxy < n.requests)
      run.problems.push(
        `${n.requests - n.throughProxy} of ${n.requests} requests to the ${server} server did not come through a job's model proxy`,
      );
  }
  const limited = run.mixed?.usageLimited;
  if (limited) {
    const change = changes.find((c) => c.task === limited && c.from === "claude" && c.to === "codex");
    if (!run.mixed!.usageLimits) run.problems.push(`${limited}'s first attempt never reached Claude's scripted server`);
    if (!change) run.problems.push(`${limited} did not move from claude to codex after Claude's usage limit`);
    else {
      if (!/usage limit/.test(change.why))
        run.problems.push(`${limited}'s change of agent gives no usage limit as its reason: ${change.why}`);
      if (!change.prSection?.includes("Codex")) run.problems.push(`${limited}'s PR has no \`## Agent\` section naming Codex`);
      if (!change.trackerRow?.includes("agent claude → codex"))
        run.problems.push(`the tracker's row of ${limited} does not say claude → codex`);
    }
  }
  return changes;
}
