// Layer 2's refinery with the fake command agent: it merges its upstreams (a sub-agent resolving a
// conflict), runs the tests, fixes them in the sentinel loop and writes its walkthrough.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import matter from "gray-matter";
import { afterEach, describe, expect, it } from "vitest";
import { runStages } from "../../src/agent/stages/index.js";
import { cleanupTempDirs, fakeWorld, type FakeWorld } from "./helpers.js";
import { git, options, task } from "./stages-helpers.js";

afterEach(cleanupTempDirs);

describe("refinery", () => {
  function upstream(w: FakeWorld) {
    git(w.repo, "checkout", "-q", "-b", "forge/r1/ref/1");
    writeFileSync(path.join(w.repo, "shared.txt"), "base\n");
    writeFileSync(path.join(w.repo, "test.sh"), "grep -q fixed shared.txt\n");
    git(w.repo, "add", "-A");
    git(w.repo, "commit", "-q", "-m", "base");
    for (const [b, line] of [
      ["up-a", "from a"],
      ["up-b", "from b"],
    ] as const) {
      git(w.repo, "checkout", "-q", "-b", b, "forge/r1/ref/1");
      writeFileSync(path.join(w.repo, "shared.txt"), `base\n${line}\n`);
      git(w.repo, "commit", "-q", "-am", line);
    }
    git(w.repo, "checkout", "-q", "forge/r1/ref/1");
  }
  const ctx = {
    runId: "r1",
    taskId: "ref",
    attempt: 1,
    task,
    branch: "forge/r1/ref/1",
    mergeRefs: ["up-a", "up-b"],
    testCommand: "sh test.sh",
  };

  it("merges upstream (a sub-agent resolves the conflict), fails the tests, fixes them in the sentinel loop, and writes its walkthrough", async () => {
    const w = fakeWorld({}, { git: true });
    upstream(w);
    w.setPlan({
      "1:merge-resolve": { resolveConflicts: true },
      "sentinel-writer:*": { writeFromPrompt: { "Write the test specification to": "# Spec\n- shared.txt says fixed (blocking)\n" } },
      "sentinel-auditor:*": { writeFromPrompt: { "Write the audit report to": "Grade: FAIL\n- shared.txt lacks 'fixed'\n" } },
      "sentinel-consolidator:*": {
        writeFromPrompt: {
          "Write the fix list to":
            '{"fixes":[{"id":1,"severity":"blocking","file":"shared.txt","issue":"no fixed","suggested_fix":"add it"}]}',
        },
      },
      "refinery:fix-1": { write: { [path.join(w.repo, "shared.txt")]: "base\nfrom a\nfrom b\nfixed\n" } },
      "refinery:walkthrough": { walkthrough: true },
    });
    const out = await runStages(options(w, { agentType: "refinery", taskContext: ctx }));
    expect(out.exitCode, JSON.stringify(out.manifest, null, 2)).toBe(0);
    expect(out.manifest.stages.map((s) => [s.name, s.status])).toEqual([
      ["merge", "success"],
      ["test", "success"],
      ["fix", "success"],
      ["walkthrough", "success"],
    ]);
    expect(git(w.repo, "log", "--merges", "--format=%s").split("\n")).toEqual([
      "Merge up-b into forge/r1/ref/1",
      "Merge up-a into forge/r1/ref/1",
    ]);
    expect(readFileSync(path.join(w.repo, "shared.txt"), "utf8")).toBe("base\nfrom a\nfrom b\nfixed\n");
    const sentinel = path.join(w.dir, "session", "sentinel");
    expect(readFileSync(path.join(sentinel, "grade.txt"), "utf8")).toBe("PASS\n");
    expect(JSON.parse(readFileSync(path.join(sentinel, "summary.json"), "utf8"))).toEqual({
      cycles: 2,
      grade: "PASS",
      blocking_counts: [1, 0],
    });
    expect(JSON.parse(readFileSync(path.join(sentinel, "cycle-1", "verification-results.json"), "utf8"))).toMatchObject({
      overall: "FAIL",
      blocking_count: 1,
    });
    expect(existsSync(path.join(sentinel, "cycle-1", "fix-list.json"))).toBe(true);
    expect(w.calls().map((c) => `${c.kind}:${c.name}`)).toEqual([
      "1:merge-resolve",
      "sentinel-writer:sentinel-writer",
      "sentinel-auditor:sentinel-auditor",
      "sentinel-consolidator:sentinel-consolidator",
      "refinery:fix-1",
      "refinery:walkthrough",
    ]);
  });

  it("fixes in at most three cycles, the last one judged by a final retest", async () => {
    const w = fakeWorld({}, { git: true });
    git(w.repo, "commit", "-q", "--allow-empty", "-m", "base");
    writeFileSync(path.join(w.repo, "count"), "0\n");
    // Each fix adds one line; the tests pass once there are three. The fix lists shrink: progress.
    const list = (n: number) => ({
      writeFromPrompt: {
        "Write the fix list to": JSON.stringify({
          fixes: Array.from({ length: n }, (_, i) => ({
            id: i + 1,
            severity: "blocking",
            file: "count",
            issue: "short",
            suggested_fix: "add a line",
          })),
        }),
      },
    });
    w.setPlan({
      "sentinel-auditor:*": { writeFromPrompt: { "Write the audit report to": "Grade: FAIL\n" } },
      "sentinel-consolidator:*": [list(3), list(2), list(1)],
      "refinery:fix-1": { write: { [path.join(w.repo, "count")]: "1\n" } },
      "refinery:fix-2": { write: { [path.join(w.repo, "count")]: "1\n2\n" } },
      "refinery:fix-3": { write: { [path.join(w.repo, "count")]: "1\n2\n3\n" } },
      "refinery:walkthrough": { walkthrough: true },
    });
    const testCommand = 'n=$(grep -c . count); [ "$n" -ge 3 ] || { echo "missing $((3 - n))"; exit 1; }';
    const out = await runStages(options(w, { agentType: "refinery", taskContext: { ...ctx, mergeRefs: [], testCommand } }));
    expect(out.exitCode, JSON.stringify(out.manifest, null, 2)).toBe(0);
    expect(
      w
        .calls()
        .filter((c) => String(c.name).startsWith("fix-"))
        .map((c) => c.name),
    ).toEqual(["fix-1", "fix-2", "fix-3"]);
    const sentinel = path.join(w.dir, "session", "sentinel");
    expect(JSON.parse(readFileSync(path.join(sentinel, "summary.json"), "utf8"))).toMatchObject({ cycles: 3, grade: "PASS" });
    expect(JSON.parse(readFileSync(path.join(sentinel, "final", "verification-results.json"), "utf8"))).toMatchObject({ overall: "PASS" });
  });

  it("skips the fix stage when the tests pass, and raises a Change Request (11) when they never do", async () => {
    const pass = fakeWorld({ "refinery:walkthrough": { walkthrough: true } }, { git: true });
    git(pass.repo, "commit", "-q", "--allow-empty", "-m", "base");
    // The test command runs the repository's code: no token or key reaches it.
    const testCommand = 'test -z "$GITHUB_TOKEN$ANTHROPIC_API_KEY" && test -n "$FORGE_TRACE_ID"';
    const spawn = { ...options(pass).spawn, env: { PATH: process.env.PATH, GITHUB_TOKEN: "ghs_x", ANTHROPIC_API_KEY: "sk-ant-x" } };
    const ok = await runStages(options(pass, { agentType: "refinery", spawn, taskContext: { ...ctx, mergeRefs: [], testCommand } }));
    expect(ok.manifest.stages.map((s) => [s.name, s.status])).toEqual([
      ["merge", "success"],
      ["test", "success"],
      ["fix", "skipped"],
      ["walkthrough", "success"],
    ]);

    const never = fakeWorld({ "sentinel-auditor:*": { writeFromPrompt: { "Write the audit report to": "Grade: FAIL\n" } } }, { git: true });
    git(never.repo, "commit", "-q", "--allow-empty", "-m", "base");
    const out = await runStages(options(never, { agentType: "refinery", taskContext: { ...ctx, mergeRefs: [], testCommand: "false" } }));
    expect(out.exitCode).toBe(11);
    expect(out.changeRequestPath).toBeDefined();
    const cr = matter(readFileSync(out.changeRequestPath!, "utf8"));
    expect(cr.data).toMatchObject({ emitted_by: "ref", suggested_action: "AMEND", priority: "HIGH", affected_tasks: ["ref"] });
    expect(cr.content).toContain("## Impact Assessment");
    // Three cycles at most, and the loop stops early when nothing improves.
    const fixes = never.calls().filter((c) => String(c.name).startsWith("fix-"));
    expect(fixes.length).toBeLessThanOrEqual(2);
  });
});
