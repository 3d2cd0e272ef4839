/**
 * What a resumed retry costs against a fresh attempt, in model tokens (docs/executor.md#resuming).
 *
 * The real Claude Code CLI runs a type-1 attempt's three stages (implement → verify → walkthrough)
 * through Forge's stage runner (`runStages`) against the scripted model server, which counts the
 * tokens of every Messages answer as its `usage` reports them (input: conversation + system prompt;
 * output: the answer). Three attempts per round, each in a new checkout and a new CLI home:
 *
 *   fresh     all three stages from nothing — what a retry cost before resuming existed;
 *   killed    the same, its job killed once verify has ended (the walkthrough never runs);
 *   resumed   the retry of the killed one, as the App dispatches it: from the checkpoint's first
 *             pending stage, implement and verify not run again, the walkthrough's session
 *             continuing the killed attempt's agent session (`claude --resume <id>`, its
 *             conversation carried from the killed job's record folder).
 *
 * Prints, per round and as the median of the rounds, the tokens of `resumed` against `fresh`
 * (goal: ≤ 40 %), and the same ratio by the cost Forge records (the CLI's own figure per session,
 * summed): a CLI whose figure after a resume counted the earlier session again would show here.
 *
 * `BENCH_RESUME_AGENT=codex` runs the same with the real Codex CLI against the scripted Responses
 * server (its answers' `usage` counted the same way; `codex exec resume <id>` continues the session,
 * its rollout file carried from the killed job's record folder).
 *
 * Run: `npm run bench:resume` (`BENCH_RESUME_ROUNDS=5` for more rounds; default 3;
 * `BENCH_RESUME_AGENT=codex npm run bench:resume` for Codex).
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { runStages } from "../src/agent/stages/index.js";
import type { RunStagesOptions, StageProgress } from "../src/agent/stages/index.js";
import { offlineClaudeEnv } from "../src/fake-agents/claude-code.js";
import { claudeTools, startModelServer, tokensOf, type ScriptedTurn, type TurnRequest } from "../src/fake-agents/model-server.js";
import { carriedSessionFile } from "../action/src/task/carried-session.js";
import { claudeBinary } from "../test/helpers/claude-code.js";
import {
  codexBinary,
  codexTools,
  offlineCodexEnv,
  startResponsesServer,
  type ResponsesTurn,
  type ResponsesTurnRequest,
} from "../src/fake-agents/responses/index.js";

const ROUNDS = Number(process.env.BENCH_RESUME_ROUNDS ?? 3);
const AGENT: "claude" | "codex" = process.env.BENCH_RESUME_AGENT === "codex" ? "codex" : "claude";
const dirs: string[] = [];
const temp = (prefix: string) => {
  const d = mkdtempSync(path.join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};

/** Text of a user message. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  return ((content ?? []) as Array<{ type: string; text?: string }>).map((b) => (b.type === "text" ? (b.text ?? "") : "")).join("\n");
}

/**
 * The stage a request is in and its turn within the stage: the last stage prompt of the
 * conversation (a resumed session carries the earlier stages' before it) and the assistant turns
 * after it.
 */
function where(req: TurnRequest): { stage: string; turn: number; prompt: string } {
  const msgs = req.body.messages ?? [];
  let at = -1;
  let stage = "unknown";
  let prompt = "";
  msgs.forEach((m, i) => {
    if (m.role !== "user") return;
    const text = textOf(m.content);
    const s = /Stage: \*\*([a-z-]+)\*\*/.exec(text);
    if (s) [at, stage, prompt] = [i, s[1]!, text];
  });
  return { stage, turn: msgs.slice(at + 1).filter((m) => m.role === "assistant").length, prompt };
}

/** A module of some size, as an implementer writes one. */
const MODULE = [
  "/** Words counted in a text: what the task asks for. */",
  ...Array.from(
    { length: 40 },
    (_, i) => `export const rule${i} = (s: string): number => s.split(/\\s+/).filter((w) => w.length > ${i % 7}).length;`,
  ),
  "",
].join("\n");
const TEST = [
  'import assert from "node:assert";',
  ...Array.from({ length: 20 }, (_, i) => `assert.ok(${i} >= 0, "rule ${i} counts words");`),
  "",
].join("\n");

function walkthrough(): string {
  return [
    "---",
    "task_id: t1",
    "run_id: r1",
    "attempt: 2",
    "status: completed",
    "confidence: 0.8",
    "files_changed:",
    "  - path: src/words.ts",
    "    reason: the counting rules the task asks for",
    "  - path: test/words.test.mjs",
    "    reason: a check per rule",
    "tests:",
    "  - name: node test/words.test.mjs",
    "    result: pass",
    "risks: []",
    "followups: []",
    "---",
    "",
    "## Summary",
    "Added the word-counting rules and their checks.",
    "",
    "## Approach",
    "Wrote the module and a test per rule, ran them, checked the module's size.",
    "",
    "## Issues Encountered",
    "None.",
    "",
    "## Testing",
    "node test/words.test.mjs passes.",
    "",
  ].join("\n");
}

