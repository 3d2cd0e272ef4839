// The shared scaffold of the real-CLI suite (test/agent/real/*.test.ts): each agent CLI's row
// (rows.ts) runs the same cases against the scripted server of its API (apis.ts) — a type-1 stage
// sequence, `forge spawn` from its shell, a stalled model, the wall clock, a 429 it gives up on, a
// usage limit, a resumed session. A case a CLI cannot do is skipped with the reason its row gives;
// a CLI that is not installed (Copilot CLI, an optional one) skips its row with the reason.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { afterEach, beforeEach } from "vitest";
import type { StagesResult } from "../../../src/agent/stages/index.js";
import type { AdapterName, ProgressEvent, SpawnOptions, SpawnResult } from "../../../src/agent/types.js";
import { cleanupTempDirs, tempDir } from "../helpers.js";
import type { Api, Call, LimitError, Served, Step, Tools, Turn } from "./apis.js";

export { forgeCliFromSource, tempDir } from "../helpers.js";

export type CaseName = "type1" | "spawn" | "idle" | "wall" | "backoff" | "usage" | "resume";

/** What the type-1 case saw, for a row's own checks. */
export interface Type1Seen {
  row: Row;
  out: StagesResult;
  elsewhere: string;
  repo: string;
  file: string;
  sessionDir: string;
  server: Served;
  events: ProgressEvent[];
  systemTexts: string[];
  ms: number;
}

export interface Row {
  adapter: Exclude<AdapterName, "command">;
  /** The CLI's binary, or undefined when it is not installed (then `missing` says how to install it). */
  binary: () => string | undefined;
  missing?: string;
  api: Api;
  tools: Tools;
  model?: string;
  /** The runner's environment for the CLI against `url`, its HOME `home`. */
  env(url: string, home: string, extra?: Record<string, string>): Record<string, string>;
  /** The cases the CLI cannot do, with the reason (printed as the skip reason). */
  cannot: Partial<Record<CaseName, string>>;
  type1: {
    /** Turns before the first write (Copilot's `create` makes no folders: its shell makes src/ first). */
    prelude?: (file: string) => Turn[];
    /** How the walkthrough template Forge left is overwritten (default: the write tool). */
    overwrite?: (file: string, content: string) => Call;
    /** Appended to the verify command (Codex: a write outside its sandbox). */
    verifyExtra?: (elsewhere: string) => string;
    /** The tool calls in progress events, by Forge's names. */
    tools: string[];
    /** The turns the outcome reports; `min` when the CLI may count more. */
    turns: number | { min: number };
    /** Main requests the server saw (undefined: not checked). */
    requests?: number;
    /** A result event's summary, its first word captured: one per stage. */
    resultPattern?: RegExp;
    maxTurns?: number;
    timeoutMs: number;
    check?: (seen: Type1Seen) => void | Promise<void>;
  };
  idle: { idleMs: number; timeoutMs: number; testMs: number; quietToTheEnd: boolean; detectWithinMs?: number };
  backoff: {
    errors: LimitError[];
    env?: Record<string, string>;
    /** The limit ends while Forge waits (the server's errors are dropped then). */
    clearOnSleep?: boolean;
    /** The main requests' statuses (undefined: at least one 429, then the two answers). */
    statuses?: number[];
    wait?: number;
    transcript?: RegExp;
    result?: Record<string, unknown>;
    rateLimitEvent?: RegExp;
    testMs: number;
  };
  usage: {
    errors: LimitError[];
    env?: Record<string, string>;
    /** The main requests' statuses (undefined: every one a 429). */
    statuses?: number[];
    message?: RegExp;
    reset: (until: Date, before: number) => void;
    testMs: number;
  };
  spawn: { shell?: (command: string) => Call; childArgs?: string; maxTurns?: number; check?: (child: Record<string, unknown>) => void };
  resume: {
    idPattern?: RegExp;
    /** The resumed session keeps the first one's id. */
    sameId: boolean;
    /** The model sees the first session's answers too (not only its prompts). */
    assistantSeen: boolean;
    /** The carried file's exact name (default: `<adapter>-…<id>.jsonl`). */
    carried?: (id: string) => string;
  };
}

/** Why a row's case does not run, or undefined when it runs. */
export function skipReason(row: Row, name: CaseName): string | undefined {
  if (row.binary() === undefined) return row.missing ?? `${row.adapter} is not installed`;
  return row.cannot[name];
}

/** Reports a skipped case with its reason (Vitest prints the test's name). */
export function skipTitle(row: Row, name: CaseName, title: string): string {
  const why = skipReason(row, name);
  return why ? `${title} — skipped: ${why}` : title;
}

export interface World {
  repo: string;
  server: Served | undefined;
}

/** A git checkout on the task's branch for each test, the server closed and temporary folders removed after it. */
export function useWorld(): World {
  const world: World = { repo: "", server: undefined };
  beforeEach(() => {
    world.repo = tempDir("forge-real-repo-");
    execFileSync("git", ["init", "-q", "-b", "forge/r1/t1/1", world.repo]);
    execFileSync("git", [
      "-C",
      world.repo,
      "-c",
      "user.name=T",
      "-c",
      "user.email=t@example.com",
      "commit",
      "-q",
      "--allow-empty",
      "-m",
      "base",
    ]);
  });
  afterEach(async () => {
    await world.server?.close();
    world.server = undefined;
    cleanupTempDirs();
  });
  return world;
}

