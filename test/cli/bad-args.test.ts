// Bad input to any `forge` command, as a table: each row a malformed invocation (arguments, and the
// environment or folders it meets), the exit code it must end with, and what its one line on stderr
// must say — naming the argument, never a stack trace, nothing on stdout, and nothing started: an
// output folder, the App's id and key, the API's URL are checked before any work. Exit 2 is bad
// usage (CLI_EXIT.USAGE), 1 input that was read and is wrong (a plan with problems, a file that is no
// journal). `forge spawn` speaks the runner's exit codes: a bad option is exit 1 and one JSON line.
// Every row runs in-process (fast); the first two of each command also as a real child process,
// which is where a stack trace from an uncaught error would show. `forge demo --agent claude` without
// Claude Code is in test/package/pack.test.ts (here Claude Code is installed).
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { COMMANDS } from "../../src/cli/commands/index.js";
import { appKeys } from "../../src/demo/app-keys.js";
import { runForge } from "./helpers.js";

const ROOT = path.resolve(import.meta.dirname, "../..");

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** One malformed invocation and how it must end. */
interface Row {
  args: string[];
  /** What the line on stderr must contain (the argument, the variable, the problem). */
  says: string | RegExp;
  /** The exit code: 2 (bad usage) unless said. */
  code?: number;
  /** The environment it meets, over a clean one. */
  env?: Record<string, string>;
  /** Several lines, each `forge <command>: …` (a plan's problems, one a line). */
  lines?: "each";
}

// No credentials or repository from the environment: each row fails on what it gives alone.
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
  PRIVATE_KEY_PATH: "",
  WEBHOOK_SECRET: "",
  PORT: "",
  HOST: "",
  NODE_ENV: "",
  FORGE_PACE: "",
  FORGE_RECONCILE_SECONDS: "",
};

// The folders and files the rows meet.
const FIX = mkdtempSync(path.join(tmpdir(), "forge-bad-args-"));
afterAll(() => rmSync(FIX, { recursive: true, force: true }));
const EMPTY = path.join(FIX, "empty");
mkdirSync(EMPTY);
const NOT_GIT = path.join(FIX, "not-git");
mkdirSync(NOT_GIT);
/** A repository whose `.github` is a file: `forge init` cannot write its folder. */
const GITHUB_IS_A_FILE = path.join(FIX, "github-file");
mkdirSync(path.join(GITHUB_IS_A_FILE, ".git"), { recursive: true });
writeFileSync(path.join(GITHUB_IS_A_FILE, ".github"), "not a folder\n");
/** A repository `forge init` has already set up. */
const SET_UP = path.join(FIX, "set-up");
mkdirSync(path.join(SET_UP, ".git"), { recursive: true });
mkdirSync(path.join(SET_UP, ".github"));
writeFileSync(path.join(SET_UP, ".github/forge.yml"), "version: 1\n");
const NOT_A_KEY = path.join(FIX, "not-a-key.pem");
writeFileSync(NOT_A_KEY, "ssh-rsa AAAAB3NzaC1yc2E the public half, not the App's private key\n");
const KEY = appKeys().privateKeyPem;
/** The key with its line breaks lost, as a one-line secret store can leave it. */
const FLAT_KEY = KEY.replace(/\n/g, " ");
/** The key cut short. */
const CUT_KEY = KEY.slice(0, 400);
/** The App's environment, but for what a row gets wrong. */
const APP = { APP_ID: "12", PRIVATE_KEY: KEY, WEBHOOK_SECRET: "s3cret" };
const UNWRITABLE = "/proc/forge-cannot-write-here";
const TOKEN = { GITHUB_TOKEN: "ghp_not-used" };