/** The scripted model of the three stages, each a few turns of real tool calls in `repo`. */
function turnFor(repo: string) {
  return (req: TurnRequest): ScriptedTurn => {
    const { stage, turn, prompt } = where(req);
    const file = (p: string) => path.join(repo, p);
    if (stage === "implement") {
      if (turn === 0) return { text: "I'll write the module first.", toolCalls: [claudeTools.write(file("src/words.ts"), MODULE)] };
      if (turn === 1) return { text: "Now a check per rule.", toolCalls: [claudeTools.write(file("test/words.test.mjs"), TEST)] };
      if (turn === 2) return { toolCalls: [claudeTools.bash("node test/words.test.mjs && wc -l src/words.ts", "Run the checks")] };
      return { text: "Implemented the rules, the checks pass.\nFORGE_EXIT=0" };
    }
    if (stage === "verify") {
      if (turn === 0) return { toolCalls: [claudeTools.read(file("src/words.ts"))] };
      if (turn === 1) return { toolCalls: [claudeTools.bash("node test/words.test.mjs && echo verified", "Verify")] };
      return { text: "Verified: the module has every rule and the checks pass.\nFORGE_EXIT=0" };
    }
    if (stage === "walkthrough") {
      const target = /- Walkthrough: (\S+)/.exec(prompt)?.[1];
      if (turn === 0 && target) return { toolCalls: [claudeTools.write(target, walkthrough())] };
      return { text: "Walkthrough written.\nFORGE_EXIT=0" };
    }
    return { text: `FORGE_EXIT=1 (unexpected stage ${stage})` };
  };
}

/**
 * Where a Codex request is: the last stage prompt among its user messages (a resumed thread carries
 * the earlier stages' before it), and its turn within the stage — the tool outputs after it (each
 * scripted turn but the last makes one call).
 */
function whereCodex(body: ResponsesTurnRequest["body"]): { stage: string; turn: number; prompt: string } {
  const items = body.input ?? [];
  let at = -1;
  let stage = "unknown";
  let prompt = "";
  items.forEach((item, i) => {
    if (item.role !== "user") return;
    const text = ((item.content ?? []) as Array<{ text?: string }>).map((c) => c.text ?? "").join("\n");
    const m = /Stage: \*\*([a-z-]+)\*\*/.exec(text);
    if (m) [at, stage, prompt] = [i, m[1]!, text];
  });
  const turn = items.slice(at + 1).filter((i) => i.type === "function_call_output" || i.type === "custom_tool_call_output").length;
  return { stage, turn, prompt };
}

/** The same three stages for Codex: its tools (apply_patch, exec_command), the same files and commands. */
function codexTurnFor(repo: string) {
  return (req: ResponsesTurnRequest): ResponsesTurn => {
    const { stage, turn, prompt } = whereCodex(req.body);
    const file = (p: string) => path.join(repo, p);
    if (stage === "implement") {
      if (turn === 0) return { text: "I'll write the module first.", toolCalls: [codexTools.addFile(file("src/words.ts"), MODULE)] };
      if (turn === 1) return { text: "Now a check per rule.", toolCalls: [codexTools.addFile(file("test/words.test.mjs"), TEST)] };
      if (turn === 2) return { toolCalls: [codexTools.exec("node test/words.test.mjs && wc -l src/words.ts", repo)] };
      return { text: "Implemented the rules, the checks pass.\nFORGE_EXIT=0" };
    }
    if (stage === "verify") {
      if (turn === 0) return { toolCalls: [codexTools.exec("cat src/words.ts", repo)] };
      if (turn === 1) return { toolCalls: [codexTools.exec("node test/words.test.mjs && echo verified", repo)] };
      return { text: "Verified: the module has every rule and the checks pass.\nFORGE_EXIT=0" };
    }
    if (stage === "walkthrough") {
      const target = /- Walkthrough: (\S+)/.exec(prompt)?.[1];
      if (turn === 0 && target) return { toolCalls: [codexTools.addFile(target, walkthrough())] };
      return { text: "Walkthrough written.\nFORGE_EXIT=0" };
    }
    return { text: `FORGE_EXIT=1 (unexpected stage ${stage})` };
  };
}

/** The scripted model server of the bench's agent, and how its CLI is started against it. */
async function modelFor(repo: string) {
  if (AGENT === "codex") {
    const server = await startResponsesServer({ script: Array.from({ length: 200 }, () => codexTurnFor(repo)) });
    return {
      server,
      spawn: {
        adapter: "codex" as const,
        binary: codexBinary(),
        env: { ...offlineCodexEnv(server.url, temp("forge-bench-home-")), FORGE_CODEX_SANDBOX: "bypass" },
      },
    };
  }
  const server = await startModelServer({ script: Array.from({ length: 200 }, () => turnFor(repo)) });
  return {
    server,
    spawn: { adapter: "claude" as const, binary: claudeBinary(), env: offlineClaudeEnv(server.url, temp("forge-bench-home-")) },
  };
}

interface Attempt {
  tokens: { input: number; output: number; requests: number };
  exitCode: number;
  stages: string[];
  progress?: StageProgress;
  /** Dollars Forge counted from the adapter's reports (Claude Code's cost per session, summed). */
  costUsd: number;
  /** The record folder's parent and the record folder (the carried conversation is found there). */
  workspace: string;
  record: string;
}

