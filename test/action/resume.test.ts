// The runner's checkpoints and a resumed attempt (docs/executor.md#resuming), through the action's
// real `main` and its stages runner with a command agent: attempt 1 stalls in its second stage and
// records a checkpoint after each stage and in result.json; attempt 2, dispatched as its resumption,
// runs on attempt 1's branch from the stage left pending, continues the agent's session, measures its
// work from where the branch started, and its walkthrough says it resumed and from where.
import { readdirSync, readFileSync } from "node:fs";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Git } from "../../action/src/git.js";
import type { JobReport } from "../../action/src/main.js";
import { newAttempt } from "../../src/core/journal.js";
import { attemptDir } from "../../src/core/layout.js";
import { checkpointSchema } from "../../src/core/schemas/checkpoint.js";
import { runJob, stagesAgent } from "./job.js";
import { agentWalkthrough, makeWorld, RUN, sh, testConfig, type World } from "./world.js";

let world: World | undefined;
afterEach(() => world?.cleanup());

const SESSION = "5a1f3c2e-0000-4000-8000-000000000001";

/**
 * The agent: each session logs its stage and the session it was asked to resume, and says its session
 * id as Claude Code does (a stream-json `system` init line). Attempt 1 writes src/one.txt in
 * `implement` and stalls in `verify` (exit 21); attempt 2 writes src/two.txt in `verify` and the
 * walkthrough in `walkthrough`.
 */
function agentScript(w: World, log: string): string {
  const walkthrough = agentWalkthrough({ files_changed: [] });
  return [
    `echo "$FORGE_ATTEMPT $FORGE_SPAWN_NAME resume=\${FORGE_RESUME_SESSION:-none}" >> ${log}`,
    `echo '{"type":"system","subtype":"init","session_id":"${SESSION}"}'`,
    'case "$FORGE_ATTEMPT:$FORGE_SPAWN_NAME" in',
    `  1:implement) mkdir -p src && echo one > src/one.txt && printf '\\n## implement\\n\\nWrote one.txt first.\\n' >> "$FORGE_NOTES_FILE" ;;`,
    "  1:verify) exit 21 ;;",
    "  2:verify) mkdir -p src && echo two > src/two.txt ;;",
    `  *:walkthrough) cat > "$FORGE_WALKTHROUGH_PATH" <<'WT'\n${walkthrough}WT\n ;;`,
    "esac",
  ].join("\n");
  void w;
}

function job(
  w: World,
  script: string,
  attempt: number,
  context: Record<string, unknown>,
  workspace = w.workspace,
  temp = w.temp,
  git = w.git,
) {
  return runJob(w, stagesAgent(script), {
    config: testConfig({ heartbeat_interval_seconds: 1, stale_threshold_seconds: 10 }),
    input: { taskId: "t1", attempt, context, workspace, tempDir: temp },
    deps: { git },
  });
}

function attemptOf(report: JobReport) {
  if (report.kind !== "attempt") throw new Error(report.kind);
  return report;
}

