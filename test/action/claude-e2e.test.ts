// The whole job with the real Claude Code CLI as the agent (src/agent's claude adapter through
// runStages), offline against the scripted model server: real Write tool calls change the checkout
// and write the walkthrough; the pipeline commits, records, pushes and renders the PR.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createStagesRunner } from "../../action/src/stages-runner.js";
import { Masker } from "../../src/agent/secrets.js";
import { attemptDir } from "../../src/core/layout.js";
import { agentResultSchema } from "../../src/core/schemas/agent-result.js";
import { offlineClaudeEnv } from "../../src/fake-agents/claude-code.js";
import { claudeBinary } from "../helpers/claude-code.js";
import { startModelServer, type ModelServer, type ScriptedTurn, type TurnRequest } from "../../src/fake-agents/model-server.js";
import { makeWorld, RUN, sh, testConfig, type World } from "./world.js";
import { runJob } from "./job.js";

let world: World | undefined;
let server: ModelServer | undefined;
let home: string | undefined;
afterEach(async () => {
  await server?.close();
  world?.cleanup();
  if (home) rmSync(home, { recursive: true, force: true });
});

const firstUserText = (req: TurnRequest) => {
  const first = req.body.messages?.[0]?.content;
  return typeof first === "string" ? first : ((first ?? []) as Array<{ text?: string }>).map((b) => b.text ?? "").join("\n");
};

describe("the job with the real Claude Code CLI", () => {
  it("writes files through tool calls, ends with a valid walkthrough, and the PR shows it", async () => {
    const w = (world = makeWorld({ files: { ".forge/stages.yml": '"1": [single]\n' } }));
    home = mkdtempSync(path.join(tmpdir(), "forge-claude-home-"));
    const script = (req: TurnRequest): ScriptedTurn => {
      const walkthroughPath = /- Walkthrough: (\S+)/.exec(firstUserText(req))?.[1];
      if (req.turn === 0)
        return {
          text: "Writing the output.",
          toolCalls: [{ name: "Write", input: { file_path: path.join(w.workspace, "src/out.txt"), content: "hello from claude\n" } }],
        };
      if (req.turn === 1 && walkthroughPath) {
        const content =
          "---\nstatus: completed\nconfidence: 0.8\nfiles_changed:\n  - path: src/out.txt\n    reason: the output the task asks for\ntests:\n  - name: out.exists\n    result: pass\nrisks: []\nfollowups: []\n---\n\n## Summary\n\nWrote src/out.txt.\n\n## Approach\n\nOne Write.\n\n## Issues Encountered\n\nNone.\n\n## Testing\n\nChecked the file.\n";
        return { toolCalls: [{ name: "Write", input: { file_path: walkthroughPath, content } }] };
      }
      return { text: "Done.\nFORGE_EXIT=0" };
    };
    server = await startModelServer({ script: [script, script, script] });
    const agent = createStagesRunner({
      adapter: "claude",
      binary: claudeBinary(),
      maxTurns: 10,
      maxDepth: 3,
      idleTimeoutMs: 60_000,
      timeoutMs: 120_000,
      env: { ...offlineClaudeEnv(server.url, home), GITHUB_TOKEN: "ghs_mustNotReachTheAgent0123456789" },
      extraEnv: {},
      masker: new Masker(),
    });
    const report = await runJob(w, agent, { config: testConfig({ heartbeat_interval_seconds: 5, stale_threshold_seconds: 30 }) });
    if (report.kind !== "attempt") throw new Error("not an attempt");
    expect(report.exitCode, report.result.error).toBe(0);
    expect(w.show(report.headSha, "src/out.txt")).toBe("hello from claude\n");
    const rec = attemptDir(RUN, "t1", 1);
    const result = agentResultSchema.parse(JSON.parse(w.show(report.headSha, `${rec}/result.json`)!));
    expect(result).toMatchObject({
      agent: "claude",
      head_sha: report.workSha,
      walkthrough: {
        status: "completed",
        files_changed: [{ path: "src/out.txt", reason: "the output the task asks for" }],
        agent: "claude",
      },
    });
    expect(w.github.pulls[0]!.body).toContain("| `src/out.txt` | the output the task asks for |");
    expect(sh(w.origin, ["log", "-1", "--format=%(trailers:key=Forge-Agent,valueonly)", report.headSha])).toBe("claude");
    // The stage manifest of the agent layer sits at the top of the record.
    expect(JSON.parse(w.show(report.headSha, `${rec}/manifest.json`)!)).toMatchObject({
      agent_type: "1",
      stages: [{ name: "single", status: "success" }],
    });
    // The job token never reached the model (the CLI's requests carry its whole environment description).
    expect(JSON.stringify(server.requests)).not.toContain("ghs_mustNotReachTheAgent");
  }, 120_000);
});
