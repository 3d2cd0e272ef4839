/**
 * `execution-report.md` (docs/formats.md#execution-report): the attempt told for people, from the
 * files the job already has — the stage manifest, the signal files, `.live-report`, the outcome
 * and the job's clock. Written into the session folder before it is masked and copied into the
 * record folder (and so into the artifact). Every string from the agent is data: cut, one line,
 * its table separators escaped, Forge's markers and @mentions neutralised.
 */
import { readdir, writeFile } from "node:fs/promises";
import { readAgentFile } from "../../../src/agent/agent-files.js";
import path from "node:path";
import { exitMeaning } from "../../../src/core/exit-codes.js";
import { asData } from "../../../src/core/render/as-data.js";
import type { LiveEntry } from "../live-report.js";

export interface ExecutionFacts {
  runId: string;
  taskId: string;
  attempt: number;
  agentType: string;
  agent: string;
  /** The attempt runs on another agent than the one before it: which, and why (the App's dispatch). */
  switched?: { from: string; reason: string };
  model?: string;
  traceId: string;
  exitCode: number;
  error?: string;
  /** Why the runner stopped the agent, when it did (stalled, idle, wall_clock, cancelled, budget). */
  stopped?: { reason: string; detail: string };
  /** Epoch ms: the job's start, the agent's start and end, now. */
  t0: number;
  tAgent: number;
  tAgentEnd: number;
  tNow: number;
  spend: {
    costUsd?: number;
    turns?: number;
    tokens?: number;
    proxyCostUsd?: number;
    /** The runner stopped the agent at this cap. */
    budget?: { limit: { usd?: number; tokens?: number }; spent: { usd?: number; tokens?: number } };
  };
  live: readonly LiveEntry[];
}

interface ManifestStage {
  name?: unknown;
  status?: unknown;
  exit_code?: unknown;
  attempts?: unknown;
  duration_ms?: unknown;
  error?: unknown;
  model?: unknown;
  tier?: unknown;
}

/** The model a stage ran on, with its tier: `opus (high)`, `high` (the CLI's default model), or empty. */
function modelCell(s: ManifestStage): string {
  const model = cell(s.model, 60);
  const tier = cell(s.tier, 10);
  if (model && tier) return `${model} (${tier})`;
  return model || tier;
}

