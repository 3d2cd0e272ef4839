// What the task sentinel costs per task (docs/runner.md#the-task-sentinel): a type 1 task run by the
// real Claude Code CLI against the scripted model server (src/fake-agents/), offline, once with the
// sentinel passing the work and once with it failing the first check; per stage: sessions, model
// requests (turns), the tokens the server counted and the time.
//   node --import tsx bench/sentinel.bench.ts
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { runStages } from "../src/agent/stages/index.js";
import { demoClaudeScript } from "../src/demo/claude-script.js";
import { offlineClaudeEnv } from "../src/fake-agents/claude-code.js";
import { startModelServer } from "../src/fake-agents/model-server.js";

const claude = path.join(
  path.dirname(createRequire(import.meta.url).resolve("@anthropic-ai/claude-code/package.json")),
  "bin",
  "claude.exe",
);

const task = (grades: string) => `---
id: t1
title: Greeting
type: 1
acceptance_criteria:
  - greet.txt says hello
estimated_complexity: small
---

## Description

Write greet.txt.

\`\`\`\`txt file=greet.txt
hello
\`\`\`\`

\`\`\`forge-scripted-agent
sentinel: { grades: [${grades}], finding: "greet.txt must say hello, world", fix_files: { greet.txt: "hello, world\\n" } }
\`\`\`
`;

/** Tokens the server counted for a request: its messages, system prompt and tools in, the reply out (as its usage says). */
const size = (x: unknown) => Math.ceil(JSON.stringify(x ?? "").length / 4);

async function measure(label: string, grades: string): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), "forge-sentinel-bench-"));
  const repo = path.join(dir, "repo");
  execFileSync("git", ["init", "-q", "-b", "forge/r1/t1/1", repo]);
  execFileSync("git", ["-C", repo, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "base"]);
  const server = await startModelServer({ script: demoClaudeScript(40) });
  try {
    const out = await runStages({
      agentType: "1",
      taskContext: { runId: "r1", taskId: "t1", attempt: 1, task: task(grades), testCommand: "grep -q hello greet.txt" },
      workdir: repo,
      sessionDir: path.join(dir, "session"),
      spawn: { adapter: "claude", binary: claude, env: offlineClaudeEnv(server.url, dir), forgeCli: false, maxTurns: 20 },
      sentinel: { enabled: true },
    });
    const byStage = new Map<string, { requests: number; input: number }>();
    for (const r of server.requests) {
      const body = r.body as { messages?: Array<{ content: unknown }>; system?: unknown; tools?: unknown } | undefined;
      if (r.kind !== "main" || !body?.messages) continue;
      const first = JSON.stringify(body.messages[0]?.content ?? "");
      const stage = /Stage: \*\*([a-z-]+)\*\*/.exec(first)?.[1] ?? "other";
      const s = byStage.get(stage) ?? { requests: 0, input: 0 };
      s.requests++;
      s.input += size(body.messages) + size(body.system) + size(body.tools);
      byStage.set(stage, s);
    }
    console.log(`\n${label}: exit ${out.exitCode}, sentinel ${JSON.stringify(out.sentinel)}`);
    for (const st of out.manifest.stages)
      console.log(`  stage ${st.name.padEnd(12)} sessions ${st.attempts}  ${(st.duration_ms / 1000).toFixed(1)} s`);
    for (const [stage, s] of byStage) console.log(`  model ${stage.padEnd(13)} requests ${s.requests}  input tokens ≈ ${s.input}`);
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await measure("sentinel passes the work", "PASS");
await measure("sentinel fails the first check", "FAIL, PASS");