/** The runner's environment: the row's offline CLI set-up, a fresh HOME, tokens of the runner's that must not reach the agent. */
export function runnerEnv(row: Row, url: string, extra: Record<string, string> = {}): Record<string, string> {
  const home = tempDir(`forge-${row.adapter}-home-`);
  return {
    ...row.env(url, home, extra),
    GITHUB_TOKEN: "ghs_notForAgents0123456789abcdefghij",
    COPILOT_GITHUB_TOKEN: "ghs_notForAgentsEither0123456789abcd",
  };
}

/** The binary of a row whose case runs (skipReason said it is there). */
export const bin = (row: Row): string => row.binary()!;

/** Spawn options every case shares. */
export function baseSpawn(row: Row, world: World, env: Record<string, string>): Pick<SpawnOptions, "adapter" | "binary" | "cwd" | "env"> {
  return { adapter: row.adapter, binary: bin(row), cwd: world.repo, env, ...(row.model ? { model: row.model } : {}) };
}

export const transcriptOf = (r: SpawnResult): string => readFileSync(r.transcriptPath, "utf8");

/** The task: a quoted title with a colon, as plans write them (a CLI that quoted the prompt would break its YAML). */
export const TASK = '---\nid: t1\ntitle: "Greet: say hello"\n---\n## Description\nCreate src/greet.ts exporting greet().';

export const WALKTHROUGH = [
  "---",
  "task_id: t1",
  "run_id: r1",
  "attempt: 1",
  "status: completed",
  "confidence: 0.85",
  "files_changed:",
  "  - path: src/greet.ts",
  "    reason: the greet() function the task asks for",
  "tests:",
  "  - name: node --check",
  "    result: pass",
  "risks: []",
  "followups:",
  "  - add a unit test for greet",
  "---",
  "",
  "## Summary",
  "Added greet().",
  "",
  "## Approach",
  "Wrote the module, then edited the greeting.",
  "",
  "## Issues Encountered",
  "None.",
  "",
  "## Testing",
  "Counted the file's lines.",
  "",
].join("\n");

const FIRST = 'export const greet = () => "hello";';
const EDITED = 'export const greet = () => "hello from forge";';
export const GREET = `${EDITED}\n`;

/**
 * The scripted model of a type-1 sequence: implement writes and edits `file`, verify runs a command
 * (what the agent's shell saw goes to the session folder), walkthrough writes one. Each session's
 * system text goes to `systemTexts`, its prompt to `prompts`.
 */
export function type1Script(row: Row, file: string, elsewhere: string, systemTexts: string[], prompts: string[]): Step {
  const { tools } = row;
  const prelude = row.type1.prelude?.(file) ?? [];
  const overwrite = row.type1.overwrite ?? tools.write;
  return (req) => {
    const stage = /Stage: \*\*([a-z-]+)\*\*/.exec(req.userText)?.[1] ?? "unknown";
    const k = req.turn;
    if (k === 0) systemTexts.push(req.systemText);
    if (k === 0) prompts.push(req.userText);
    if (stage === "implement") {
      if (k < prelude.length) return prelude[k]!;
      const i = k - prelude.length;
      if (i === 0)
        return { thought: "The task wants src/greet.ts.", text: "I'll create the module.", toolCalls: [tools.write(file, `${FIRST}\n`)] };
      if (i === 1) return { toolCalls: [tools.edit(file, FIRST, EDITED)] };
      return { text: "Implemented.\nFORGE_EXIT=0" };
    }
    if (stage === "verify") {
      if (k === 0) {
        const check =
          'wc -l < src/greet.ts > "$FORGE_SESSION_DIR/lines.txt" && echo "$FORGE_TRACE_ID $FORGE_SPAWN_DEPTH $FORGE_AGENT_TYPE ${GITHUB_TOKEN:-no-github-token} ${COPILOT_GITHUB_TOKEN:-no-copilot-token}" > "$FORGE_SESSION_DIR/env-check.txt" && echo checked';
        return { toolCalls: [tools.shell(`${check}${row.type1.verifyExtra ? `; ${row.type1.verifyExtra(elsewhere)}` : ""}`)] };
      }
      return { text: `Verified: ${req.toolOutput.includes("checked") ? "checked" : "not checked"}\nFORGE_EXIT=0` };
    }
    if (stage === "walkthrough") {
      const walkthrough = /- Walkthrough: (\S+)/.exec(req.userText)![1]!;
      return k === 0 ? { toolCalls: [overwrite(walkthrough, WALKTHROUGH)] } : { text: "Walkthrough written.\nFORGE_EXIT=0" };
    }
    return { text: `unexpected stage ${stage}` };
  };
}

/** The first line of Forge's system prompt long enough to tell it apart (no quotes: a JSON text holds it as it is). */
export function telltaleLine(systemPrompt: string): string {
  return systemPrompt
    .split("\n")
    .find((l) => l.trim().length > 40 && !/["\\]/.test(l))!
    .trim();
}

/** The events' times and the end, in order: the longest silence between two of them. */
export function longestSilence(events: ProgressEvent[], finishedAt: string): number {
  const times = [...events.filter((e) => e.kind !== "exit").map((e) => Date.parse(e.at)), Date.parse(finishedAt)].sort((a, b) => a - b);
  return Math.max(...times.slice(1).map((t, i) => t - times[i]!));
}

/** A token shape in the first prompt of a resumed pair: no copy of the conversation that leaves the job may hold it. */
export const TOKEN = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB";
export const PLUM_PROMPT = `Remember the word PLUM. (The job's token is ${TOKEN}.)`;

/** Prints the wall time of a row's case (`real <adapter> <case>: <ms> ms`). */
export function timed(row: Row, name: CaseName, ms: number): void {
  console.log(`real ${row.adapter} ${name}: ${ms.toFixed(0)} ms`);
}
