// `forge spawn` through the CLI entry (main), with the command adapter.
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { cleanupTempDirs, FAKE_AGENT, fakeWorld } from "./helpers.js";

afterEach(cleanupTempDirs);

async function run(args: string[], env: Record<string, string> = {}) {
  let out = "";
  let err = "";
  const saved = { ...process.env };
  Object.assign(process.env, env);
  try {
    const code = await main(args, { out: (t) => void (out += t), err: (t) => void (err += t), cwd: process.cwd() });
    return { code, out, err };
  } finally {
    for (const k of Object.keys(env)) if (saved[k] === undefined) delete process.env[k];
    Object.assign(process.env, saved);
  }
}

describe("forge spawn", () => {
  const common = (w: ReturnType<typeof fakeWorld>) => [
    "spawn",
    "--adapter",
    "command",
    "--command",
    process.execPath,
    "--arg",
    FAKE_AGENT,
    "--pass-env",
    "FAKE_PLAN,FAKE_STATE",
    "--cwd",
    w.repo,
    "--session-dir",
    path.join(w.dir, "s"),
  ];
  const env = (w: ReturnType<typeof fakeWorld>) => ({
    FAKE_PLAN: w.planFile,
    FAKE_STATE: w.state,
    FORGE_SPAWN_DEPTH: "",
    FORGE_AGENT_TYPE: "",
    FORGE_MAX_DEPTH: "",
  });

  it("prints KEY=value lines and exits with the agent's code", async () => {
    const w = fakeWorld({ "*": { print: ["multi", "line"], exit: 0 } });
    const r = await run([...common(w), "--prompt", "hi", "--name", "impl"], env(w));
    expect(r.code).toBe(0);
    expect(r.err).toBe("");
    expect(r.out).toMatch(/^STATUS=success$/m);
    expect(r.out).toMatch(/^EXIT_CODE=0$/m);
    expect(r.out).toMatch(/^TRACE_ID=[0-9a-f]{16}$/m);
    expect(r.out).toMatch(/^DEPTH=1$/m);
    expect(r.out).toMatch(/^SIGNAL=.*\.signals\/exec-impl\.done$/m);
    expect(r.out).toContain('RESULT="multi\\nline"');
  });

  it("prints one JSON object with --output-format json, and a JSON error on stderr on failure", async () => {
    const w = fakeWorld({ "*": { refinement: "tests fail", exit: 10 } });
    const r = await run([...common(w), "--prompt", "hi", "--output-format", "json"], env(w));
    expect(r.code).toBe(10);
    const json = JSON.parse(r.out) as Record<string, unknown>;
    expect(json).toMatchObject({ status: "needs_refinement", exit_code: 10, depth: 1, adapter: "command" });
    expect((json.reports as Record<string, string>).refinement).toMatch(/refinement\.md$/);
    expect(json.signal).toMatch(/\.signals\/exec-spawn\.refine$/);
    expect(JSON.parse(r.err)).toMatchObject({ status: "error", error: { code: "needs_refinement" } });
  });

  it("answers exit 2 when the depth budget is spent", async () => {
    const w = fakeWorld({ "*": { exit: 0 } });
    const r = await run([...common(w), "--prompt", "hi", "--max-depth", "2", "--output-format", "json"], {
      ...env(w),
      FORGE_SPAWN_DEPTH: "2",
    });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.out)).toMatchObject({ exit_code: 2, status: "depth_exceeded" });
    expect(JSON.parse(r.err)).toEqual({
      status: "error",
      error: { code: "depth_exceeded", message: "spawn depth 3 exceeds the budget of 2" },
    });
  });

  it("reports bad options as JSON with exit 1, never 2", async () => {
    const w = fakeWorld();
    for (const args of [
      ["spawn", "--adapter", "command", "--command", "x"],
      ["spawn", "--prompt", "p", "--adapter", "opencode-unknown"],
      ["spawn", "--prompt", "p", "--agent-type", "7"],
      ["spawn", "--prompt", "p", "--output-format", "yaml"],
      ["spawn", "--prompt", "p", "--max-depth", "-1"],
      ["spawn", "--prompt", "p", "--bogus"],
    ]) {
      const r = await run(args, env(w));
      expect(r.code, args.join(" ")).toBe(1);
      expect(JSON.parse(r.err), args.join(" ")).toMatchObject({ status: "error", error: { code: "bad_options" } });
    }
  });

  it("uses the agent type's system prompt when none is given", async () => {
    const w = fakeWorld({ "*": { exit: 0 } });
    const r = await run([...common(w), "--prompt", "hi", "--agent-type", "1", "--output-format", "json"], env(w));
    expect(r.code).toBe(0);
    const { readFileSync } = await import("node:fs");
    expect(readFileSync(path.join(w.dir, "s", "system-prompt.md"), "utf8")).toMatch(/^# Forge agent — type 1/);
  });
});
