// A runner killed between stages (docs/executor.md#resuming), through the action's real `main` and its
// stages runner with a command agent: attempt 1's runner dies in its second stage, after the first
// stage's progress push — so no record, no result.json, only the checkpoint commit that push ended
// with. The App's reading of the branch head (src/app/branch-checkpoint.ts) and its checks
// (src/core/decide/resume.ts) accept it; attempt 2, dispatched as its resumption, starts at stage 2
// on the same branch from that commit, continues the agent's session and inherits its notes.
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Git } from "../../action/src/git.js";
import { readBranchCheckpoint } from "../../src/app/branch-checkpoint.js";
import { checkpointProblems } from "../../src/core/decide/resume.js";
import { newAttempt } from "../../src/core/journal.js";
import { attemptDir } from "../../src/core/layout.js";
import { runJob, stagesAgent } from "./job.js";
import { agentWalkthrough, makeWorld, RUN, sh, testConfig, type World } from "./world.js";

let world: World | undefined;
afterEach(() => world?.cleanup());

const SESSION = "5a1f3c2e-0000-4000-8000-000000000002";

/** Attempt 1 writes src/one.txt and a note in `implement`, then hangs in `verify` until its runner goes; attempt 2 finishes. */
function agentScript(log: string): string {
  return [
    `echo "$FORGE_ATTEMPT $FORGE_SPAWN_NAME resume=\${FORGE_RESUME_SESSION:-none}" >> ${log}`,
    `echo '{"type":"system","subtype":"init","session_id":"${SESSION}"}'`,
    'case "$FORGE_ATTEMPT:$FORGE_SPAWN_NAME" in',
    `  1:implement) mkdir -p src && echo one > src/one.txt && printf '\\n## implement\\n\\nWrote one.txt.\\n' >> "$FORGE_NOTES_FILE" ;;`,
    "  1:verify) sleep 120 ;;",
    "  2:verify) mkdir -p src && echo two > src/two.txt ;;",
    `  *:walkthrough) cat > "$FORGE_WALKTHROUGH_PATH" <<'WT'\n${agentWalkthrough({ files_changed: [] })}WT\n ;;`,
    "esac",
  ].join("\n");
}

/** The App's port, as far as reading a branch head goes, over the bare repository. */
function gitPort(w: World) {
  return {
    commit: async (sha: string) => ({
      sha,
      message: sh(w.origin, ["log", "-1", "--format=%B", sha]),
      parents: sh(w.origin, ["log", "-1", "--format=%P", sha]).split(" ").filter(Boolean),
    }),
    readFile: async (file: string, at: string) => {
      const content = w.show(at, file);
      return content === undefined ? null : { content, blobSha: sh(w.origin, ["rev-parse", `${at}:${file}`]) };
    },
  };
}

