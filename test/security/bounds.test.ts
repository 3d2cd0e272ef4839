/**
 * Trust I, item 5: bounded input everywhere. What comes from outside — a webhook's body, an issue's
 * or an agent's text, a message that travels to the job — costs Forge time and memory in proportion
 * to a bound it sets, never to what the sender chose.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ADVERSARIAL, MB, type Reader } from "./fixtures/adversarial.js";

const FIXTURES = path.join(import.meta.dirname, "fixtures");

/** Runs the timing fixture in a process of its own, killed after `limitMs`: a super-linear reader never returns. */
async function timeReaders(limitMs: number): Promise<Record<string, number>> {
  const child = spawn(process.execPath, ["--import", import.meta.resolve("tsx"), path.join(FIXTURES, "time-untrusted-text.ts")], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  const timer = setTimeout(() => child.kill("SIGKILL"), limitMs);
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  clearTimeout(timer);
  if (code !== 0) {
    const last = err.trim().split("\n").pop();
    throw new Error(`the readers did not finish within ${limitMs / 1000} s (exit ${code}); still reading: ${last}`);
  }
  return JSON.parse(out) as Record<string, number>;
}

/** Milliseconds each reader may take over one megabyte (a super-linear one takes hours). */
const BUDGET_MS: Record<Reader, number> = {
  sanitize: 100,
  sanitizeUncut: 2_000,
  mask: 100,
  frontMatter: 1_000,
  walkthrough: 1_000,
  command: 100,
};

describe("untrusted text is read in time linear in its length", () => {
  it("reads a megabyte of each pattern's worst case within budget: sanitized in under 100 ms", { timeout: 150_000 }, async () => {
    for (const cases of Object.values(ADVERSARIAL)) for (const text of Object.values(cases)) expect(text.length).toBeGreaterThanOrEqual(MB);
    const times = await timeReaders(120_000);
    const slow = Object.entries(times).filter(([key, ms]) => ms > BUDGET_MS[key.split(":")[0] as Reader]);
    expect(slow, `over budget: ${JSON.stringify(slow)}`).toEqual([]);
    expect(Object.keys(times)).toHaveLength(Object.values(ADVERSARIAL).reduce((n, cases) => n + Object.keys(cases).length, 0));
  });
});
