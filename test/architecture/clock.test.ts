/**
 * The App, the GitHub adapter and the local GitHub read the time and set their timers through the
 * clock port (src/core/clock.ts), so tests move time instead of waiting: a lint rule
 * (eslint.config.js, CLOCK_RULES) refuses raw timers and Date.now there, and each exception — a
 * timer that bounds real I/O, a time that real-clock clients read — says why where it stands.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

const eslint = new ESLint({ cwd: process.cwd() });
const CLOCK_RULES = new Set(["no-restricted-globals", "no-restricted-properties", "no-restricted-syntax"]);

async function errors(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(`${code}\nexport {};\n`, { filePath });
  return result!.messages.filter((m) => m.ruleId && CLOCK_RULES.has(m.ruleId)).map((m) => m.message);
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(path.join(dir, e.name)) : e.name.endsWith(".ts") ? [path.join(dir, e.name)] : [],
  );
}

describe("the clock is the one source of time and timers", () => {
  const raw = [
    "setTimeout(() => undefined, 5_000);",
    "setInterval(() => undefined, 60_000);",
    "globalThis.setTimeout(() => undefined, 10);",
    "const t = Date.now();",
    `import { setTimeout as wait } from "node:timers/promises";`,
    `import { setTimeout as wait } from "timers/promises";`,
  ];
  for (const file of [
    "src/app/probe.ts",
    "src/app/engine/probe.ts",
    "src/github/probe.ts",
    "src/local-github/probe.ts",
    "src/local-github/runner/probe.ts",
  ])
    for (const code of raw)
      it(`refuses in ${file}: ${code}`, async () => {
        expect((await errors(file, code)).join("\n")).toMatch(/Use the Clock \(src\/core\/clock\.ts\)/);
      });

  const allowed: [string, string][] = [
    ["src/app/probe.ts", "const t = ctx.clock.now(); ctx.clock.setTimeout(() => undefined, 5_000);"],
    ["src/app/probe.ts", "const t = performance.now();"],
    ["src/app/probe.ts", "setImmediate(() => undefined);"],
    // The port itself, and what runs in real time as people and agents do: the demo, the fake agents.
    ["src/core/clock.ts", "setTimeout(() => undefined, 5); const t = Date.now();"],
    ["src/demo/probe.ts", "setTimeout(() => undefined, 200);"],
    ["src/fake-agents/probe.ts", "const t = Date.now();"],
    ["src/agent/probe.ts", "setTimeout(() => undefined, 200);"],
  ];
  for (const [file, code] of allowed)
    it(`allows in ${file}: ${code}`, async () => {
      expect(await errors(file, code)).toEqual([]);
    });

  it("every exception in the App, the GitHub adapter and the local GitHub says why", () => {
    const parts = ["src/app", "src/github", "src/local-github"].flatMap(tsFiles);
    const exceptions = parts.flatMap((file) =>
      readFileSync(file, "utf8")
        .split("\n")
        .filter((line) => /eslint-disable.*no-restricted-(globals|properties|syntax)/.test(line))
        .map((line) => `${file}: ${line.trim()}`),
    );
    expect(exceptions.length).toBeGreaterThan(0);
    for (const e of exceptions) expect(e, "a disable comment without its reason").toMatch(/ -- \S.{10,}/);
  });
});