describe("checkpoints and a resumed attempt", () => {
  it("attempt 1 checkpoints each stage; attempt 2 resumes on its branch from the stage left pending, with its session", async () => {
    const w = (world = makeWorld());
    const log = path.join(w.dir, "sessions.log");
    const script = agentScript(w, log);
    const first = attemptOf(await job(w, script, 1, {}));
    expect(first.exitCode).toBe(21);

    // The checkpoint in result.json: what the App reads, at the head the record commit sits on.
    const record1 = first.headSha;
    const parent1 = sh(w.origin, ["rev-parse", `${record1}^`]);
    const cp = checkpointSchema.parse(first.result.checkpoint);
    expect(cp).toMatchObject({
      run_id: RUN,
      task_id: "t1",
      attempt: 1,
      completed_stages: [{ name: "implement", exit_code: 0 }],
      pending_stages: ["verify", "walkthrough"],
      depth_used: 0,
      depth_max: 3,
      agent_session: { adapter: "command", id: SESSION, stage: "verify" },
      head_sha: parent1,
    });
    // The session folder's checkpoints — one after each stage (`verify` stopped: still pending), one when
    // the agent ended — and its state, in the record.
    const dir = attemptDir(RUN, "t1", 1);
    const files = sh(w.origin, ["ls-tree", "-r", "--name-only", record1, `${dir}/checkpoints`]).split("\n");
    expect(files).toHaveLength(3);
    const afterImplement = checkpointSchema.parse(JSON.parse(w.show(record1, files[0]!)!));
    expect(afterImplement).toMatchObject({ completed_stages: [{ name: "implement" }], pending_stages: ["verify", "walkthrough"] });
    // The checkpoint after `implement` names the head pushed then, which holds src/one.txt.
    expect(w.show(afterImplement.head_sha, "src/one.txt")).toBe("one\n");
    expect(w.show(record1, `${dir}/.session-state`)).toMatch(/state: STOPPED\ncurrent_phase: 2\ntotal_phases: 3\n/);
    expect(w.show(record1, `${dir}/.session-state`)).toContain(`last_checkpoint: ${files[2]!.slice(dir.length + 1)}`);
    expect(checkpointSchema.parse(JSON.parse(w.show(record1, files[2]!)!))).toEqual(cp);

    // Attempt 2, dispatched as the App dispatches a resumption: on attempt 1's branch.
    const branch1 = w.branch;
    const j = structuredClone(w.journal);
    const t = j.tasks.find((x) => x.id === "t1")!;
    t.attempts = 2;
    t.attempt = {
      ...newAttempt(branch1, "2026-11-22T09:00:00Z"),
      resumed: { reason: "stale", fromAttempt: 1, head: record1, stage: "verify", depthUsed: 0 },
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
      reason: "stale",
      head: record1,
      stage: "verify",
      session: { adapter: "command", id: SESSION, stage: "verify" },
      depthUsed: 0,
    };
    const second = attemptOf(await job(w, script, 2, { resume }, workspace2, temp2, git2));
    expect(second.exitCode, second.result.error).toBe(0);
    expect(second.branch).toBe(branch1);

    // Only the stages left pending ran; the first of them continued the agent's session.
    expect(readFileSync(log, "utf8").trim().split("\n")).toEqual([
      "1 implement resume=none",
      "1 verify resume=none",
      `2 verify resume=${SESSION}`,
      "2 walkthrough resume=none",
    ]);
    // On the branch: attempt 2's commits on top of attempt 1's record; no branch of its own.
    expect(sh(w.origin, ["rev-parse", `refs/heads/${branch1}`])).toBe(second.headSha);
    expect(sh(w.origin, ["merge-base", "--is-ancestor", record1, second.headSha])).toBe("");
    expect(sh(w.origin, ["for-each-ref", "--format=%(refname)", `refs/heads/forge/${RUN}/t1/2`])).toBe("");
    // Its work is measured from where the branch started: attempt 1's file counts, no record folder does.
    const wt = second.result.walkthrough!;
    expect(wt.files_changed.map((f) => f.path).sort()).toEqual(["src/one.txt", "src/two.txt"]);
    // The manifest says which stages attempt 1 had done.
    const manifest = JSON.parse(w.show(second.headSha, `${attemptDir(RUN, "t1", 2)}/manifest.json`)!) as {
      stages: { name: string; status: string; done_by_attempt?: number }[];
    };
    expect(manifest.stages.map((s) => [s.name, s.status, s.done_by_attempt])).toEqual([
      ["implement", "skipped", 1],
      ["verify", "success", undefined],
      ["walkthrough", "success", undefined],
    ]);
    // The walkthrough (the PR's body) says it resumed, and from where.
    const walkthrough = w.show(second.headSha, `${attemptDir(RUN, "t1", 2)}/walkthrough.md`)!;
    expect(walkthrough).toContain(
      `## Resumed\n\nAttempt 2 continued the work of attempt 1, which stalled or ran out of time, on the same branch (\`${branch1}\`) and pull request, from its head \`${record1.slice(0, 12)}\`.`,
    );
    expect(walkthrough).toContain("It started at stage `verify`; `implement` was done by attempt 1 and not run again.");
    expect(walkthrough).toContain(`The agent's session \`${SESSION}\` was resumed.`);
    // Attempt 2's progress notes start with attempt 1's, carried in its record (docs/runner.md#progress-notes).
    expect(w.show(record1, `${dir}/agent/progress-notes.md`)).toBe(
      "# Progress notes — task t1, attempt 1\n\n## implement\n\nWrote one.txt first.\n",
    );
    expect(w.show(second.headSha, `${attemptDir(RUN, "t1", 2)}/agent/progress-notes.md`)).toBe(
      "# Progress notes — task t1, attempt 2\n\n## Inherited from attempt 1\n\n## implement\n\nWrote one.txt first.\n",
    );
    // Attempt 2 checkpointed each stage it ran, and its end.
    expect(readdirSync(path.join(temp2, "forge-session-t1-2", "checkpoints"))).toHaveLength(3);
    // Two whole jobs: about 25 s on a quiet machine, past the default 30 s when the cores are shared.
  }, 90_000);
});
