// What `forge demo` takes and gives back: its options, and the result (tasks, PRs, the person's
// feedback, checks) that main.ts prints and the tests read.
import type { LatencyProfileName } from "../local-github/latency/profile.js";
import type { CiRuns } from "./ci-runs.js";
import type { DemoLoop } from "./loop.js";
import type { DemoFeedback } from "./review.js";

export type DemoAgent = "scripted" | "claude" | "gemini" | "opencode" | "qwen" | "copilot" | "mixed";

/** The names `--agent` takes, in the order the help gives them. */
export const DEMO_AGENTS: readonly DemoAgent[] = ["scripted", "claude", "gemini", "opencode", "qwen", "copilot", "mixed"];

/** The agents (adapters) each `--agent` serves a model to: the scripted agent is the `command` adapter. */
export const DEMO_SERVES: Record<DemoAgent, readonly string[]> = {
  scripted: ["command"],
  claude: ["claude"],
  gemini: ["gemini"],
  opencode: ["opencode"],
  qwen: ["qwen"],
  copilot: ["copilot"],
  mixed: ["claude", "codex", "gemini"],
};

/** How the live view and the report name each agent. */
export const DEMO_AGENT_LABEL: Record<DemoAgent, string> = {
  scripted: "scripted agent",
  claude: "Claude Code CLI (scripted model server)",
  gemini: "Gemini CLI (scripted Gemini API server)",
  opencode: "opencode (scripted Chat Completions server)",
  qwen: "Qwen Code (scripted Chat Completions server)",
  copilot: "GitHub Copilot CLI (scripted Anthropic Messages server)",
  mixed: "Claude Code, Codex and Gemini CLI per task (scripted model servers)",
};

export interface DemoOptions {
  agent?: DemoAgent;
  planDir?: string;
  /** Where the HTML report and the JSON result go (default: a new temporary folder). */
  outDir?: string;
  /** Runners available at once (default 4). */
  runners?: number;
  /**
   * The local GitHub's latency profile: "none" (default) answers at once, "github" at GitHub's speed
   * (../latency/README.md); the default timeout is then three times as long.
   */
  latency?: LatencyProfileName;
  timeoutMs?: number;
  /**
   * The plan given as an issue tree (`forge demo --issues`, issues.ts): the demo repository's config
   * sets `final_pr.auto_merge: true` and its test workflow also runs on the merge queue's groups.
   */
  issues?: boolean;
  /** Receives each line of the live view (with its newline). */
  write?: (text: string) => void;
  /** Colour and a redrawn progress bar (a terminal). */
  tty?: boolean;
}

export interface DemoTask {
  id: string;
  kind: "task" | "refinery";
  title: string;
  status: string;
  attempts: number;
  retries: number;
  pr?: number;
  timeMs?: number;
  /** Overlay that added it. */
  addedBy?: string;
  /** Why each failed attempt failed, as the App recorded it, and the attempt's PR. */
  failures: { attempt: number; to: string; error: string; pr?: number }[];
  /** Revisions of its last attempt on the same PR: by reviews (or /forge fix), by failing required checks. */
  iteration?: number;
  reviewIterations?: number;
  ciFixes?: number;
  /** Which agent (adapter) ran each attempt, and why one ran on another than the attempt before it (the journal's). */
  agents?: { attempt: number; agent: string; why?: string }[];
  /** The task sentinel's verdict on its last attempt (result.json's `sentinel`): absent when none ran. */
  sentinel?: { grade: "PASS" | "WARN" | "FAIL"; cycles: number; fixes: number };
}

export interface DemoResult {
  ok: boolean;
  problems: string[];
  agent: DemoAgent;
  runId?: string;
  planId: string;
  status: string;
  durationMs: number;
  tasks: DemoTask[];
  followups: { id: string; sourceTaskId: string; text: string; status: string; pr?: number }[];
  /** `title`: the journal's, the emitter's own; `issueTitle`: the CR issue's title as GitHub has it. */
  changeRequests: {
    id: string;
    emittedBy: string;
    title: string;
    status: string;
    overlayId?: string;
    issue?: number;
    issueTitle?: string;
  }[];
  /** The Captain's overlay PRs (opened by the Forge action), which the person merged. */
  overlayPrs: { number: number; title: string; head: string; merged: boolean }[];
  /** The overlays of the run's plan: those committed with it, then those the run applied (the Captain's). */
  overlays: string[];
  finalPr?: { number: number; title: string; head: string; base: string };
  trackerIssue?: number;
  /** The plan's own checks (its `test_command`s) on the integration branch; ok when every one exits 0. */
  testsOnIntegration?: { ok: boolean; commands: string[]; pass: number; fail: number; summary: string };
  notes: string[];
  /** Forge action jobs (Captains among them) and the project's CI runs, all in the sim runners. */
  jobs: { action: number; captain: number; ci: number };
  /** The project's CI runs read back from GitHub: where they ran and how they ended. */
  ciRuns?: CiRuns;
  /** The review answered and the CI fix (scripted agent only). */
  feedback: DemoFeedback;
  /** The rest of the loop: the person's `/forge retry` on a PR, the STALE attempt resumed, whom the agents ran as. */
  loop: DemoLoop;
  /**
   * Each attempt that ran on another agent than the one before it: from which to which and why (the
   * journal's words), and what the task's PR (its `## Agent` section) and the tracker's row say.
   */
  agentChanges?: {
    task: string;
    attempt: number;
    from: string;
    to: string;
    why: string;
    pr?: number;
    prSection?: string;
    trackerRow?: string;
  }[];
  /** `--agent mixed` and `--agent copilot`: each scripted server's conversation requests, and how many came through a job's model proxy (all should). */
  modelServers?: Record<string, { requests: number; throughProxy: number }>;
  /** `--agent mixed`: the task whose first attempt hit Claude's usage limit, and how many requests of it the Anthropic server refused. */
  usageLimit?: { task: string; refused: number };
  reportPath?: string;
  jsonPath?: string;
  /** Responses or webhooks of the local GitHub that broke GitHub's schema (should be 0). */
  schemaViolations: number;
}
