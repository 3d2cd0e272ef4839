// The `forge` an agent runs inside an Actions job, as the action ships it: action/build.mjs bundles
// action/src/forge-entry.ts into forge.js, and these tests run that file with node. It is the
// package's `forge` (src/cli/program.ts) with two commands, so the same arguments end with the same
// exit code and message in both — and 2 only ever means "depth budget exhausted" for `forge spawn`.
import { execFile, execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXIT_CODES } from "../../src/core/exit-codes.js";
import { FAKE_AGENT } from "../agent/helpers.js";
import { runForge } from "../cli/helpers.js";

const ROOT = path.resolve(import.meta.dirname, "../..");

let built = "";
let work = "";

beforeAll(() => {
  built = mkdtempSync(path.join(tmpdir(), "forge-job-cli-"));
  execFileSync(process.execPath, ["action/build.mjs", "--outdir", built], { cwd: ROOT, stdio: "pipe" });
  work = mkdtempSync(path.join(tmpdir(), "forge-job-cli-work-"));
}, 120_000);

afterAll(() => {
  for (const dir of [built, work]) if (dir) rmSync(dir, { recursive: true, force: true });
});

interface Run {
  code: number;
  out: string;
  err: string;
}

/** No job, no parent session, no depth spent: what the spawn sees comes from each test. */
const NO_JOB = {
  FORGE_BRANCH: "",
  FORGE_SESSION_DIR: "",
  FORGE_SPAWN_DEPTH: "",
  FORGE_MAX_DEPTH: "",
  FORGE_AGENT_TYPE: "",
  FORGE_ADAPTER: "",
  FORGE_CLI: "",
  FORGE_DEBUG: "",
};

/** Runs the bundled job `forge` (`node <outdir>/forge.js <args>`) in ROOT. */
function jobForge(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(built, "forge.js"), ...args],
      { cwd: ROOT, timeout: 60_000, env: { ...process.env, ...NO_JOB, ...env } },
      (err, out, errText) => resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, out, err: errText }),
    );
  });
}

/** The arguments of a spawn that runs the fake command agent on `plan` in a folder of its own. */
function fakeSpawn(name: string, plan: Record<string, unknown>): { args: string[]; env: Record<string, string> } {
  const dir = path.join(work, name);
  const state = path.join(dir, "state");
  mkdirSync(state, { recursive: true });
  const planFile = path.join(dir, "plan.json");
  writeFileSync(planFile, JSON.stringify(plan));
  return {
    args: [
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
      dir,
      "--session-dir",
      path.join(dir, "session"),
      "--output-format",
      "json",
      "--prompt",
      "hi",
      "--name",
      name,
    ],
    env: { FAKE_PLAN: planFile, FAKE_STATE: state },
  };
}

describe("the job's forge (action/dist/forge.js)", () => {
  it("answers `forge spawn --prompt` without a value with exit 1 and a bad_options line, never 2", async () => {
    const r = await jobForge(["spawn", "--prompt"]);
    expect(r.code).toBe(EXIT_CODES.FAILURE);
    expect(r.out).toBe("");
    expect(JSON.parse(r.err)).toEqual({
      status: "error",
      error: { code: "bad_options", message: "option '--prompt <text>' argument missing" },
    });
  });

  it("answers exit 2 when the depth budget is spent, with the spawn's depth_exceeded result", async () => {
    const { args, env } = fakeSpawn("deep", { "*": { exit: 0 } });
    const r = await jobForge([...args, "--max-depth", "2"], { ...env, FORGE_SPAWN_DEPTH: "2" });
    expect(r.code).toBe(EXIT_CODES.DEPTH_EXCEEDED);
    expect(JSON.parse(r.out)).toMatchObject({ exit_code: 2, status: "depth_exceeded", depth: 3, max_depth: 2 });
    expect(JSON.parse(r.err)).toEqual({
      status: "error",
      error: { code: "depth_exceeded", message: "spawn depth 3 exceeds the budget of 2" },
    });
  });

  it("runs a sub-agent and exits with its code", async () => {
    const { args, env } = fakeSpawn("ok", { "*": { print: ["done"], exit: 0 } });
    const r = await jobForge(args, env);
    expect(r.err).toBe("");
    expect(r.code).toBe(EXIT_CODES.SUCCESS);
    expect(JSON.parse(r.out)).toMatchObject({ status: "success", exit_code: 0, depth: 1, adapter: "command", result: "done" });
    expect(readFileSync(path.join(work, "ok", "state", "calls.log"), "utf8")).not.toBe("");

    const refine = fakeSpawn("refine", { "*": { refinement: "tests fail", exit: 10 } });
    const r10 = await jobForge(refine.args, refine.env);
    expect(r10.code).toBe(EXIT_CODES.NEEDS_REFINEMENT);
    expect(JSON.parse(r10.out)).toMatchObject({ status: "needs_refinement", exit_code: 10 });
  });

  it("validates a plan: exit 0 for a valid one, 1 for one with problems", async () => {
    const ok = await jobForge(["validate", "examples/plans/tiny-lru"]);
    expect(ok).toEqual({ code: 0, out: 'OK plan "tiny-lru": 6 tasks, 1 refinery, 8 dependencies, 1 overlay, 1 spec\n', err: "" });
    const bad = await jobForge(["validate", "examples/invalid/cycle"]);
    expect(bad.code).toBe(1);
    expect(bad.out).toContain('1 problem in plan "cycle"');
  });

  it("knows only spawn and validate: another command is a usage error (exit 2)", async () => {
    const r = await jobForge(["graph", "examples/plans/tiny-lru"]);
    expect(r.code).toBe(2);
    expect(r.err).toBe("forge: unknown command 'graph' (see forge --help)\n");
  });

  it("ends as the package's forge does for the same arguments: same exit code, same stderr", async () => {
    // [arguments, the exit code both give]: spawn speaks the runner's codes (a bad option is 1), the
    // other commands the CLI's (a usage error is 2, problems in a plan 1).
    const cases: Array<[string[], number]> = [
      [["spawn", "--prompt"], 1],
      [["spawn", "--prompt", "p", "--bogus"], 1],
      [["spawn", "--prompt", "p", "--max-depth", "-1"], 1],
      [["spawn", "--prompt", "p", "--output-format", "yaml"], 1],
      [["spawn", "--prompt", "p", "stray"], 1],
      [["validate"], 2],
      [["validate", "no/such/plan"], 2],
      [["validate", "README.md"], 2],
      [["validate", "examples/plans/tiny-lru", "--bogus"], 2],
      [["validate", "examples/invalid/cycle", "--json"], 1],
      [["frobnicate"], 2],
      [["--bogus"], 2],
    ];
    for (const [args, code] of cases) {
      const job = await jobForge(args);
      const user = await runForge(args, ROOT);
      expect({ code: job.code, out: job.out, err: job.err }, args.join(" ")).toEqual({ code: user.code, out: user.out, err: user.err });
      expect(job.code, args.join(" ")).toBe(code);
      if (args[0] === "spawn") expect(JSON.parse(job.err), args.join(" ")).toMatchObject({ error: { code: "bad_options" } });
      else expect(job.err.split("\n").filter(Boolean).length, args.join(" ")).toBeLessThanOrEqual(1);
    }
  }, 60_000);
});
