// The Codex adapter with the real Codex CLI (`codex exec`, @openai/codex), offline, against the
// scripted Responses-API server (src/fake-agents/responses/): real tool calls (apply_patch,
// exec_command) write real files, the stage sequence ends with a valid walkthrough, progress comes
// from `--json` events; a persistent 429 ends in a backoff and a second run.
//
// Sandbox: where Codex's own Linux sandbox can start (as on a developer machine), the sessions run
// with Forge's default for outside Actions, `--sandbox workspace-write` + `--add-dir <session dir>`,
// and the test checks a write outside those places is refused. Where it cannot (GitHub's
// ubuntu-24.04 runners forbid the user namespaces bubblewrap needs), they run as Forge runs inside
// an Actions job, `--dangerously-bypass-approvals-and-sandbox` (see codexSandbox in
// src/agent/adapters/codex.ts).
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { loadSystemPrompt } from "../../src/agent/prompts.js";
import { runStages } from "../../src/agent/stages/index.js";
import { spawnAgent } from "../../src/agent/spawn/index.js";
import type { ProgressEvent } from "../../src/agent/types.js";
import { completeWalkthrough } from "../../src/agent/walkthrough.js";
import { walkthroughFrontmatterSchema } from "../../src/core/schemas/walkthrough.js";
import {
  codexBinary,
  codexSandboxWorks,
  codexTools,
  offlineCodexEnv,
  startResponsesServer,
  type ResponsesServer,
  type ResponsesTurn,
  type ResponsesTurnRequest,
} from "../../src/fake-agents/responses/index.js";
import { cleanupTempDirs, forgeCliFromSource, tempDir } from "./helpers.js";

let server: ResponsesServer | undefined;
let repo: string;
let sandboxed: boolean;

beforeAll(() => {
  const probe = codexSandboxWorks(tempDir("forge-codex-probe-"));
  sandboxed = probe.ok;
  if (!sandboxed) console.log(`Codex's sandbox cannot start here, sessions run bypassing it: ${probe.output}`);
});
beforeEach(() => {
  repo = tempDir("forge-codex-repo-");
  execFileSync("git", ["init", "-q", "-b", "forge/r1/t1/1", repo]);
  execFileSync("git", ["-C", repo, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "base"]);
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  cleanupTempDirs();
});

/** The environment of the runner: the offline Codex config, a GitHub token that must not reach the agent, the sandbox choice. */
function codexEnv(url: string, opts: { retries?: number } = {}): Record<string, string> {
  const home = mkdtempSync(path.join(tmpdir(), "forge-codex-home-"));
  return {
    ...offlineCodexEnv(url, home, {}, { tmpWritable: false, ...opts }),
    GITHUB_TOKEN: "ghs_notForAgents0123456789abcdefghij",
    FORGE_CODEX_SANDBOX: sandboxed ? "workspace-write" : "bypass",
  };
}

const WALKTHROUGH = [
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
  "Wrote the module with apply_patch, then edited the greeting.",
  "",
  "## Issues Encountered",
  "None.",
  "",
  "## Testing",
  "Checked the file has one line.",
  "",
].join("\n");

/**
 * The scripted model of a type-1 sequence: implement adds and edits `file`, verify runs a command
 * (and tries to write `elsewhere`, outside the sandbox), walkthrough adds one. The developer text of
 * each session's first turn goes to `developerTexts`.
 */
function type1Script(file: string, elsewhere: string, developerTexts: string[]): (req: ResponsesTurnRequest) => ResponsesTurn {
  const stageOf = (req: ResponsesTurnRequest) => /Stage: \*\*([a-z-]+)\*\*/.exec(req.userText)?.[1] ?? "unknown";
  const walkthroughPathOf = (req: ResponsesTurnRequest) => /- Walkthrough: (\S+)/.exec(req.userText)![1]!;
  const script = (req: ResponsesTurnRequest): ResponsesTurn => {
    const stage = stageOf(req);
    const k = req.turn;
    if (k === 0) developerTexts.push(req.developerText);
    if (stage === "implement") {
      if (k === 0)
        return {
          reasoning: "The task wants src/greet.ts.",
          text: "I'll create the module.",
          toolCalls: [codexTools.addFile(file, 'export const greet = () => "hello";\n')],
        };
      if (k === 1)
        return {
          toolCalls: [
            codexTools.replaceLine(file, 'export const greet = () => "hello";', 'export const greet = () => "hello from forge";'),
          ],
        };
      return { text: "Implemented.\nFORGE_EXIT=0" };
    }
    if (stage === "verify") {
      if (k === 0) {
        return {
          toolCalls: [
            codexTools.exec(
              'wc -l < src/greet.ts > "$FORGE_SESSION_DIR/lines.txt" && echo "$FORGE_TRACE_ID $FORGE_SPAWN_DEPTH $FORGE_AGENT_TYPE ${GITHUB_TOKEN:-no-github-token}" > "$FORGE_SESSION_DIR/env-check.txt"; ' +
                `echo outside > ${elsewhere}/escaped.txt 2>/dev/null && echo escaped || echo refused`,
            ),
          ],
        };
      }
      return { text: `Verified: ${JSON.stringify(req.toolOutputs[0]?.output ?? "")}\nFORGE_EXIT=0` };
    }
    if (stage === "walkthrough")
      return k === 0
        ? { toolCalls: [codexTools.addFile(walkthroughPathOf(req), WALKTHROUGH)] }
        : { text: "Walkthrough written.\nFORGE_EXIT=0" };
    return { text: `unexpected stage ${stage}` };
  };
  return script;
}

