/**
 * A revision of `forge demo --agent claude` with the real Claude Code CLI, offline, against the
 * scripted model server answering with the demo's script (src/demo/claude-script.ts):
 * the stage prompt carries a failing required check naming a work-in-progress marker and a review
 * comment, as the Forge action builds them; afterwards, on disk, the marker is gone, the note is at
 * the commented line, the answers file answers the comment and the walkthrough says what changed.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runStages } from "../../src/agent/stages/index.js";
import type { ProgressEvent } from "../../src/agent/types.js";
import { offlineClaudeEnv } from "../../src/fake-agents/claude-code.js";
import { claudeBinary } from "../helpers/claude-code.js";
import { startModelServer } from "../../src/fake-agents/model-server.js";
import { parseScriptedTask } from "../../src/fake-agents/scripted-agent.js";
import { demoClaudeScript } from "../../src/demo/claude-script.js";
import { revisionNote, WIP_MARKER_CONTENT } from "../../src/demo/demo-agent.js";
import { REVIEW } from "../../src/demo/review.js";
import { demoTask, removeTempDirs, revisionContext, tmp, writeFiles } from "./revision-prompt.js";

afterAll(removeTempDirs);

describe("forge demo --agent claude: a revision with the real Claude Code CLI", () => {
  it("deletes the marker the failing check names, answers the review comment at its line, writes the answers and the walkthrough", async () => {
    // The PR's head: pad's files as its first attempt wrote them, and a marker left behind.
    const repo = tmp("forge-claude-revision-repo-");
    const files: Record<string, string> = {
      ...Object.fromEntries(parseScriptedTask(demoTask("pad")).files),
      "src/pad.wip": WIP_MARKER_CONTENT,
    };
    writeFiles(repo, files);
    const git = (...args: string[]) => execFileSync("git", ["-C", repo, "-c", "user.name=T", "-c", "user.email=t@example.com", ...args]);
    execFileSync("git", ["init", "-q", "-b", "forge/textkit-1/pad/1", repo]);
    git("add", "-A");
    git("commit", "-q", "-m", "pad, attempt 1");

    const sessionDir = path.join(tmp("forge-claude-revision-session-"), "session");
    const comment = { reviewId: 41, id: 77, path: REVIEW.path, line: REVIEW.line, body: REVIEW.comment };
    const { task, answersFile } = await revisionContext({ taskId: "pad", iteration: 1, markers: ["src/pad.wip"], comment }, sessionDir);
    const server = await startModelServer({ script: demoClaudeScript(12) });
    const home = tmp("forge-claude-revision-home-");
    const events: ProgressEvent[] = [];
    const t0 = performance.now();
    try {
      const out = await runStages({
        agentType: "1",
        stages: ["single"],
        taskContext: task,
        workdir: repo,
        sessionDir,
        spawn: {
          adapter: "claude",
          binary: claudeBinary(),
          env: offlineClaudeEnv(server.url, home),
          maxTurns: 12,
          idleTimeoutMs: 60_000,
          forgeCli: false,
        },
        onProgress: (e) => events.push(e),
      });
      expect(out.exitCode, JSON.stringify(out.manifest, null, 2)).toBe(0);

      // The CLI's own tools did it, as its stream reports them: Bash rm, Read, Edit, then two Writes.
      expect(events.filter((e) => e.kind === "tool_use").map((e) => e.tool)).toEqual(["Bash", "Read", "Edit", "Write", "Write"]);

      expect(existsSync(path.join(repo, "src/pad.wip"))).toBe(false);
      const before = files[REVIEW.path]!.split("\n");
      const after = readFileSync(path.join(repo, REVIEW.path), "utf8").split("\n");
      expect(after[REVIEW.line - 1]).toBe(revisionNote(REVIEW.path, 1, 77));
      expect([...after.slice(0, REVIEW.line - 1), ...after.slice(REVIEW.line)]).toEqual(before);
      expect(JSON.parse(readFileSync(answersFile, "utf8"))).toEqual([
        { comment: 77, answer: `Done in revision 1: a note at \`${REVIEW.path}:${REVIEW.line}\`.` },
      ]);
      const walkthrough = readFileSync(out.walkthroughPath!, "utf8");
      expect(walkthrough).toMatch(/^files_changed:\n {2}- path: "src\/pad\.wip"\n.*\n {2}- path: "src\/pad\.js"$/m);
      expect(walkthrough).toContain("Revision 1 of pad: changed src/pad.wip, src/pad.js.");
      // What git sees: the marker deleted, pad.js modified, nothing else.
      const status = execFileSync("git", ["-C", repo, "status", "--porcelain"], { encoding: "utf8" });
      expect(status.split("\n").filter(Boolean).sort()).toEqual([" D src/pad.wip", " M src/pad.js"]);
    } finally {
      await server.close();
    }
    console.log(`real Claude Code, demo revision: ${(performance.now() - t0).toFixed(0)} ms`);
  }, 90_000);
});
