// Bad input to any `forge` command: one line on stderr naming the argument, exit 2, no stack trace,
// and nothing started.
// Every case runs in-process (fast); the first of each command also as a real child process, which
// is where a stack trace from an uncaught error would show.
import { execFile } from "node:child_process";
import { availableParallelism } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runForge } from "./helpers.js";

const ROOT = path.resolve(import.meta.dirname, "../..");

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

// No credentials or repository from the environment: `tick` must fail on its arguments alone.
const CLEAN_ENV = {
  GITHUB_REPOSITORY: "",
  GITHUB_TOKEN: "",
  GH_TOKEN: "",
  GITHUB_API_URL: "",
  FORGE_DEBUG: "",
  FORGE_APP_ID: "",
  APP_ID: "",
  FORGE_APP_PRIVATE_KEY: "",
  PRIVATE_KEY: "",
};

/** Runs `forge <args>` as a process of its own, from the TypeScript sources. */
function forge(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "src/cli/main.ts", ...args],
      { cwd: ROOT, timeout: 60_000, env: { ...process.env, ...CLEAN_ENV } },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, stdout, stderr }),
    );
  });
}

/** [args, what the one line must mention] for each command. */
const CASES: Record<string, [string[], string][]> = {
  "(no command)": [
    [[], "command"],
    [["frobnicate"], "frobnicate"],
    [["--bogus"], "--bogus"],
  ],
  validate: [
    [["validate"], "planDir"],
    [["validate", "README.md"], "README.md"],
    [["validate", "no/such/plan"], "no/such/plan"],
    [["validate", "examples/plans/tiny-lru", "--bogus"], "--bogus"],
    [["validate", "examples/plans/tiny-lru", "extra"], "too many arguments"],
  ],
  graph: [
    [["graph"], "planDir"],
    [["graph", "README.md"], "README.md"],
    [["graph", "nope"], "nope"],
    [["graph", "examples/plans/tiny-lru", "--jsn"], "--jsn"],
    [["graph", "examples/plans/tiny-lru", "--journal", "no-such.json"], "--journal no-such.json"],
    [["graph", "examples/plans/tiny-lru", "--journal", "src"], "--journal src"],
    [["graph", "examples/plans/tiny-lru", "--journal"], "--journal"],
  ],
  sim: [
    [["sim", "--bogus"], "--bogus"],
    [["sim", "--port", "abc"], "--port"],
    [["sim", "--port", "70000"], "--port"],
    [["sim", "--port"], "--port"],
    [["sim", "stray"], "stray"],
    [["sim", "--executor", "robot"], "--executor"],
    [["sim", "--api-error-rate", "2"], "--api-error-rate"],
    [["sim", "--repo", "nameonly"], "--repo"],
    [["sim", "--repo", "a/b=no/such/dir"], "no/such/dir"],
    [["sim", "--repo", "a/b=README.md"], "README.md"],
    [["sim", "--app", "no-such.json"], "--app no-such.json"],
    [["sim", "--app", "README.md"], "--app README.md"],
    [["sim", "--collaborator", "a/b:login:god"], "god"],
  ],
  tick: [
    [["tick"], "--repo"],
    [["tick", "--repo", "x"], "--repo"],
    [["tick", "--repo"], "--repo"],
    [["tick", "--bogus"], "--bogus"],
    [["tick", "extra"], "too many arguments"],
  ],
  demo: [
    [["demo", "--plan", "./nope"], "--plan ./nope"],
    [["demo", "--plan", "README.md"], "--plan README.md"],
    [["demo", "--plan", "examples/invalid/self-dependency"], "--plan examples/invalid/self-dependency"],
    [["demo", "--runners", "0"], "--runners"],
    [["demo", "--runners", "abc"], "--runners"],
    [["demo", "--runners", "1.5"], "--runners"],
    [["demo", "--timeout", "-3"], "--timeout"],
    [["demo", "--agent", "robot"], "--agent"],
    [["demo", "--latency", "fast"], "--latency"],
    [["demo", "--latency"], "--latency"],
    [["demo", "--out", "README.md"], "--out README.md"],
    [["demo", "--bogus"], "--bogus"],
    [["demo", "--plan"], "--plan"],
    [["demo", "extra"], "too many arguments"],
  ],
  report: [
    [["report"], "runId"],
    [["report", "r1"], "--repo"],
    [["report", "r1", "--repo", "nameonly"], "--repo"],
    [["report", "bad id!", "--repo", "a/b"], "run id"],
    [["report", "r1", "--repo", "a/b", "--api-url", "not a url"], "--api-url"],
    [["report", "r1", "--repo", "a/b", "--api-url", "ftp://x"], "--api-url"],
    [["report", "r1", "--repo", "a/b"], "GITHUB_TOKEN"],
    [["report", "r1", "--repo", "a/b", "--out", "README.md"], "--out README.md"],
    [["report", "r1", "--bogus"], "--bogus"],
    [["report", "r1", "extra"], "too many arguments"],
  ],
  init: [
    [["init", "--dir", "no/such/dir"], "--dir no/such/dir"],
    [["init", "--dir", "README.md"], "--dir README.md"],
    [["init", "--dir"], "--dir"],
    [["init", "--bogus"], "--bogus"],
  ],
  app: [
    [["app", "--port", "70000"], "--port"],
    [["app", "--port", "x"], "--port"],
    [["app", "--dir", "no/such/dir"], "--dir no/such/dir"],
    [["app", "--dir", "README.md"], "--dir README.md"],
    [["app", "--bogus"], "--bogus"],
    [["app", "extra"], "too many arguments"],
  ],
  doctor: [
    [["doctor", "--repo", "no-slash"], "--repo"],
    [["doctor", "--dir", "no/such/dir"], "--dir no/such/dir"],
    [["doctor", "--repo", "a/b", "--api-url", "not a url"], "--api-url"],
    [["doctor", "--repo"], "--repo"],
    [["doctor", "--bogus"], "--bogus"],
  ],
};