/** A cell of a Markdown table: one line of data, at most `max` characters. */
function cell(v: unknown, max = 80): string {
  const s = typeof v === "string" || typeof v === "number" ? String(v) : "";
  return asData(s.slice(0, max * 4))
    .replace(/\s+/g, " ")
    .trim()
    .slice(0, max)
    .replace(/\\/g, "\\\\")
    .replace(/\|/g, "\\|")
    .replace(/`/g, "'");
}

const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** How many recent tool events the report lists. */
export const REPORT_TOOL_LINES = 20;

export function renderExecutionReport(f: ExecutionFacts, stages: ManifestStage[], signals: string[]): string {
  const lines = [
    `# Execution report — \`${f.taskId}\` attempt ${f.attempt}`,
    "",
    `Run \`${f.runId}\` · agent type ${cell(f.agentType)} · adapter ${cell(f.agent)}${f.model ? ` · model ${cell(f.model)}` : ""} · trace \`${f.traceId}\``,
    "",
    "| | |",
    "| --- | --- |",
    `| Outcome | exit ${f.exitCode}: ${exitMeaning(f.exitCode)} |`,
    ...(f.switched ? [`| Agent changed | from ${cell(f.switched.from)}: ${cell(f.switched.reason, 300)} |`] : []),
    ...(f.stopped ? [`| Stopped by the runner | ${cell(f.stopped.reason)}: ${cell(f.stopped.detail, 200)} |`] : []),
    ...(f.error ? [`| Error | ${cell(f.error, 300)} |`] : []),
    `| Before the agent | ${secs(f.tAgent - f.t0)} |`,
    `| Agent | ${secs(f.tAgentEnd - f.tAgent)} |`,
    `| After the agent (until this report) | ${secs(f.tNow - f.tAgentEnd)} |`,
    ...spendRows(f.spend),
    "",
    "## Stages",
    "",
  ];
  if (stages.length) {
    lines.push("| Stage | Status | Exit | Attempts | Model | Time | Error |", "| --- | --- | ---: | ---: | --- | ---: | --- |");
    for (const s of stages.slice(0, 100))
      lines.push(
        `| ${cell(s.name)} | ${cell(s.status)} | ${cell(s.exit_code)} | ${cell(s.attempts ?? 1)} | ${modelCell(s)} | ${typeof s.duration_ms === "number" ? secs(s.duration_ms) : ""} | ${cell(s.error, 160)} |`,
      );
  } else lines.push("No stage manifest.");
  const tools = f.live.filter((e) => e.status === "tool_use");
  const recent = f.live.filter((e) => e.status !== "tool_result").slice(-REPORT_TOOL_LINES);
  lines.push(
    "",
    "## Signals",
    "",
    ...(signals.length ? signals.slice(0, 100).map((s) => `- \`${cell(s, 120)}\``) : ["None."]),
    "",
    `## Activity (${tools.length} tool call${tools.length === 1 ? "" : "s"}, ${f.live.length} events in \`.live-report\`)`,
    "",
  );
  if (recent.length) {
    lines.push("| Elapsed | Stage | Event | Tool | Detail |", "| ---: | --- | --- | --- | --- |");
    for (const e of recent)
      lines.push(`| ${e.elapsed_s.toFixed(1)} s | ${cell(e.stage)} | ${e.status} | ${cell(e.tool ?? "")} | ${cell(e.detail ?? "", 120)} |`);
  } else lines.push("No events.");
  lines.push("");
  return lines.join("\n");
}

function spendRows(s: ExecutionFacts["spend"]): string[] {
  const rows: string[] = [];
  if (s.costUsd !== undefined) rows.push(`| Spend (the adapter's figure) | $${s.costUsd.toFixed(4)} |`);
  if (s.proxyCostUsd !== undefined) rows.push(`| Spend (measured at the model proxy) | $${s.proxyCostUsd.toFixed(4)} |`);
  if (s.tokens !== undefined) rows.push(`| Tokens | ${s.tokens} |`);
  if (s.budget)
    rows.push(
      `| Budget | stopped at its cap: ${s.budget.limit.usd !== undefined ? `$${s.budget.limit.usd.toFixed(2)}` : `${s.budget.limit.tokens} tokens`} |`,
    );
  if (s.turns !== undefined) rows.push(`| Turns | ${s.turns} |`);
  if (!rows.length) rows.push("| Spend | not reported by the adapter |");
  return rows;
}

/** Signal files under the session folder, as paths relative to it (sorted). */
async function signalFiles(sessionDir: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string, depth: number): Promise<void> => {
    if (depth > 6 || found.length >= 200) return;
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) await walk(p, depth + 1);
      else if (path.basename(dir) === ".signals") found.push(path.relative(sessionDir, p));
    }
  };
  await walk(sessionDir, 0);
  return found.sort();
}

/** Writes `execution-report.md` into the session folder. */
export async function writeExecutionReport(sessionDir: string, facts: ExecutionFacts): Promise<string> {
  let stages: ManifestStage[] = [];
  try {
    const text = (await readAgentFile(sessionDir, path.join(sessionDir, "manifest.json")))?.toString("utf8") ?? "";
    const manifest = JSON.parse(text) as { stages?: unknown };
    if (Array.isArray(manifest.stages)) stages = manifest.stages.filter((s): s is ManifestStage => typeof s === "object" && s !== null);
  } catch {
    // No manifest, or not JSON: the report says so.
  }
  const file = path.join(sessionDir, "execution-report.md");
  await writeFile(file, renderExecutionReport(facts, stages, await signalFiles(sessionDir)));
  return file;
}
