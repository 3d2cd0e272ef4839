// The real command: build with tsc (as `npm ci` does through `prepare`), then run bin/forge.js.
import { execFile } from "node:child_process";
import { stat } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../..");

async function forge(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ["bin/forge.js", ...args], { cwd: ROOT });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe("bin/forge.js", () => {
  beforeAll(async () => {
    const started = Date.now();
    // tsc emits even when another part of the tree has a type error; what matters here is dist/cli.
    await run("npx", ["tsc", "-p", "tsconfig.build.json"], { cwd: ROOT }).catch(() => undefined);
    const built = await stat(path.join(ROOT, "dist/cli/main.js"));
    expect(built.mtimeMs).toBeGreaterThanOrEqual(started - 1000);
  }, 180_000);

  it("validates a plan: exit 0 and the OK line", async () => {
    const r = await forge("validate", "examples/plans/semver-lite");
    expect(r).toEqual({
      code: 0,
      stdout: 'OK plan "semver-lite": 7 tasks, 1 refinery, 10 dependencies, 0 overlays, 2 specs\n',
      stderr: "",
    });
  });

  it("exits 1 with problems, 2 for a missing folder", async () => {
    const bad = await forge("validate", "examples/invalid/self-dependency");
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain("examples/invalid/self-dependency/tasks/feature.md:7 dependencies[1] — feature depends on itself");
    const missing = await forge("validate", "nowhere");
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe("forge validate: nowhere: no such plan folder\n");
  });

  it("draws the graph", async () => {
    const r = await forge("graph", "examples/plans/tiny-lru");
    expect(r.code).toBe(0);
    expect(r.stdout.startsWith("flowchart TD\n")).toBe(true);
  });
});