describe("a runner killed between stages", () => {
  it("leaves its checkpoint commit at the branch head; the retry resumes from it at stage 2 with the agent's session", async () => {
    const w = (world = makeWorld());
    const log = path.join(w.dir, "sessions.log");
    const script = agentScript(log);
    const config = testConfig({ heartbeat_interval_seconds: 1, stale_threshold_seconds: 30 });
    const branch1 = w.branch;
    const headOf = () => sh(w.origin, ["rev-parse", `refs/heads/${branch1}`]);
    const subjectOf = (sha: string) => sh(w.origin, ["log", "-1", "--format=%s", sha]);

    // Attempt 1, until its first stage's push lands; then its runner goes (the job is stopped and
    // the branch put back where the push left it: no later push of a dead runner ever lands).
    const stop = new AbortController();
    const first = runJob(w, stagesAgent(script), {
      config,
      input: { taskId: "t1", attempt: 1, context: {} },
      deps: { cancel: stop.signal },
    });
    // The runner goes once the checkpoint has landed and the agent hangs in `verify` (its line in the log).
    const inVerify = () => existsSync(log) && readFileSync(log, "utf8").includes("1 verify");
    let killedAt: string | undefined;
    for (let i = 0; i < 600 && !(killedAt && inVerify()); i++) {
      await new Promise((r) => setTimeout(r, 100));
      const head = headOf();
      if (subjectOf(head) === "forge(t1): checkpoint after stage implement") killedAt = head;
    }
    stop.abort();
    await first;
    expect(killedAt).toBeDefined();
    sh(w.origin, ["update-ref", `refs/heads/${branch1}`, killedAt!]);

    // The checkpoint commit: its parent is the stage's work, it adds only the record folder's files.
    const dir = attemptDir(RUN, "t1", 1);
    const work = sh(w.origin, ["rev-parse", `${killedAt}^`]);
    expect(subjectOf(work)).toBe("forge(t1): work after stage implement");
    expect(w.show(work, "src/one.txt")).toBe("one\n");
    expect(sh(w.origin, ["diff-tree", "--no-commit-id", "--name-only", "-r", killedAt!]).split("\n").sort()).toEqual([
      `${dir}/agent/progress-notes.md`,
      `${dir}/checkpoint.json`,
    ]);
    expect(w.show(killedAt!, `${dir}/result.json`)).toBeUndefined();

    // What the App reads there and checks, as it checks result.json's.
    const read = await readBranchCheckpoint(gitPort(w), { runId: RUN, taskId: "t1", attempt: 1 }, killedAt!);
    expect(read).toMatchObject({ checkpointSha: killedAt, pushedSha: work });
    const cp = read.checkpoint!;
    expect(cp).toMatchObject({
      attempt: 1,
      completed_stages: [{ name: "implement", exit_code: 0 }],
      pending_stages: ["verify", "walkthrough"],
      // The session of the stage that last ran: a resumed attempt continues it in the stage it starts at.
      agent_session: { adapter: "command", id: SESSION, stage: "implement" },
      head_sha: work,
    });
    expect(
      checkpointProblems(cp, { runId: RUN, taskId: "t1", attempt: 1, agentType: "1", maxDepth: 3, pushedSha: read.pushedSha }),
    ).toEqual([]);

    // Attempt 2, dispatched as the App dispatches the resumption (src/core/decide/dispatch.ts).
    const j = structuredClone(w.journal);
    const t = j.tasks.find((x) => x.id === "t1")!;
    t.attempts = 2;
    t.attempt = {
      ...newAttempt(branch1, "2026-11-22T09:00:00Z"),
      resumed: { reason: "lost", fromAttempt: 1, head: killedAt!, stage: "verify", depthUsed: 0 },
    };
    w.writeJournal(j);
    const workspace2 = path.join(w.dir, "work2");
    const temp2 = path.join(w.dir, "temp2");
    mkdirSync(temp2);
    sh(w.dir, ["clone", "--quiet", "--depth=1", `--branch=${branch1}`, w.originUrl, workspace2]);
    const git2 = new Git({
      dir: workspace2,
      remote: w.originUrl,
      identity: { name: "github-actions[bot]", email: "bot@example.com" },
      tempDir: temp2,
    });
    const resume = {
      fromAttempt: 1,
      reason: "lost" as const,
      head: killedAt,
      stage: cp.pending_stages[0],
      session: cp.agent_session,
      depthUsed: cp.depth_used,
    };
    const second = await runJob(w, stagesAgent(script), {
      config,
      input: { taskId: "t1", attempt: 2, context: { resume }, workspace: workspace2, tempDir: temp2 },
      deps: { git: git2 },
    });
    if (second.kind !== "attempt") throw new Error(second.kind);
    expect(second.exitCode, second.result.error).toBe(0);
    expect(second.branch).toBe(branch1);
    // `implement` ran once, in attempt 1; attempt 2 started at `verify`, continuing the agent's session.
    expect(readFileSync(log, "utf8").trim().split("\n")).toEqual([
      "1 implement resume=none",
      "1 verify resume=none",
      `2 verify resume=${SESSION}`,
      "2 walkthrough resume=none",
    ]);
    expect(sh(w.origin, ["merge-base", "--is-ancestor", killedAt!, second.headSha])).toBe("");
    expect(second.result.walkthrough!.files_changed.map((f) => f.path).sort()).toEqual(["src/one.txt", "src/two.txt"]);
    const walkthrough = w.show(second.headSha, `${attemptDir(RUN, "t1", 2)}/walkthrough.md`)!;
    expect(walkthrough).toContain("It started at stage `verify`; `implement` was done by attempt 1 and not run again.");
    expect(walkthrough).toContain(`The agent's session \`${SESSION}\` was resumed.`);
    // The notes attempt 1's checkpoint commit carried are attempt 2's start.
    expect(w.show(second.headSha, `${attemptDir(RUN, "t1", 2)}/agent/progress-notes.md`)).toContain(
      "## Inherited from attempt 1\n\n## implement\n\nWrote one.txt.\n",
    );
  }, 120_000);
});
