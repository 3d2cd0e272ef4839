/**
 * When the plan's checks fail on the integration branch, the demo names the failing tests (from
 * `node --test`'s own report), not only its last line, so that the person sees what broke.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { failingTests } from "../../src/demo/outcome.js";

const dir = mkdtempSync(path.join(tmpdir(), "forge-failing-tests-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("failingTests", () => {
  it("names the failing tests of a real node --test run, the innermost first", async () => {
    writeFileSync(
      path.join(dir, "wrap.test.js"),
      [
        'const { test, describe } = require("node:test");',
        'const assert = require("node:assert");',
        'describe("wrap", () => {',
        '  test("keeps short lines", () => assert.equal(1, 1));',
        '  test("breaks long words", () => assert.equal(1, 2));',
        "});",
        'test("pads to width", () => assert.equal("a", "b"));',
      ].join("\n"),
    );
    const out = await promisify(execFile)(process.execPath, ["--test", "--test-reporter=tap"], { cwd: dir }).then(
      () => "",
      (e: { stdout: string }) => e.stdout,
    );
    const said = failingTests(out);
    expect(said).toMatch(/^: failing: breaks long words; /);
    expect(said).toContain("pads to width");
    expect(said).not.toContain("keeps short lines");
  });

  it("says nothing when the output names no failing test, and at most three names", () => {
    expect(failingTests("# pass 3\n# fail 0\n")).toBe("");
    const many = ["a", "b", "c", "d", "e"].map((n, i) => `not ok ${i + 1} - ${n}`).join("\n");
    expect(failingTests(many)).toBe(": failing: a; b; c (and 2 more)");
  });
});