/** Malformed invocations of every command. */
const ROWS: Record<string, Row[]> = {
  "(no command)": [
    { args: [], says: "say which command" },
    { args: ["frobnicate"], says: "frobnicate" },
    { args: ["--bogus"], says: "--bogus" },
    { args: ["-x"], says: "-x" },
  ],
  validate: [
    { args: ["validate"], says: "planDir" },
    { args: ["validate", "README.md"], says: "README.md: is a file, not a plan folder" },
    { args: ["validate", "no/such/plan"], says: "no/such/plan: no such plan folder" },
    { args: ["validate", ""], says: 'plan folder "": expected a plan folder, got an empty argument' },
    { args: ["validate", "examples/plans/tiny-lru", "--bogus"], says: "--bogus" },
    { args: ["validate", "examples/plans/tiny-lru", "extra"], says: "too many arguments" },
    { args: ["validate", "examples/plans/tiny-lru", "--json", "--bogus"], says: "--bogus" },
  ],
  graph: [
    { args: ["graph"], says: "planDir" },
    { args: ["graph", "README.md"], says: "README.md" },
    { args: ["graph", "nope"], says: "nope" },
    { args: ["graph", ""], says: "got an empty argument" },
    { args: ["graph", "examples/plans/tiny-lru", "--jsn"], says: "--jsn" },
    { args: ["graph", "examples/plans/tiny-lru", "--journal", "no-such.json"], says: "--journal no-such.json: no such file" },
    { args: ["graph", "examples/plans/tiny-lru", "--journal", "src"], says: "--journal src: is a folder, not a file" },
    { args: ["graph", "examples/plans/tiny-lru", "--journal"], says: "--journal" },
    { args: ["graph", "examples/plans/tiny-lru", "--journal", ""], says: '--journal "": expected a file' },
    { args: ["graph", "examples/plans/tiny-lru", "--journal", "README.md"], says: "journal README.md is not valid JSON", code: 1 },
    {
      args: ["graph", "examples/plans/tiny-lru", "--journal", "package.json"],
      says: "journal package.json is not a Forge journal",
      code: 1,
    },
  ],
  sim: [
    { args: ["sim", "--bogus"], says: "--bogus" },
    { args: ["sim", "--port", "abc"], says: "--port" },
    { args: ["sim", "--port", "70000"], says: "--port" },
    { args: ["sim", "--port"], says: "--port" },
    { args: ["sim", "stray"], says: "stray" },
    { args: ["sim", "--executor", "robot"], says: "--executor" },
    { args: ["sim", "--api-error-rate", "2"], says: "--api-error-rate" },
    { args: ["sim", "--seed", "-1"], says: "--seed: a value that starts with '-' is written --seed=<value>" },
    { args: ["sim", "--webhook-reorder-window", "x"], says: "--webhook-reorder-window" },
    { args: ["sim", "--host", ""], says: '--host ""' },
    { args: ["sim", "--repo", "nameonly"], says: "--repo" },
    { args: ["sim", "--repo", "a/b=no/such/dir"], says: "no/such/dir" },
    { args: ["sim", "--repo", "a/b=README.md"], says: "README.md" },
    { args: ["sim", "--app", "no-such.json"], says: "--app no-such.json" },
    { args: ["sim", "--app", "README.md"], says: "--app README.md" },
    { args: ["sim", "--collaborator", "a/b:login:god"], says: "god" },
    { args: ["sim", "--collaborator", "nameonly"], says: "--collaborator" },
    { args: ["sim", "--user", "bad login"], says: '--user "bad login"' },
    { args: ["sim", "--user", ""], says: '--user ""' },
    { args: ["sim", "--secret", "lower-case"], says: '--secret "lower-case": expected [owner/name:]NAME[=value]' },
    { args: ["sim", "--secret", "NOT_IN_THE_ENVIRONMENT", "--repo", "a/b"], says: "no NOT_IN_THE_ENVIRONMENT in the environment" },
    { args: ["sim", "--secret", "X=1"], says: "--secret X: whose?" },
    { args: ["sim", "--secret", "o/r:X=1", "--repo", "a/b"], says: "no --repo o/r" },
    { args: ["sim", "--action", "nope"], says: '--action "nope": expected owner/repo[/path]=folder' },
    { args: ["sim", "--action", "a/b=no/such"], says: "no/such: no such folder" },
    { args: ["sim", "--action", "a/b=src"], says: "no action.yml in src" },
    { args: ["sim", "--forge-app", "x"], says: "--forge-app: no repository" },
    { args: ["sim", "--forge-app", "README.md", "--repo", "a/b"], says: "--forge-app README.md: is a file" },
    { args: ["sim", "--forge-app", UNWRITABLE, "--repo", "a/b"], says: "cannot write there" },
    { args: ["sim", "--forge-app-url", "x"], says: '--forge-app-url "x": expected an http(s) URL' },
    { args: ["sim", "--forge-app-url", "http://127.0.0.1:3000"], says: "give --forge-app <dir> too" },
  ],
  tick: [
    { args: ["tick"], says: "--repo" },
    { args: ["tick", "--repo", "x"], says: "--repo" },
    { args: ["tick", "--repo"], says: "--repo" },
    { args: ["tick", "--repo", ""], says: "say which repository" },
    { args: ["tick", "--bogus"], says: "--bogus" },
    { args: ["tick", "extra"], says: "too many arguments" },
    { args: ["tick"], env: { GITHUB_REPOSITORY: "bad" }, says: 'GITHUB_REPOSITORY "bad"' },
    { args: ["tick", "--repo", "a/b"], says: "FORGE_APP_ID and FORGE_APP_PRIVATE_KEY" },
    { args: ["tick", "--repo", "a/b"], env: { APP_ID: "abc", PRIVATE_KEY: KEY }, says: `APP_ID "abc": expected the App's id, a number` },
    { args: ["tick", "--repo", "a/b"], env: { FORGE_APP_ID: "abc", FORGE_APP_PRIVATE_KEY: KEY }, says: 'FORGE_APP_ID "abc"' },
    { args: ["tick", "--repo", "a/b"], env: { APP_ID: "12", PRIVATE_KEY: "not a key" }, says: "PRIVATE_KEY is not a private key" },
    { args: ["tick", "--repo", "a/b"], env: { APP_ID: "12", PRIVATE_KEY: FLAT_KEY }, says: "line breaks lost" },
  ],
  demo: [
    { args: ["demo", "--plan", "./nope"], says: "--plan ./nope" },
    { args: ["demo", "--plan", "README.md"], says: "--plan README.md" },
    { args: ["demo", "--plan", ""], says: '--plan "": expected a folder' },
    { args: ["demo", "--plan", "examples/invalid/self-dependency"], says: "feature depends on itself", code: 1, lines: "each" },
    { args: ["demo", "--plan", "examples/invalid/cycle"], says: "cycle", code: 1, lines: "each" },
    { args: ["demo", "--runners", "0"], says: "--runners" },
    { args: ["demo", "--runners", "abc"], says: "--runners" },
    { args: ["demo", "--runners", "1.5"], says: "--runners" },
    { args: ["demo", "--runners", "65"], says: "--runners" },
    { args: ["demo", "--timeout", "-3"], says: "--timeout" },
    { args: ["demo", "--issues", "--agent", "gemini"], says: "--issues runs the scripted agent only" },
    { args: ["demo", "--timeout", "abc"], says: "--timeout" },
    { args: ["demo", "--agent", "robot"], says: "--agent" },
    { args: ["demo", "--agent", ""], says: '--agent ""' },
    { args: ["demo", "--agent", "mixd"], says: '--agent "mixd": expected scripted, claude, gemini, opencode, qwen, copilot or mixed' },
    // Copilot CLI is the person's to install (its licence): without it, how to install it, or to name it.
    {
      args: ["demo", "--agent", "copilot"],
      env: { PATH: EMPTY, FORGE_COPILOT_BIN: "" },
      says: "--agent copilot: GitHub Copilot CLI is not installed (no copilot command on PATH): install it with npm i -g @github/copilot@1.0.102 (its licence keeps it out of Forge's dependencies), or set FORGE_COPILOT_BIN to its binary",
    },
    {
      args: ["demo", "--agent", "copilot"],
      env: { PATH: EMPTY, FORGE_COPILOT_BIN: "/no/such/copilot" },
      says: "--agent copilot: FORGE_COPILOT_BIN /no/such/copilot is not an executable file: name GitHub Copilot CLI's binary there, or install it with npm i -g @github/copilot@1.0.102",
    },
    { args: ["demo", "--issues", "--agent", "mixed"], says: "--issues runs the scripted agent only" },
    { args: ["demo", "--latency", "fast"], says: "--latency" },
    { args: ["demo", "--latency"], says: "--latency" },
    { args: ["demo", "--out", "README.md"], says: "--out README.md: is a file, not a folder" },
    { args: ["demo", "--out", "README.md/report"], says: "--out README.md/report: cannot write there" },
    { args: ["demo", "--out", UNWRITABLE], says: `--out ${UNWRITABLE}: cannot write there` },
    { args: ["demo", "--out", ""], says: '--out "": expected a folder' },
    { args: ["demo", "--bogus"], says: "--bogus" },
    { args: ["demo", "--plan"], says: "--plan" },
    { args: ["demo", "extra"], says: "too many arguments" },
  ],
  report: [
    { args: ["report"], says: "runId" },
    { args: ["report", "r1"], says: "--repo" },
    { args: ["report", "r1", "--repo", "nameonly"], says: "--repo" },
    { args: ["report", "r1"], env: { ...TOKEN, GITHUB_REPOSITORY: "bad" }, says: 'GITHUB_REPOSITORY "bad"' },
    { args: ["report", "bad id!", "--repo", "a/b"], says: "run id" },
    { args: ["report", "r1", "--repo", "a/b", "--api-url", "not a url"], says: "--api-url" },
    { args: ["report", "r1", "--repo", "a/b", "--api-url", "ftp://x"], says: "--api-url" },
    { args: ["report", "r1", "--repo", "a/b"], says: "GITHUB_TOKEN" },
    { args: ["report", "r1", "--repo", "a/b", "--out", "README.md"], env: TOKEN, says: "--out README.md: is a file, not a folder" },
    { args: ["report", "r1", "--repo", "a/b", "--out", "README.md/x"], env: TOKEN, says: "--out README.md/x: cannot write there" },
    { args: ["report", "r1", "--repo", "a/b", "--out", UNWRITABLE], env: TOKEN, says: `--out ${UNWRITABLE}: cannot write there` },
    { args: ["report", "r1", "--bogus"], says: "--bogus" },
    { args: ["report", "r1", "extra"], says: "too many arguments" },
  ],
  init: [
    { args: ["init", "--dir", "no/such/dir"], says: "--dir no/such/dir" },
    { args: ["init", "--dir", "README.md"], says: "--dir README.md" },
    { args: ["init", "--dir", ""], says: '--dir "": expected a folder' },
    { args: ["init", "--dir"], says: "--dir" },
    { args: ["init", "--bogus"], says: "--bogus" },
    { args: ["init", "--force", "extra"], says: "too many arguments" },
    { args: ["init", "--dir", NOT_GIT], says: "is not a git repository" },
    { args: ["init", "--dir", SET_UP], says: ".github/forge.yml already exists; nothing written" },
    {
      args: ["init", "--dir", GITHUB_IS_A_FILE],
      says: ".github is a file, where forge init writes the folder of .github/workflows/forge-agent.yml; nothing written",
    },
  ],
  app: [
    { args: ["app", "--port", "70000"], says: "--port" },
    { args: ["app", "--port", "x"], says: "--port" },
    { args: ["app", "--port", ""], says: "--port" },
    { args: ["app", "--host", ""], says: '--host "": expected a host name or address' },
    { args: ["app", "--dir", "no/such/dir"], says: "--dir no/such/dir" },
    { args: ["app", "--dir", "README.md"], says: "--dir README.md" },
    { args: ["app", "--bogus"], says: "--bogus" },
    { args: ["app", "extra"], says: "too many arguments" },
    { args: ["app", "--dir", EMPTY], env: { ...APP, APP_ID: "abc" }, says: `APP_ID "abc": expected the App's id, a number` },
    { args: ["app", "--dir", EMPTY], env: { ...APP, APP_ID: "12.5" }, says: 'APP_ID "12.5"' },
    {
      args: ["app", "--dir", EMPTY],
      env: { ...APP, PRIVATE_KEY: "not a key" },
      says: "PRIVATE_KEY is not a private key: it has no -----BEGIN",
    },
    {
      args: ["app", "--dir", EMPTY],
      env: { ...APP, PRIVATE_KEY: CUT_KEY },
      says: "it has no -----END … PRIVATE KEY----- line (cut short?)",
    },
    { args: ["app", "--dir", EMPTY], env: { ...APP, PRIVATE_KEY: FLAT_KEY }, says: "line breaks lost" },
    {
      args: ["app", "--dir", EMPTY],
      env: { ...APP, PRIVATE_KEY: "", PRIVATE_KEY_PATH: NOT_A_KEY },
      says: `PRIVATE_KEY_PATH ${NOT_A_KEY} is not a private key`,
    },
    {
      args: ["app", "--dir", EMPTY],
      env: { ...APP, PRIVATE_KEY: "", PRIVATE_KEY_PATH: "/no/such.pem" },
      says: "PRIVATE_KEY_PATH /no/such.pem: ENOENT",
    },
    { args: ["app", "--dir", EMPTY], env: { APP_ID: "12" }, says: "the environment variable PRIVATE_KEY is required" },
    { args: ["app", "--dir", EMPTY], env: { APP_ID: "12", PRIVATE_KEY: KEY }, says: "the environment variable WEBHOOK_SECRET is required" },
    { args: ["app", "--dir", EMPTY], env: { ...APP, PORT: "abc" }, says: 'PORT must be a whole number, not "abc"' },
    { args: ["app", "--dir", EMPTY], env: { ...APP, FORGE_RECONCILE_SECONDS: "-1" }, says: "FORGE_RECONCILE_SECONDS" },
    { args: ["app", "--dir", EMPTY], env: { ...APP, FORGE_PACE: "fast" }, says: 'FORGE_PACE "fast"' },
    { args: ["app", "--dir", EMPTY], env: { NODE_ENV: "production" }, says: "required in production" },
  ],
  doctor: [
    { args: ["doctor", "--repo", "no-slash"], says: "--repo" },
    { args: ["doctor", "--repo", "a/b/c"], says: '--repo "a/b/c"' },
    { args: ["doctor", "--dir", "no/such/dir"], says: "--dir no/such/dir" },
    { args: ["doctor", "--dir", ""], says: '--dir "": expected a folder' },
    { args: ["doctor", "--repo", "a/b", "--api-url", "not a url"], says: "--api-url" },
    { args: ["doctor", "--repo", "a/b", "--api-url", "ftp://x"], says: '--api-url "ftp://x": expected an http(s) URL' },
    { args: ["doctor", "--repo"], says: "--repo" },
    { args: ["doctor", "--bogus"], says: "--bogus" },
    { args: ["doctor", "--json", "extra"], says: "too many arguments" },
    { args: ["doctor", "--repo", "a/b"], env: { APP_ID: "abc", PRIVATE_KEY: KEY }, says: `APP_ID "abc": expected the App's id` },
    { args: ["doctor", "--repo", "a/b"], env: { APP_ID: "12", PRIVATE_KEY: "not a key" }, says: "PRIVATE_KEY is not a private key" },
    { args: ["doctor", "--repo", "a/b"], env: { APP_ID: "12", PRIVATE_KEY_PATH: NOT_A_KEY }, says: "is not a private key" },
    { args: ["doctor", "--repo", "a/b"], env: { APP_ID: "12" }, says: "APP_ID is set but not the App's private key" },
    { args: ["doctor", "--repo", "a/b"], env: { PRIVATE_KEY: KEY }, says: "the App's private key is set but not APP_ID" },
  ],
};