/** `forge spawn` keeps its own contract (docs/runner.md#exit-codes): exit 2 means "depth exceeded", so a bad option is exit 1 with one JSON line. */
const SPAWN_CASES: [string[], string][] = [
  [["spawn"], "--prompt"],
  [["spawn", "--prompt"], "--prompt"],
  [["spawn", "--prompt-file", "no-such.md"], "--prompt-file no-such.md"],
  [["spawn", "--prompt-file", "src"], "--prompt-file src"],
  [["spawn", "--prompt", "p", "--system-prompt", "no-such.md"], "--system-prompt no-such.md"],
  [["spawn", "--prompt", "p", "--extra-context", "no-such.md"], "--extra-context no-such.md"],
  [["spawn", "--prompt", "p", "--cwd", "README.md"], "--cwd README.md"],
  [["spawn", "--prompt", "p", "--cwd", "no/such/dir"], "--cwd no/such/dir"],
  [["spawn", "--prompt", "p", "--session-dir", "README.md"], "--session-dir README.md"],
  [["spawn", "--prompt", "p", "--max-depth", "abc"], "--max-depth"],
  [["spawn", "--prompt", "p", "--timeout", "0"], "--timeout"],
  [["spawn", "--prompt", "p", "--bogus"], "--bogus"],
];

const STACK_FRAME = /^\s+at /m;

/** Runs `f` over `items`, a few at a time (the machine's cores: each child is a Node with tsx). */
async function pool<T, R>(items: T[], f: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await f(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.max(2, availableParallelism()) }, worker));
  return out;
}

/** Runs in-process, with the same environment the child processes get. */
async function inProcess(args: string[]): Promise<Run> {
  const saved = Object.fromEntries(Object.keys(CLEAN_ENV).map((k) => [k, process.env[k]]));
  Object.assign(process.env, CLEAN_ENV);
  try {
    const r = await runForge(args, ROOT);
    return { code: r.code, stdout: r.out, stderr: r.err };
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

function expectUsageError(args: string[], mention: string, r: Run): void {
  const what = `forge ${args.join(" ")}`;
  expect(r.stderr, what).not.toMatch(STACK_FRAME);
  expect(r.code, `${what}: ${r.stderr}`).toBe(2);
  expect(r.stderr, what).toMatch(/^forge\b[^\n]*: [^\n]+\n$/);
  expect(r.stderr, what).toContain(mention);
  expect(r.stdout, what).toBe("");
}

function expectSpawnBadOptions(args: string[], mention: string, r: Run): void {
  const what = `forge ${args.join(" ")}`;
  expect(r.stderr, what).not.toMatch(STACK_FRAME);
  expect(r.code, `${what}: ${r.stderr}`).toBe(1);
  expect(r.stderr.split("\n"), what).toHaveLength(2);
  const line = JSON.parse(r.stderr) as { status: string; error: { code: string; message: string } };
  expect(line.status, what).toBe("error");
  expect(line.error.code, what).toBe("bad_options");
  expect(line.error.message, what).toContain(mention);
  expect(r.stdout, what).toBe("");
}

describe("bad arguments", () => {
  for (const [command, cases] of Object.entries(CASES)) {
    it(`forge ${command}: one line naming the argument, exit 2, no stack trace`, async () => {
      for (const [args, mention] of cases) expectUsageError(args, mention, await inProcess(args));
    });
  }

  it("forge spawn: one JSON line with bad_options naming the option, exit 1 (2 means depth exceeded)", async () => {
    for (const [args, mention] of SPAWN_CASES) expectSpawnBadOptions(args, mention, await inProcess(args));
  });

  it("as child processes: the first two cases of every command, and of spawn", async () => {
    const picked = [
      ...Object.values(CASES).flatMap((cases) => cases.slice(0, 2).map(([args, mention]) => ({ args, mention, spawn: false }))),
      ...SPAWN_CASES.slice(0, 3).map(([args, mention]) => ({ args, mention, spawn: true })),
      { args: ["demo", "--runners", "0"], mention: "--runners", spawn: false },
    ];
    const results = await pool(picked, async (c) => ({ ...c, r: await forge(c.args) }));
    for (const { args, mention, spawn, r } of results)
      if (spawn) expectSpawnBadOptions(args, mention, r);
      else expectUsageError(args, mention, r);
  }, 180_000);
});
