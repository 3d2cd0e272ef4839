import path from "node:path";
import { describe, expect, it } from "vitest";
import { runForge } from "./helpers.js";

const ROOT = path.resolve(import.meta.dirname, "../..");

describe("forge validate", () => {
  it("prints one OK line with counts and exits 0 for a valid plan", async () => {
    const r = await runForge(["validate", "examples/plans/tiny-lru"], ROOT);
    expect(r).toEqual({
      code: 0,
      out: 'OK plan "tiny-lru": 6 tasks, 1 refinery, 8 dependencies, 1 overlay, 1 spec\n',
      err: "",
    });
  });

  it("prints `file[:line] field — message` per problem, relative to the cwd, and exits 1", async () => {
    const r = await runForge(["validate", "examples/invalid/cycle"], ROOT);
    expect(r.code).toBe(1);
    expect(r.out.split("\n")).toEqual([
      'examples/invalid/cycle/tasks/feature.md:6 dependencies[0] — dependency cycle feature → setup → feature (→ reads "depends on")',
      '1 problem in plan "cycle"',
      "",
    ]);
    const fromInside = await runForge(["validate", "."], path.join(ROOT, "examples/invalid/missing-section"));
    expect(fromInside.out.split("\n")[0]).toBe("tasks/docs.md ## Context — the body has no ## Context section");
  });

  it("omits the line when it is unknown and the field when there is none", async () => {
    const r = await runForge(["validate", "examples/invalid/missing-file"], ROOT);
    expect(r.out.split("\n")[0]).toBe("examples/invalid/missing-file/plan.md — plan.md is missing");
  });

  it("--json prints { valid, problems } with cwd-relative files", async () => {
    const bad = await runForge(["validate", "examples/invalid/unknown-dependency", "--json"], ROOT);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.out)).toEqual({
      valid: false,
      problems: [
        {
          file: "examples/invalid/unknown-dependency/tasks/feature.md",
          line: 7,
          field: "dependencies[1]",
          message: 'unknown dependency "set-up": no task has this id',
          rule: "unknown-dependency",
        },
      ],
    });
    const good = await runForge(["validate", "--json", "examples/plans/semver-lite"], ROOT);
    expect(good.code).toBe(0);
    expect(JSON.parse(good.out)).toEqual({ valid: true, problems: [] });
  });

  it("never prints a stack trace for malformed input", async () => {
    for (const name of ["unreadable-yaml", "unreadable-json", "unreadable-json-token", "no-frontmatter", "bad-frontmatter-dependency"]) {
      const r = await runForge(["validate", `examples/invalid/${name}`], ROOT);
      expect(r.code, name).toBe(1);
      expect(r.out + r.err, name).not.toMatch(/\n\s+at /);
    }
  });

  it("exits 2 with a clear message for a missing folder or a missing argument", async () => {
    const missing = await runForge(["validate", "no/such/plan"], ROOT);
    expect(missing).toEqual({
      code: 2,
      out: "",
      err: "forge validate: no/such/plan: no such plan folder\n",
    });
    const usage = await runForge(["validate"], ROOT);
    expect(usage.code).toBe(2);
    expect(usage.err).toContain("missing required argument 'planDir'");
  });

  it("exits 2 for an unknown command and 0 for --help", async () => {
    expect((await runForge(["frobnicate"], ROOT)).code).toBe(2);
    const help = await runForge(["--help"], ROOT);
    expect(help.code).toBe(0);
    expect(help.out).toContain("validate");
    expect(help.out).toContain("graph");
  });
});