/** `forge spawn` keeps its own contract (docs/runner.md#exit-codes): exit 2 means "depth exceeded", so a bad option is exit 1 with one JSON line. */
const SPAWN_ROWS: Row[] = [
  { args: ["spawn"], says: "--prompt" },
  { args: ["spawn", "--prompt"], says: "--prompt" },
  { args: ["spawn", "--prompt", ""], says: "--prompt or --prompt-file is required" },
  { args: ["spawn", "--prompt-file", "no-such.md"], says: "--prompt-file no-such.md" },
  { args: ["spawn", "--prompt-file", "src"], says: "--prompt-file src" },
  { args: ["spawn", "--prompt", "p", "--system-prompt", "no-such.md"], says: "--system-prompt no-such.md" },
  { args: ["spawn", "--prompt", "p", "--extra-context", "no-such.md"], says: "--extra-context no-such.md" },
  { args: ["spawn", "--prompt", "p", "--cwd", "README.md"], says: "--cwd README.md" },
  { args: ["spawn", "--prompt", "p", "--cwd", "no/such/dir"], says: "--cwd no/such/dir" },
  { args: ["spawn", "--prompt", "p", "--session-dir", "README.md"], says: "--session-dir README.md" },
  { args: ["spawn", "--prompt", "p", "--session-dir", UNWRITABLE], says: `--session-dir ${UNWRITABLE}: cannot write there` },
  { args: ["spawn", "--prompt", "p", "--max-depth", "abc"], says: "--max-depth" },
  { args: ["spawn", "--prompt", "p", "--max-depth", "-1"], says: "--max-depth" },
  { args: ["spawn", "--prompt", "p", "--timeout", "0"], says: "--timeout" },
  { args: ["spawn", "--prompt", "p", "--idle-timeout", "0"], says: "--idle-timeout" },
  { args: ["spawn", "--prompt", "p", "--max-turns", "-1"], says: "--max-turns" },
  {
    args: ["spawn", "--prompt", "p", "--adapter", "robot"],
    says: "--adapter must be one of claude, codex, gemini, opencode, qwen, copilot, command",
  },
  { args: ["spawn", "--prompt", "p", "--agent-type", "nope"], says: "--agent-type" },
  { args: ["spawn", "--prompt", "p", "--output-format", "xml"], says: "--output-format must be text or json" },
  { args: ["spawn", "--prompt", "p", "--pass-env", "1BAD"], says: `--pass-env: "1BAD" is not an environment variable's name` },
  { args: ["spawn", "--prompt", "p", "--bogus"], says: "--bogus" },
];