/** One attempt in `repo`, against a model server of its own; `killAfter`: the job dies once that stage has ended. */
async function attempt(repo: string, n: number, opts: { killAfter?: string; resume?: RunStagesOptions["resume"] } = {}): Promise<Attempt> {
  const { server, spawn } = await modelFor(repo);
  const workspace = temp("forge-bench-record-");
  const record = `attempt-${n}`;
  const kill = new AbortController();
  let progress: StageProgress | undefined;
  try {
    const r = await runStages({
      agentType: "1",
      taskContext: {
        runId: "r1",
        taskId: "t1",
        attempt: n,
        title: "Count words",
        task: "---\nid: t1\n---\n## Description\nWrite src/words.ts: forty word-counting rules, and a check for each.",
        testCommand: "node test/words.test.mjs",
      },
      workdir: repo,
      sessionDir: path.join(workspace, record, "agent"),
      spawn: {
        // Each attempt on a machine of its own: nothing of the CLI's home is shared.
        ...spawn,
        maxTurns: 20,
        idleTimeoutMs: 120_000,
        forgeCli: false,
      },
      signal: kill.signal,
      onStageEnd: async (stage, _record, p) => {
        progress = p;
        if (stage === opts.killAfter) kill.abort();
      },
      ...(opts.resume ? { resume: opts.resume } : {}),
    });
    return {
      tokens: tokensOf(server.requests as Parameters<typeof tokensOf>[0]),
      exitCode: r.exitCode,
      stages: r.manifest.stages.map((s) => `${s.name}:${s.status}${s.done_by_attempt ? `@${s.done_by_attempt}` : ""}`),
      ...(progress ? { progress } : {}),
      costUsd: r.costUsd ?? 0,
      workspace,
      record,
    };
  } finally {
    await server.close();
  }
}

function newRepo(): string {
  const repo = temp("forge-bench-repo-");
  execFileSync("git", ["init", "-q", "-b", "forge/r1/t1/1", repo]);
  execFileSync("git", ["-C", repo, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "base"]);
  return repo;
}

const total = (t: { input: number; output: number }) => t.input + t.output;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

interface Round {
  fresh: number;
  killed: number;
  resumed: number;
  /** Forge's cost figure of the resumed attempt over the fresh one's. */
  costRatio: number;
  stages: string;
}

async function round(): Promise<Round> {
  const fresh = await attempt(newRepo(), 1);
  if (fresh.exitCode !== 0) throw new Error(`the fresh attempt ended ${fresh.exitCode}: ${fresh.stages.join(" ")}`);

  const repo = newRepo();
  const killed = await attempt(repo, 1, { killAfter: "verify" });
  const p = killed.progress;
  if (!p?.session || p.pending[0] !== "walkthrough") throw new Error(`no checkpoint at the walkthrough: ${JSON.stringify(p)}`);
  const carried = await carriedSessionFile(killed.workspace, killed.record, p.session);
  if (!carried) throw new Error("the killed attempt's agent session was not carried into its record folder");
  const resumed = await attempt(repo, 2, {
    resume: {
      fromAttempt: 1,
      stage: "walkthrough",
      session: { id: p.session.id, stage: p.session.stage, file: { path: carried, root: killed.workspace } },
      depthUsed: p.depthUsed,
    },
  });
  if (resumed.exitCode !== 0) throw new Error(`the resumed attempt ended ${resumed.exitCode}: ${resumed.stages.join(" ")}`);
  return {
    fresh: total(fresh.tokens),
    killed: total(killed.tokens),
    resumed: total(resumed.tokens),
    costRatio: fresh.costUsd > 0 ? resumed.costUsd / fresh.costUsd : NaN,
    stages: resumed.stages.join(" "),
  };
}

const pct = (a: number, b: number) => `${((100 * a) / b).toFixed(1)} %`;

async function main(): Promise<void> {
  console.log(
    `bench:resume — ${AGENT === "codex" ? "Codex" : "Claude Code"}, ${ROUNDS} rounds, load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );
  const rounds: Round[] = [];
  try {
    for (let i = 0; i < ROUNDS; i++) {
      const r = await round();
      rounds.push(r);
      console.log(
        `round ${i + 1}: fresh ${r.fresh} tokens · killed after verify ${r.killed} · resumed ${r.resumed} (${pct(r.resumed, r.fresh)} of fresh; by the cost Forge recorded ${Number.isNaN(r.costRatio) ? "n/a: the CLI reports no cost" : `${(100 * r.costRatio).toFixed(1)} %`}) · ${r.stages}`,
      );
    }
  } finally {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
  const f = median(rounds.map((r) => r.fresh));
  const res = median(rounds.map((r) => r.resumed));
  const ratio = median(rounds.map((r) => r.resumed / r.fresh));
  console.log(
    `median: fresh ${f} tokens, resumed ${res} tokens — the retry costs ${(100 * ratio).toFixed(1)} % of a fresh attempt (goal ≤ 40 %)`,
  );
  console.log(
    `load after: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );
}

await main();
