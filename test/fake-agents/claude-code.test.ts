// The real Claude Code CLI, offline, against the scripted model server: it must really edit files
// through its tools and end successfully.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { claudeTools, startModelServer, type ModelServer } from "../../src/fake-agents/model-server.js";
import { claudeBinary, runClaudeCode } from "../helpers/claude-code.js";
import { runJob } from "../../src/local-github/runner/executor.js";
import { baseContext } from "../local-github/runner/test-helpers.js";

let repo: string;
let server: ModelServer | undefined;
beforeEach(() => {
  repo = mkdtempSync(path.join(tmpdir(), "forge-claude-repo-"));
  execFileSync("git", ["init", "-q", repo]);
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  rmSync(repo, { recursive: true, force: true });
});

function toolResults(events: Array<Record<string, unknown>>): Array<{ content: unknown; is_error?: boolean }> {
  return events
    .filter((e) => e.type === "user")
    .flatMap((e) => ((e.message as { content: unknown[] }).content ?? []) as Array<Record<string, unknown>>)
    .filter((b) => b.type === "tool_result") as Array<{ content: unknown; is_error?: boolean }>;
}

// A native CLI starting up: allow for a busy machine.
describe("Claude Code CLI against the scripted model server", { timeout: 60_000 }, () => {
  it("writes, edits and runs commands through real tool calls, and ends with success", async () => {
    const file = path.join(repo, "src", "greet.ts");
    server = await startModelServer({
      // One 429 first: the CLI must honour retry-after and carry on.
      errors: [{ status: 429, retryAfter: 0 }],
      script: [
        {
          text: "I'll create the module.",
          toolCalls: [{ name: "Write", input: { file_path: file, content: 'export const greet = () => "hello";\n' } }],
        },
        { toolCalls: [{ name: "Edit", input: { file_path: file, old_string: '"hello"', new_string: '"hello from forge"' } }] },
        {
          toolCalls: [
            { name: "Bash", input: { command: "wc -l src/greet.ts > lines.txt && git status --porcelain", description: "Count lines" } },
          ],
        },
        (req) => ({ text: `Done. Last tool said: ${JSON.stringify(req.toolResults[0]?.content)}` }),
      ],
    });
    const run = await runClaudeCode({ cwd: repo, prompt: "Create src/greet.ts exporting greet()", baseUrl: server.url });

    expect(run.exitCode, run.stderr).toBe(0);
    // The files are really there, written by the CLI's own tools.
    expect(readFileSync(file, "utf8")).toBe('export const greet = () => "hello from forge";\n');
    expect(readFileSync(path.join(repo, "lines.txt"), "utf8")).toMatch(/^1 src\/greet.ts/);
    // Every tool call succeeded and the run ended as a success.
    const results = toolResults(run.events);
    expect(results).toHaveLength(3);
    expect(results.every((r) => r.is_error !== true)).toBe(true);
    expect(run.result).toMatchObject({ type: "result", subtype: "success", is_error: false, num_turns: 4 });
    expect(String(run.result!.result)).toContain("?? src/");
    // What the CLI sent.
    const turns = server.turns();
    expect(turns.map((t) => t.status)).toEqual([429, 200, 200, 200, 200]);
    expect(turns.every((t) => t.query === "?beta=true" && t.body?.stream === true)).toBe(true);
    expect(turns[1]!.headers["x-api-key"]).toBe("sk-ant-forge-sim-dummy");
    expect(turns[1]!.headers["anthropic-version"]).toBe("2023-06-01");
    expect(String(turns[1]!.headers["user-agent"])).toMatch(/^claude-cli\//);
    expect(turns[1]!.body?.tools?.map((t) => t.name)).toEqual(expect.arrayContaining(["Write", "Edit", "Bash", "Read"]));
    expect(typeof turns[1]!.body?.model).toBe("string");
    expect(server.exhausted()).toBe(false);
    console.log(`claude CLI run: ${run.durationMs.toFixed(0)} ms, model ${String(turns[1]!.body?.model)}`);
  });

  it("reports a persistent 429 as an error result and exit code 1", async () => {
    server = await startModelServer({
      script: [{ text: "never reached" }],
      errors: [{ status: 429, retryAfter: 0, count: 100, message: "usage limit reached, resets at 3pm (America/New_York)" }],
    });
    const run = await runClaudeCode({ cwd: repo, prompt: "anything", baseUrl: server.url, env: { CLAUDE_CODE_MAX_RETRIES: "1" } });
    expect(run.exitCode).toBe(1);
    expect(run.result).toMatchObject({ type: "result", is_error: true, api_error_status: 429 });
    expect(String(run.result!.result)).toContain("usage limit reached, resets at 3pm (America/New_York)");
    expect(existsSync(path.join(repo, "src"))).toBe(false);
  });

  it("runs as a workflow step in the sim runner (CI=true, GITHUB_ACTIONS=true) and edits the workspace", async () => {
    const workspace = path.join(repo, "ws");
    server = await startModelServer({
      script: [{ toolCalls: [claudeTools.write(path.join(workspace, "NOTES.md"), "# Notes\n")] }, { text: "Wrote NOTES.md." }],
    });
    const home = mkdtempSync(path.join(tmpdir(), "forge-claude-home-"));
    const wf = `on:
  workflow_dispatch:
    inputs:
      prompt: { required: true }
jobs:
  agent:
    runs-on: ubuntu-latest
    steps:
      - id: claude
        env:
          ANTHROPIC_BASE_URL: \${{ vars.ANTHROPIC_BASE_URL }}
          ANTHROPIC_API_KEY: \${{ secrets.ANTHROPIC_API_KEY }}
          DISABLE_TELEMETRY: "1"
          DISABLE_AUTOUPDATER: "1"
          DISABLE_ERROR_REPORTING: "1"
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1"
        run: |
          "$CLAUDE_BIN" -p "\${{ inputs.prompt }}" --output-format stream-json --verbose --allowedTools Write,Edit,Bash --max-turns 5 > "$RUNNER_TEMP/claude.jsonl"
          tail -n 1 "$RUNNER_TEMP/claude.jsonl" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const r=JSON.parse(s);require("fs").appendFileSync(process.env.GITHUB_OUTPUT,"subtype="+r.subtype+"\\n")})'
`;
    const r = await runJob({
      workflowText: wf,
      inputs: { prompt: "Write NOTES.md" },
      context: baseContext({ vars: { ANTHROPIC_BASE_URL: server.url }, secrets: { ANTHROPIC_API_KEY: "sk-ant-forge-sim-dummy" } }),
      workspace,
      env: { PATH: process.env.PATH ?? "", HOME: home, CLAUDE_BIN: claudeBinary() },
    });
    rmSync(home, { recursive: true, force: true });
    expect(r.conclusion, r.steps[0]!.log.join("\n")).toBe("success");
    expect(r.steps[0]!.outputs.subtype).toBe("success");
    expect(readFileSync(path.join(workspace, "NOTES.md"), "utf8")).toBe("# Notes\n");
    expect(server.turns().map((t) => t.status)).toEqual([200, 200]);
  });
});