const STACK_FRAME = /^\s+at /m;

/** Runs `forge <args>` as a process of its own, from the TypeScript sources. */
function forge(row: Row): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "src/cli/main.ts", ...row.args],
      { cwd: ROOT, timeout: 120_000, env: { ...process.env, ...CLEAN_ENV, ...row.env } },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, stdout, stderr }),
    );
  });
}

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

/** Runs in-process, with the environment the child processes get. */
async function inProcess(row: Row): Promise<Run> {
  const env = { ...CLEAN_ENV, ...row.env };
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try {
    const r = await runForge(row.args, ROOT);
    return { code: r.code, stdout: r.out, stderr: r.err };
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

function expectOneLine(row: Row, r: Run): void {
  const what = `forge ${row.args.join(" ")}${row.env ? ` (${Object.keys(row.env).join(", ")})` : ""}`;
  expect(r.stderr, what).not.toMatch(STACK_FRAME);
  expect(r.code, `${what}: ${r.stderr}`).toBe(row.code ?? 2);
  if (row.lines === "each") {
    const command = row.args[0]!;
    for (const line of r.stderr.trimEnd().split("\n")) expect(line, what).toMatch(new RegExp(`^forge ${command}: \\S`));
  } else expect(r.stderr, what).toMatch(/^forge\b[^\n]*: [^\n]+\n$/);
  if (typeof row.says === "string") expect(r.stderr, what).toContain(row.says);
  else expect(r.stderr, what).toMatch(row.says);
  expect(r.stdout, what).toBe("");
}

function expectSpawnBadOptions(row: Row, r: Run): void {
  const what = `forge ${row.args.join(" ")}`;
  expect(r.stderr, what).not.toMatch(STACK_FRAME);
  expect(r.code, `${what}: ${r.stderr}`).toBe(1);
  expect(r.stderr.split("\n"), what).toHaveLength(2);
  const line = JSON.parse(r.stderr) as { status: string; error: { code: string; message: string } };
  expect(line.status, what).toBe("error");
  expect(line.error.code, what).toBe("bad_options");
  expect(line.error.message, what).toContain(row.says);
  expect(r.stdout, what).toBe("");
}

describe("bad input", () => {
  it("the table covers every command with more than 80 rows", () => {
    const commands = [...Object.keys(ROWS), "spawn"];
    const registered = COMMANDS.length;
    expect(commands.filter((c) => c !== "(no command)")).toHaveLength(registered);
    for (const [command, rows] of Object.entries(ROWS))
      for (const row of rows) expect(row.args[0] === command || command === "(no command)", JSON.stringify(row.args)).toBe(true);
    expect(Object.values(ROWS).flat().length + SPAWN_ROWS.length).toBeGreaterThanOrEqual(80);
  });

  for (const [command, rows] of Object.entries(ROWS)) {
    it(`forge ${command}: one line naming what is wrong, its exit code, no stack trace, nothing started (${rows.length} rows)`, async () => {
      for (const row of rows) expectOneLine(row, await inProcess(row));
    });
  }

  it(`forge spawn: one JSON line with bad_options naming the option, exit 1 (2 means depth exceeded) (${SPAWN_ROWS.length} rows)`, async () => {
    for (const row of SPAWN_ROWS) expectSpawnBadOptions(row, await inProcess(row));
  });

  it("as child processes: the first two rows of every command, and of spawn", async () => {
    const picked = [
      ...Object.values(ROWS).flatMap((rows) => rows.slice(0, 2).map((row) => ({ row, spawn: false }))),
      ...SPAWN_ROWS.slice(0, 2).map((row) => ({ row, spawn: true })),
      // The six that failed before (issue 26): a stack trace, an OpenSSL message, a demo that ran, internal errors.
      { row: ROWS.app!.find((r) => r.env?.APP_ID === "abc")!, spawn: false },
      { row: ROWS.app!.find((r) => r.env?.PRIVATE_KEY === "not a key")!, spawn: false },
      { row: ROWS.demo!.find((r) => r.args.includes(UNWRITABLE))!, spawn: false },
      { row: ROWS.report!.find((r) => r.args.includes("README.md/x"))!, spawn: false },
      { row: ROWS.init!.find((r) => r.args.includes(GITHUB_IS_A_FILE))!, spawn: false },
      { row: ROWS.demo!.find((r) => r.lines === "each")!, spawn: false },
    ];
    const results = await pool(picked, async (c) => ({ ...c, r: await forge(c.row) }));
    for (const { row, spawn, r } of results)
      if (spawn) expectSpawnBadOptions(row, r);
      else expectOneLine(row, r);
  }, 600_000);
});
