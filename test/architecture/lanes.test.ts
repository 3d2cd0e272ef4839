/**
 * The test lanes (test/lanes.ts) hold every test file once: a file in no lane would never run, a
 * file in two would run twice. The config runs each lane as it is written. And a `unit` file runs in
 * memory: neither it nor a test helper it imports (followed through test/) imports what starts a
 * server or a process — a static check of the imports, not of what the code under test does.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import picomatch from "picomatch";
import { describe, expect, it } from "vitest";
import config from "../../vitest.config.js";
import { LANE_NAMES, LANES, type LaneName } from "../lanes.js";

const ROOT = path.resolve(import.meta.dirname, "../..");

/** Every test file, as the config's patterns name them (`test/…/*.test.ts`). */
const TEST_FILES = readdirSync(path.join(ROOT, "test"), { recursive: true, encoding: "utf8" })
  .map((f) => `test/${f.split(path.sep).join("/")}`)
  .filter((f) => f.endsWith(".test.ts"))
  .sort();

function lanesOf(file: string): LaneName[] {
  return LANE_NAMES.filter((lane) => picomatch.isMatch(file, LANES[lane]));
}

/** What a `unit` file may not import, directly or through the test helpers it imports, and why. */
const NOT_IN_UNIT: [module: string, why: string][] = [
  ["node:child_process", "starts processes (processes lane; git alone: in-process)"],
  ["child_process", "starts processes (processes lane; git alone: in-process)"],
  ["node:http", "a server (in-process)"],
  ["node:https", "a server (in-process)"],
  ["node:net", "a server (in-process)"],
  ["probot", "the App in Probot (in-process)"],
  ["puppeteer-core", "Chromium (processes)"],
  ["src/local-github/server.ts", "the local GitHub (in-process)"],
  ["src/local-github/runner/sim-executor.ts", "the local GitHub's runner (in-process or processes)"],
  ["src/app/app.ts", "the App (in-process)"],
  ["src/app/server.ts", "the App's HTTP server (in-process)"],
  ["src/app/main.ts", "the App's HTTP server (in-process)"],
];

/** `import … from "x"`, `export … from "x"`, `import("x")`, `import "x"` — not `import type`. */
const IMPORT = /(?:^|\n)\s*(?:import|export)\s+(?!type\s)(?:[^;]*?\sfrom\s+)?["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/g;

/** The modules a test file imports, following relative imports while they stay in test/. */
function importsOf(file: string): Set<string> {
  const seen = new Set<string>([file]);
  const found = new Set<string>();
  const queue = [file];
  while (queue.length) {
    const current = queue.pop()!;
    const text = readFileSync(path.join(ROOT, current), "utf8");
    for (const m of text.matchAll(IMPORT)) {
      const spec = (m[1] ?? m[2])!;
      if (!spec.startsWith(".")) {
        found.add(spec);
        continue;
      }
      const resolved = path.posix.join(path.posix.dirname(current), spec).replace(/\.js$/, ".ts");
      found.add(resolved);
      if (resolved.startsWith("test/") && resolved.endsWith(".ts") && !seen.has(resolved)) {
        seen.add(resolved);
        queue.push(resolved);
      }
    }
  }
  return found;
}

describe("the test lanes", () => {
  it("hold every test file in exactly one lane", () => {
    expect(TEST_FILES.length).toBeGreaterThan(100);
    const wrong = TEST_FILES.map((f) => [f, lanesOf(f)] as const).filter(([, lanes]) => lanes.length !== 1);
    expect(wrong.map(([f, lanes]) => `${f}: ${lanes.length ? lanes.join(" and ") : "no lane"}`)).toEqual([]);
  });

  it("name no file that is gone: each pattern matches a test file", () => {
    const unmatched = LANE_NAMES.flatMap((lane) => LANES[lane].filter((p) => !TEST_FILES.some((f) => picomatch.isMatch(f, p))));
    expect(unmatched).toEqual([]);
  });

  it("are the config's projects, cheapest first", () => {
    const projects = (config.test?.projects ?? []) as { test: { name: string; include: string[]; sequence: { groupOrder: number } } }[];
    expect(projects.map((p) => p.test.name)).toEqual([...LANE_NAMES]);
    for (const p of projects) expect(p.test.include).toEqual(LANES[p.test.name as LaneName]);
    const orders = projects.map((p) => p.test.sequence.groupOrder);
    expect(orders).toEqual([...orders].sort((a, b) => a - b));
    expect(new Set(orders).size).toBe(orders.length);
  });

  it("all run in CI: .ci/run's npm commands cover every lane; npm test is unit and in-process", () => {
    const scripts = (JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;
    /** The lanes one `npm test` / `npm run <script> -- <args>` line runs. */
    const lanesRun = (line: string): LaneName[] => {
      const m = /^npm (?:test|run (\S+))(?: -- (.*))?$/.exec(line.replace(/\s+#.*$/, "").trim());
      if (!m) return [];
      const command = `${scripts[m[1] ?? "test"] ?? ""} ${m[2] ?? ""}`;
      if (!/^vitest run(?!.*--config)/.test(command)) return [];
      const named = [...command.matchAll(/--project[= ](\S+)/g)].map((p) => p[1] as LaneName);
      return named.length ? named : [...LANE_NAMES];
    };
    expect(lanesRun("npm test")).toEqual(["unit", "in-process"]);
    expect(lanesRun("npm run test:all")).toEqual([...LANE_NAMES]);
    const ci = readFileSync(path.join(ROOT, ".ci/run"), "utf8").split("\n").flatMap(lanesRun);
    expect(new Set(ci)).toEqual(new Set(LANE_NAMES));
  });

  it("keep unit in memory: no unit file imports what starts a server or a process", () => {
    for (const [module] of NOT_IN_UNIT) {
      if (module.startsWith("src/")) expect(existsSync(path.join(ROOT, module)), `${module} moved: update NOT_IN_UNIT`).toBe(true);
    }
    const unit = TEST_FILES.filter((f) => lanesOf(f).includes("unit"));
    expect(unit.length).toBeGreaterThan(30);
    const wrong = unit.flatMap((f) => {
      const imports = importsOf(f);
      return NOT_IN_UNIT.filter(([module]) => imports.has(module)).map(([module, why]) => `${f} imports ${module}: ${why}`);
    });
    expect(wrong).toEqual([]);
  });

  it("catch a unit file that reaches the local GitHub through a helper", () => {
    // The check itself: startHarness (test/app/helpers.ts) imports the local GitHub.
    expect(importsOf("test/security/commands.test.ts").has("src/local-github/server.ts")).toBe(true);
    expect(importsOf("test/action/main.test.ts").has("node:child_process")).toBe(true);
  });
});