describe("Codex adapter with the real CLI", () => {
  it("runs a type-1 stage sequence whose tool calls write, edit and run commands, and ends with a valid walkthrough", async () => {
    const file = path.join(repo, "src", "greet.ts");
    // A place outside the checkout, the session directory and (tmpWritable: false) /tmp.
    const elsewhere = tempDir("forge-codex-elsewhere-");
    const developerTexts: string[] = [];
    const script = type1Script(file, elsewhere, developerTexts);
    server = await startResponsesServer({ script: [script, script, script, script] });
    const events: ProgressEvent[] = [];
    // Outside /tmp's reach of the sandbox too: the session directory is writable only through --add-dir.
    const sessionDir = path.join(tempDir("forge-codex-session-"), "session");
    const t0 = performance.now();
    const out = await runStages({
      agentType: "1",
      taskContext: {
        runId: "r1",
        taskId: "t1",
        attempt: 1,
        title: "Greet",
        task: "---\nid: t1\n---\n## Description\nCreate src/greet.ts exporting greet().",
        testCommand: "node --check src/greet.ts",
      },
      workdir: repo,
      sessionDir,
      spawn: {
        adapter: "codex",
        binary: codexBinary(),
        model: "gpt-5.5",
        env: codexEnv(server.url),
        idleTimeoutMs: 60_000,
        forgeCli: false,
      },
      onProgress: (e) => events.push(e),
    });
    const ms = performance.now() - t0;

    const transcripts = out.manifest.stages
      .flatMap((s) => s.session_dirs.map((d) => readFileSync(path.join(sessionDir, d, "transcript.log"), "utf8")))
      .join("\n");
    expect(out.exitCode, transcripts).toBe(0);
    // Real files, written by the CLI's own tools: apply_patch (add, then update) and a shell command.
    expect(readFileSync(file, "utf8")).toBe('export const greet = () => "hello from forge";\n');
    const verifyDir = path.join(sessionDir, out.manifest.stages[1]!.session_dirs[0]!);
    expect(readFileSync(path.join(verifyDir, "lines.txt"), "utf8").trim()).toBe("1");
    // The agent's commands saw Forge's trace id, depth and type — and no GitHub token.
    const [trace, depth, type, token] = readFileSync(path.join(verifyDir, "env-check.txt"), "utf8").trim().split(" ");
    expect(trace).toBe(out.manifest.trace_id);
    expect([depth, type, token]).toEqual(["1", "1", "no-github-token"]);
    // Codex's sandbox, when it runs, keeps writes to the checkout and the session directory.
    expect(existsSync(path.join(elsewhere, "escaped.txt"))).toBe(!sandboxed);
    const verifyOutput = server.turns().find((t) => t.turn === 1 && JSON.stringify(t.body).includes("Stage: **verify**"));
    expect(JSON.stringify(verifyOutput?.body?.input ?? [])).toContain(sandboxed ? "refused" : "escaped");

    expect(out.manifest.stages.map((s) => [s.name, s.status, s.exit_code, s.attempts])).toEqual([
      ["implement", "success", 0, 1],
      ["verify", "success", 0, 1],
      ["walkthrough", "success", 0, 1],
    ]);
    // One `codex exec` is one Codex turn.
    expect(out.turns).toBe(3);
    expect(out.model).toBe("gpt-5.5");

    // What reached the model: --model, Forge's system prompt as developer instructions, the prompt.
    const main = server.turns();
    expect(main.length).toBe(3 + 2 + 2);
    expect(main.every((t) => t.status === 200 && t.body?.model === "gpt-5.5" && t.body.stream === true)).toBe(true);
    expect(main[0]!.headers.authorization).toBe("Bearer sk-forge-sim-dummy");
    const systemPrompt = (await loadSystemPrompt("1")).text;
    expect(developerTexts).toHaveLength(3);
    for (const text of developerTexts)
      expect(text).toContain(
        systemPrompt
          .split("\n")
          .find((l) => l.trim().length > 40)!
          .trim(),
      );
    expect(server.exhausted()).toBe(false);

    // Progress came from `codex exec --json`: tool calls by kind, reasoning, token usage, per stage.
    expect(events.filter((e) => e.kind === "tool_use").map((e) => e.tool)).toEqual(["Edit", "Edit", "Bash", "Edit"]);
    expect(events.filter((e) => e.kind === "tool_use" && e.tool === "Edit").map((e) => e.summary)).toEqual([
      `Edit add ${file}`,
      `Edit update ${file}`,
      `Edit add ${path.join(sessionDir, "walkthrough.md")}`,
    ]);
    expect(events.some((e) => e.kind === "tool_result" && e.summary.startsWith("exit 0:"))).toBe(true);
    expect(events.some((e) => e.kind === "text" && e.summary === "thinking")).toBe(true);
    const results = events.filter((e) => e.kind === "result");
    expect(results).toHaveLength(3);
    expect(results.map((r) => /^turn completed \(\d+ input, \d+ output tokens\): (\w+)/.exec(r.summary)?.[1])).toEqual([
      "Implemented",
      "Verified",
      "Walkthrough",
    ]);
    expect(events.every((e) => e.traceId === out.manifest.trace_id)).toBe(true);

    // The walkthrough, completed with the runner's facts, is valid.
    expect(out.walkthroughPath).toBe(path.join(sessionDir, "walkthrough.md"));
    const head = execFileSync("git", ["-C", repo, "rev-parse", "HEAD"], { encoding: "utf8" }).trim();
    const done = completeWalkthrough(readFileSync(out.walkthroughPath!, "utf8"), {
      task_id: "t1",
      run_id: "r1",
      attempt: 1,
      branch: "forge/r1/t1/1",
      base_ref: "forge/r1/_integration",
      head_sha: head,
      time_spent_minutes: ms / 60_000,
      files_changed: ["src/greet.ts"],
      agent: "codex",
      ...(out.model ? { model: out.model } : {}),
      ...(out.turns !== undefined ? { turns: out.turns } : {}),
    });
    expect(done.problems).toEqual([]);
    const fm = walkthroughFrontmatterSchema.parse(done.frontmatter);
    expect(fm).toMatchObject({
      status: "completed",
      confidence: 0.85,
      files_changed: [{ path: "src/greet.ts", reason: "the greet() function the task asks for" }],
      agent: "codex",
    });
    console.log(
      `real Codex CLI (${sandboxed ? "workspace-write sandbox" : "sandbox bypassed"}), three-stage type-1 sequence: ${ms.toFixed(0)} ms`,
    );
  }, 120_000);
});

