// The progress notes of an attempt (docs/runner.md#progress-notes), with the fake command agent: every
// stage's session gets the same file and reads what the stages before it wrote; the walkthrough
// stage is told to write Approach and Issues Encountered from them; a resumed attempt starts with the
// notes of the attempt it continues, carried in that attempt's record.
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { carriedNotes, MAX_CARRIED_NOTES_CHARS } from "../../action/src/task/carried-session.js";
import { runStages } from "../../src/agent/stages/index.js";
import { cleanupTempDirs, fakeWorld, tempDir } from "./helpers.js";
import { options } from "./stages-helpers.js";

afterEach(cleanupTempDirs);

const prompt = (dir: string, stage: string) => readFileSync(path.join(dir, "session", "stages", stage, "prompt.md"), "utf8");

describe("progress notes", () => {
  it("are one file the stages share: each reads what the earlier ones wrote", async () => {
    const w = fakeWorld({
      implement: { note: "Approach: a map keyed by id. Issue: the old cache leaked; fixed." },
      verify: { note: "Issue: lint failed on an unused import; removed." },
      walkthrough: { walkthrough: true },
    });
    const out = await runStages(options(w));
    expect(out.exitCode, out.error).toBe(0);
    const file = path.join(w.dir, "session", "progress-notes.md");
    const calls = w.calls();
    expect(calls.map((c) => c.notes)).toEqual([
      "# Progress notes — task t1, attempt 1\n",
      "# Progress notes — task t1, attempt 1\n\n## implement\n\nApproach: a map keyed by id. Issue: the old cache leaked; fixed.\n",
      expect.stringContaining("## verify\n\nIssue: lint failed on an unused import; removed.\n"),
    ]);
    expect(readFileSync(file, "utf8")).toBe(calls[2]!.notes);
    // Every stage is told where they are and what to write; the walkthrough to build its sections from them.
    for (const dir of ["01-implement", "02-verify", "03-walkthrough"])
      expect(prompt(w.dir, dir)).toContain(`## Progress notes\n\n${file} holds`);
    expect(prompt(w.dir, "01-implement")).toContain("append a section `## implement`");
    expect(prompt(w.dir, "03-walkthrough")).toMatch(/Approach and Issues Encountered from the progress notes/);
  });

  it("of the attempt a resumed one continues come first in its own", async () => {
    const w = fakeWorld({ verify: { note: "Verified." }, walkthrough: { walkthrough: true } });
    const out = await runStages(
      options(w, {
        taskContext: { runId: "r1", taskId: "t1", attempt: 2, task: "---\nid: t1\n---\n## Description\nDo T." },
        resume: { fromAttempt: 1, stage: "verify", notes: "# Progress notes — task t1, attempt 1\n\n## implement\n\nChose a map.\n" },
      }),
    );
    expect(out.exitCode, out.error).toBe(0);
    expect(w.calls()[0]!.notes).toBe(
      "# Progress notes — task t1, attempt 2\n\n## Inherited from attempt 1\n\n## implement\n\nChose a map.\n",
    );
    expect(readFileSync(path.join(w.dir, "session", "progress-notes.md"), "utf8")).toContain(
      "## implement\n\nChose a map.\n\n## verify\n\nVerified.\n",
    );
  });

  it("are carried from the earlier attempt's record: the end of a long file, never through a link", async () => {
    const ws = tempDir("forge-notes-ws-");
    const record = ".forge/runs/r1/t1/1";
    mkdirSync(path.join(ws, record, "agent"), { recursive: true });
    expect(await carriedNotes(ws, record)).toBeUndefined();
    writeFileSync(path.join(ws, record, "agent", "progress-notes.md"), "## implement\n\nChose a map.\n");
    expect(await carriedNotes(ws, record)).toBe("## implement\n\nChose a map.\n");
    writeFileSync(path.join(ws, record, "agent", "progress-notes.md"), `${"a".repeat(MAX_CARRIED_NOTES_CHARS)}THE END`);
    const long = await carriedNotes(ws, record);
    expect(long!.startsWith("[… the start cut …]\n")).toBe(true);
    expect(long!.endsWith("THE END")).toBe(true);

    const outside = path.join(tempDir("forge-notes-outside-"), "secret.txt");
    writeFileSync(outside, "not the agent's");
    const linked = ".forge/runs/r1/t1/2";
    mkdirSync(path.join(ws, linked, "agent"), { recursive: true });
    symlinkSync(outside, path.join(ws, linked, "agent", "progress-notes.md"));
    const warnings: string[] = [];
    expect(await carriedNotes(ws, linked, (m) => warnings.push(m))).toBeUndefined();
    expect(warnings.join()).toMatch(/progress-notes\.md/);
  });
});
