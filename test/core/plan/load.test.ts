import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadPlan, PlanNotFoundError, readPlanSource } from "../../../src/core/plan/load.js";
import { fieldLines, parseDagJson, parsePlan, parseSections, parseTaskFile } from "../../../src/core/plan/parse.js";
import { validatePlan } from "../../../src/core/plan/validate.js";
import { dagText, overlayText, taskText } from "./fixtures.js";

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), "forge-load-"));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

async function writeTree(root: string, files: Record<string, string>): Promise<string> {
  for (const [rel, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, rel)), { recursive: true });
    await writeFile(path.join(root, rel), text);
  }
  return root;
}

describe("loadPlan", () => {
  it("reads plan.md, specs (recursively), tasks, overlays and dag.json", async () => {
    const dir = await writeTree(path.join(tmp, "p1"), {
      "plan.md": "# P1\n",
      "specs/api.md": "# API\n",
      "specs/deep/more.md": "# More\n",
      "tasks/a.md": taskText({ id: "a" }),
      "tasks/b.md": taskText({ id: "b", deps: ["a"] }),
      "overlays/overlay-001.md": overlayText("overlay-001", ["b"], []),
      "dag.json": dagText("p1", [{ id: "a" }, { id: "b", deps: ["a"] }]),
      "notes.txt": "ignored: not part of the plan format\n",
    });
    const plan = await loadPlan(dir);
    expect(plan.planId).toBe("p1");
    expect(plan.hasPlanMd).toBe(true);
    expect(plan.specs).toEqual(["specs/api.md", "specs/deep/more.md"]);
    expect(plan.tasks.map((t) => t.data?.id)).toEqual(["a", "b"]);
    expect(plan.overlays.map((o) => o.data?.applied_at)).toEqual(["2026-11-21T09:00:00Z"]); // a string, not a Date
    expect(plan.dag.data?.nodes).toHaveLength(2);
    expect(validatePlan(plan)).toEqual([]);
  });

  it("lists folders inside tasks/ as unexpected and reports a missing dag.json and tasks/", async () => {
    const dir = await writeTree(path.join(tmp, "p2"), { "plan.md": "# P2\n", "overlays/readme.txt": "x" });
    expect(validatePlan(await loadPlan(dir)).map((p) => `${p.rule} ${p.file}`)).toEqual([
      "missing-file dag.json",
      "overlay-numbering overlays/readme.txt",
      "missing-file tasks/",
    ]);
    await writeTree(dir, { "tasks/sub/x.md": taskText({ id: "x" }) });
    const source = await readPlanSource(dir);
    expect([...source.dirs].sort()).toEqual(["overlays", "tasks", "tasks/sub"]);
    expect(validatePlan(parsePlan(source)).map((p) => `${p.rule} ${p.file}`)).toContain("unexpected-file tasks/sub");
  });

  it("reports a file that cannot be read instead of throwing", async () => {
    const dir = await writeTree(path.join(tmp, "p3"), {
      "plan.md": "# P3\n",
      "tasks/a.md": taskText({ id: "a" }),
      "dag.json": dagText("p3", [{ id: "a" }]),
    });
    await symlink(path.join(dir, "missing-target.md"), path.join(dir, "tasks", "ghost.md"));
    const problems = validatePlan(await loadPlan(dir));
    expect(problems).toEqual([{ file: "tasks/ghost.md", message: "cannot be read: ENOENT", rule: "unreadable-file" }]);
  });

  it("throws PlanNotFoundError only for a missing folder or a file", async () => {
    await expect(loadPlan(path.join(tmp, "nope"))).rejects.toBeInstanceOf(PlanNotFoundError);
    await writeFile(path.join(tmp, "file"), "x");
    await expect(loadPlan(path.join(tmp, "file"))).rejects.toThrow(/is not a folder/);
  });
});

describe("parseTaskFile", () => {
  const text = [
    "---", // 1
    "id: a", // 2
    "title: A", // 3
    "type: 2", // 4
    "dependencies:", // 5
    "  - b", // 6
    "  - c", // 7
    "acceptance_criteria: [works]", // 8
    "estimated_complexity: small", // 9
    "---", // 10
    "", // 11
    "## Description", // 12
    "", // 13
    "Text.", // 14
    "", // 15
    "```md", // 16
    "## Context", // 17 (inside a fence: not a heading)
    "```", // 18
    "## Instructions", // 19
    "### Steps", // 20
  ].join("\n");

  it("keeps the file line of every field and list item, and reads type 2 as '2'", () => {
    const t = parseTaskFile("tasks/a.md", text);
    expect(t.data?.type).toBe("2");
    expect(fieldLines(t)).toMatchObject({
      id: 2,
      title: 3,
      type: 4,
      dependencies: 5,
      "dependencies[0]": 6,
      "dependencies[1]": 7,
      acceptance_criteria: 8,
    });
  });

  it("finds ## sections outside code fences; a ### heading counts as content", () => {
    const t = parseTaskFile("tasks/a.md", text);
    expect(t.sections).toEqual([
      { title: "Description", line: 12, empty: false },
      { title: "Instructions", line: 19, empty: false },
    ]);
    expect(parseSections("## A\n\n## B\ntext\n", 5)).toEqual([
      { title: "A", line: 5, empty: true },
      { title: "B", line: 7, empty: false },
    ]);
  });

  it("reports YAML errors with their line, a missing block, and schema issues with zod paths", () => {
    const bad = parseTaskFile("tasks/a.md", "---\nid: a\ntitle: 'open\ntype: 2\n---\n");
    expect(bad.yamlError?.line).toBe(4);
    expect(bad.data).toBeUndefined();
    expect(parseTaskFile("tasks/a.md", "# just markdown\n").hasFrontmatter).toBe(false);
    const invalid = parseTaskFile(
      "tasks/a.md",
      "---\nid: a\ntitle: A\ntype: 7\ndependencies: [b, 3]\nacceptance_criteria: []\nestimated_complexity: small\n---\n",
    );
    expect(invalid.issues.map((i) => i.path.join("."))).toEqual(["type", "dependencies.1", "acceptance_criteria"]);
  });
});

describe("parseDagJson", () => {
  it("gives the line of a JSON syntax error, whichever way V8 words it", () => {
    expect(parseDagJson('{\n  "a": 1,\n  "b": 2\n  "c": 3\n}').jsonError?.line).toBe(4);
    expect(parseDagJson('{\n  "version": 1,\n  "planId": "p",\n  "x": }\n').jsonError?.line).toBe(4);
    expect(parseDagJson("").jsonError?.line).toBe(1);
  });

  it("remembers the line of each node id", () => {
    const dag = parseDagJson(dagText("p", [{ id: "a" }, { id: "b", deps: ["a"] }]));
    expect(dag.idLines).toEqual({ a: 6, b: 12 });
    expect(dag.keyLines.planId).toBe(3);
  });
});

describe("parsing never throws", () => {
  it("on arbitrary file contents", () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.string(), (task, overlay, dag) => {
        const files = new Map([
          ["tasks/a.md", `---\n${task}`],
          ["tasks/b.md", task],
          ["overlays/overlay-001.md", `---\n${overlay}\n---\n`],
          ["dag.json", dag],
        ]);
        const problems = validatePlan(parsePlan({ planId: "p", files, dirs: new Set(["tasks", "overlays"]), unreadable: [] }));
        return problems.length > 0;
      }),
      { numRuns: 300 },
    );
  });
});
