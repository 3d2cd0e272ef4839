// A refinery whose branch must keep a linear history (dispatch context `squash`,
// docs/executor.md#merging-under-the-repositorys-rules): the runner squashes each upstream at its
// verified head before the agent, the merge stage squashes the one that conflicts (a sub-agent
// resolves it), the agent's own merge commit is folded, and result.json records every squash — all
// pushed to a remote that refuses any merge commit, as GitHub does under the rule.
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { newAttempt } from "../../src/core/journal.js";
import { attemptDir } from "../../src/core/layout.js";
import type { AgentResult } from "../../src/core/schemas/agent-result.js";
import { agentWalkthrough, makeWorld, RUN, sh, testConfig, type World } from "./world.js";
import { recordedSquashes, squashUpstreams } from "../../action/src/task/squash.js";
import { runJob, stagesAgent } from "./job.js";

let world: World | undefined;
afterEach(() => world?.cleanup());

/** A commit on a branch of the bare repository (a clone, a commit, a push); returns its sha. */
function commitOn(w: World, branch: string, files: Record<string, string>, from = branch): string {
  const dir = path.join(w.dir, `edit-${Math.random().toString(36).slice(2)}`);
  sh(w.dir, ["clone", "--quiet", `--branch=${from}`, w.originUrl, dir]);
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), text);
  }
  sh(dir, ["add", "-A"]);
  sh(dir, ["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "--quiet", "-m", `edit ${branch}`]);
  sh(dir, ["push", "--quiet", "origin", `HEAD:refs/heads/${branch}`]);
  return sh(dir, ["rev-parse", "HEAD"]);
}

/** The remote refuses a push that brings a merge commit (GitHub's `required_linear_history`). */
function refuseMergeCommits(w: World): void {
  const hook = path.join(w.origin, "hooks", "pre-receive");
  writeFileSync(
    hook,
    [
      "#!/bin/sh",
      "while read old new ref; do",
      '  case "$new" in 0000000000000000000000000000000000000000) continue ;; esac',
      '  case "$old" in 0000000000000000000000000000000000000000) range="$new --not --all" ;; *) range="$old..$new" ;; esac',
      '  if [ -n "$(git rev-list --min-parents=2 --max-count=1 $range)" ]; then echo "error: This branch must not contain merge commits." >&2; exit 1; fi',
      "done",
      "",
    ].join("\n"),
  );
  chmodSync(hook, 0o755);
}

describe("a refinery on a branch that must keep a linear history", () => {
  it("squashes each upstream at its verified head, one commit each; the conflicted one in the merge stage; records them all", async () => {
    const w = makeWorld({
      tasks: [{ id: "a" }, { id: "b" }, { id: "r", type: "refinery", dependencies: ["a", "b"] }],
      taskId: "r",
      files: { ".forge/stages.yml": "refinery: [merge, single]\n", "shared.txt": "base\n" },
      journal: (j) => {
        Object.assign(j.tasks[0]!, { status: "MERGE_READY", attempts: 1, attempt: newAttempt("forge/r1/a/1", "2026-11-22T09:00:00.000Z") });
        Object.assign(j.tasks[1]!, { status: "MERGE_READY", attempts: 1, attempt: newAttempt("forge/r1/b/1", "2026-11-22T09:00:00.000Z") });
        Object.assign(j.tasks[2]!, {
          status: "RUNNING",
          attempts: 1,
          attempt: newAttempt("forge/r1/r/1", "2026-11-22T09:00:00.000Z"),
          blockers: 0,
        });
      },
    });
    world = w;
    const start = sh(w.origin, ["rev-parse", `refs/heads/${w.branch}`]);
    // a and b rewrite the same line; a adds a file. Their verified heads, then a push to a's branch after it was verified.
    const aHead = commitOn(w, "forge/r1/a/1", { "shared.txt": "from a\n", "a.txt": "a\n" }, "main");
    const bHead = commitOn(w, "forge/r1/b/1", { "shared.txt": "from b\n" }, "main");
    commitOn(w, "forge/r1/a/1", { "late.txt": "pushed after a was verified\n" });
    refuseMergeCommits(w);
    // The resolver keeps both lines; the agent merges a branch of its own (a merge commit the runner folds).
    const script = [
      `case "$FORGE_SPAWN_NAME" in`,
      `  merge-resolve) printf 'from a\\nfrom b\\n' > shared.txt ;;`,
      `  single)`,
      `    git -c user.name=x -c user.email=x@y checkout -q -b side && echo side > side.txt && git add side.txt && git -c user.name=x -c user.email=x@y commit -qm side`,
      `    git checkout -q - && git -c user.name=x -c user.email=x@y merge -q --no-ff --no-edit side`,
      `cat > "$FORGE_WALKTHROUGH_PATH" <<'WT'\n${agentWalkthrough({ files_changed: [] })}WT`,
      `  ;;`,
      `esac`,
    ].join("\n");
    const squash = [
      { branch: "forge/r1/a/1", head: aHead },
      { branch: "forge/r1/b/1", head: bHead },
    ];
    const report = await runJob(w, stagesAgent(script), {
      config: testConfig({ heartbeat_interval_seconds: 1, stale_threshold_seconds: 10 }),
      input: { taskId: "r", context: { squash } },
    });
    if (report.kind !== "attempt") throw new Error(report.kind);
    expect(report.exitCode, report.result.error).toBe(0);
    const tip = sh(w.origin, ["rev-parse", `refs/heads/${w.branch}`]);
    expect(sh(w.origin, ["rev-list", "--merges", `${start}..${tip}`])).toBe("");
    // Both tasks' work, the agent's, and nothing pushed to a's branch after it was verified.
    expect(w.show(w.branch, "shared.txt")).toBe("from a\nfrom b\n");
    expect(w.show(w.branch, "a.txt")).toBe("a\n");
    expect(w.show(w.branch, "side.txt")).toBe("side\n");
    expect(w.show(w.branch, "late.txt")).toBeUndefined();
    // One squash commit per upstream, a single parent each; the record names them, at the verified heads.
    const result = JSON.parse(w.show(w.branch, `${attemptDir(RUN, "r", 1)}/result.json`)!) as AgentResult;
    expect(result.squashed?.map((s) => [s.branch, s.head_sha])).toEqual(squash.map((s) => [s.branch, s.head]));
    for (const s of result.squashed ?? []) {
      expect(() => sh(w.origin, ["merge-base", "--is-ancestor", s.commit_sha, tip])).not.toThrow();
      expect(sh(w.origin, ["log", "-1", "--format=%P", s.commit_sha]).split(" ")).toHaveLength(1);
    }
    const subjects = sh(w.origin, ["log", "--format=%s", `${start}..${tip}`]).split("\n");
    expect(subjects.filter((s) => s.startsWith("forge(r): squash"))).toEqual(["forge(r): squash b", "forge(r): squash a"]);
    // The upstreams' commits are not in the history: their content is.
    expect(() => sh(w.origin, ["merge-base", "--is-ancestor", aHead, tip])).toThrow();
    // What the attempt changed is measured from the runner's squashes before the agent: a's file is the preparation's.
    const changed = result.walkthrough?.files_changed.map((f) => f.path) ?? [];
    expect(changed).toContain("side.txt");
    expect(changed).not.toContain("a.txt");
  });
});

describe("a revision of a refinery on a linear branch", () => {
  it("carries over the squashes its record commit lists instead of squashing again; a record not the runner's counts for nothing", async () => {
    const w = makeWorld({
      tasks: [{ id: "a" }, { id: "b" }, { id: "r", type: "refinery", dependencies: ["a", "b"] }],
      taskId: "r",
      files: { "shared.txt": "base\n" },
    });
    world = w;
    const aHead = commitOn(w, "forge/r1/a/1", { "shared.txt": "from a\n" }, "main");
    const bHead = commitOn(w, "forge/r1/b/1", { "b.txt": "b\n" }, "main");
    const squash = [
      { branch: "forge/r1/a/1", head: aHead },
      { branch: "forge/r1/b/1", head: bHead },
    ];
    const warnings: string[] = [];
    const first = await squashUpstreams(w.git, w.journal, "r", w.branch, squash, (m) => void warnings.push(m));
    expect(first.conflicted).toEqual([]);
    expect(first.records.map((r) => r.head)).toEqual([aHead, bHead]);
    // The refinery's work changes a's line; its record commit lists the squashes.
    const recordRel = attemptDir(RUN, "r", 1);
    const commitFiles = async (files: Record<string, string>, message: string) => {
      for (const [rel, text] of Object.entries(files)) {
        mkdirSync(path.dirname(path.join(w.workspace, rel)), { recursive: true });
        writeFileSync(path.join(w.workspace, rel), text);
      }
      await w.git.run(["add", "-A"]);
      return w.git.commit(message);
    };
    await commitFiles({ "shared.txt": "from a, refined\n" }, "forge(r): work");
    const result = { squashed: first.records.map((r) => ({ branch: r.branch, head_sha: r.head, commit_sha: r.commit })) };
    const record = await commitFiles(
      {
        [`${recordRel}/result.json`]: JSON.stringify({
          version: 1,
          run_id: RUN,
          task_id: "r",
          attempt: 1,
          exit_code: 0,
          branch: w.branch,
          started_at: "x",
          finished_at: "y",
          ...result,
        }),
      },
      `forge(r): record attempt 1 (exit 0: success)\n\nForge-Run: ${RUN}\nForge-Task: r\nForge-Attempt: 1\nForge-Agent: command\nForge-Exit: 0`,
    );
    const ids = { runId: RUN, taskId: "r", attempt: 1 };
    const previous = await recordedSquashes(w.git, record, recordRel, ids);
    expect(previous).toEqual(first.records);
    const again = await squashUpstreams(w.git, w.journal, "r", w.branch, squash, (m) => void warnings.push(m), previous);
    expect(again).toEqual({ records: first.records, conflicted: [] });
    expect(await w.git.head()).toBe(record);
    // Squashed again without the record, a's head would conflict with the refinery's own change.
    const blind = await squashUpstreams(w.git, w.journal, "r", w.branch, squash.slice(0, 1), (m) => void warnings.push(m));
    expect(blind.conflicted.map((c) => c.branch)).toEqual(["forge/r1/a/1"]);
    expect(await w.git.head()).toBe(record);
    // The same file in a commit that is not this attempt's record commit (another attempt's trailers, or none) is no record.
    expect(await recordedSquashes(w.git, record, recordRel, { ...ids, attempt: 2 })).toEqual([]);
    const agents = await commitFiles({ "note.txt": "x\n" }, "an agent's commit");
    expect(await recordedSquashes(w.git, agents, recordRel, ids)).toEqual([]);
    expect(warnings).toEqual([]);
  });
});