describe("Codex adapter with the real CLI: sub-agents, stalls, rate limits", () => {
  it("lets a type-2 agent run `forge spawn` from its shell: a type-1 Codex sub-agent works one trace deeper", async () => {
    const childFile = path.join(repo, "child.txt");
    const script = (req: ResponsesTurnRequest): ResponsesTurn => {
      if (req.userText.includes("CHILD TASK"))
        return req.turn === 0
          ? { toolCalls: [codexTools.addFile(childFile, "written by the sub-agent\n")] }
          : { text: "Child done.\nFORGE_EXIT=0" };
      if (req.turn === 0) {
        const cmd =
          'forge spawn --agent-type 1 --output-format json --name child --prompt "CHILD TASK: write child.txt" > "$FORGE_SESSION_DIR/child.json"; ' +
          'forge spawn --agent-type 2 --output-format json --prompt "CHILD TASK: not allowed" > "$FORGE_SESSION_DIR/refused.json"; echo done';
        // exec_command yields after yield_time_ms; the sub-agent must be done by then.
        return { toolCalls: [{ name: "exec_command", arguments: { cmd, yield_time_ms: 30_000 } }] };
      }
      return { text: `Parent done: ${req.toolOutputs[0]?.output ?? ""}\nFORGE_EXIT=0` };
    };
    server = await startResponsesServer({ script: [script, script, script] });
    const sessionDir = path.join(tempDir("forge-codex-session-"), "parent");
    const r = await spawnAgent({
      adapter: "codex",
      binary: codexBinary(),
      agentType: "2",
      prompt: "PARENT TASK: delegate the child file",
      cwd: repo,
      sessionDir,
      env: codexEnv(server.url),
      maxDepth: 2,
      forgeCli: forgeCliFromSource(),
    });
    expect(r.exitCode, readFileSync(r.transcriptPath, "utf8")).toBe(0);
    expect(readFileSync(childFile, "utf8")).toBe("written by the sub-agent\n");
    const child = JSON.parse(readFileSync(path.join(sessionDir, "child.json"), "utf8")) as Record<string, unknown>;
    expect(child).toMatchObject({
      status: "success",
      exit_code: 0,
      depth: 2,
      max_depth: 2,
      trace_id: r.traceId,
      agent_type: "1",
      adapter: "codex",
    });
    expect(String(child.session_dir).startsWith(path.join(sessionDir, "sub"))).toBe(true);
    // A type 2 agent may spawn type 1 only.
    expect(JSON.parse(readFileSync(path.join(sessionDir, "refused.json"), "utf8"))).toMatchObject({
      exit_code: 2,
      error: { code: "spawn_not_allowed" },
    });
  }, 120_000);

  it("kills a session whose model stops streaming (idle), keeping the file it already wrote", async () => {
    const written = path.join(repo, "partial.txt");
    server = await startResponsesServer({
      script: [
        { text: "Writing.", toolCalls: [codexTools.addFile(written, "partial work\n")] },
        { text: "never finished", stall: true },
      ],
    });
    const events: ProgressEvent[] = [];
    // Long enough for the CLI to start and write on a busy machine; a stall is still told apart from slowness.
    const idleMs = 10_000;
    const r = await spawnAgent({
      adapter: "codex",
      binary: codexBinary(),
      agentType: "1",
      prompt: "Write partial.txt",
      cwd: repo,
      sessionDir: path.join(tempDir(), "s"),
      env: codexEnv(server.url),
      idleTimeoutMs: idleMs,
      timeoutMs: 60_000,
      forgeCli: false,
      onProgress: (e) => events.push({ ...e, at: new Date().toISOString() }),
    });
    expect(r).toMatchObject({ exitCode: 21, status: "timeout", timedOut: "idle", error: { code: "idle_timeout" } });
    expect(readFileSync(written, "utf8")).toBe("partial work\n");
    expect(server.turns().map((t) => t.turn)).toEqual([0, 1]);
    const lastOutput = Date.parse(events.filter((e) => e.kind !== "exit").at(-1)!.at);
    expect(Date.parse(r.finishedAt) - lastOutput).toBeGreaterThanOrEqual(idleMs - 100);
  }, 60_000);

  it("backs off when the model answers 429 past Codex's own retries, and succeeds on the next run", async () => {
    server = await startResponsesServer({
      script: [{ toolCalls: [codexTools.exec("echo after-the-limit > done.txt")] }, { text: "Done after the limit.\nFORGE_EXIT=0" }],
      errors: [{ status: 429, count: 1, message: "Rate limit reached for requests. Please try again in 1s." }],
    });
    const waits: number[] = [];
    const r = await spawnAgent({
      adapter: "codex",
      binary: codexBinary(),
      agentType: "1",
      prompt: "Write done.txt",
      cwd: repo,
      sessionDir: path.join(tempDir(), "s"),
      // No retries inside Codex (request_max_retries = 0): its run ends at the first 429.
      env: codexEnv(server.url),
      deadline: Date.now() + 3_600_000,
      forgeCli: false,
      random: () => 0,
      sleep: async (ms) => void waits.push(ms),
    });
    expect(r, readFileSync(r.transcriptPath, "utf8")).toMatchObject({
      exitCode: 0,
      rateLimitRetries: 1,
      result: "Done after the limit.\nFORGE_EXIT=0",
    });
    expect(waits).toHaveLength(1);
    expect(readFileSync(path.join(repo, "done.txt"), "utf8")).toBe("after-the-limit\n");
    expect(server.turns().map((t) => t.status)).toEqual([429, 200, 200]);
    // The first run's failure is in its transcript as Codex reported it.
    expect(readFileSync(r.transcriptPath, "utf8")).toMatch(/429 Too Many Requests/);
  }, 60_000);
});
