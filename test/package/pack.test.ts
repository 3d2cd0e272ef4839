/**
 * The package installs and runs: `npm pack` (which builds dist/ through `prepare`), then the
 * tarball installed into an empty folder, as a user would, and its `forge` run there — --help,
 * validate and graph on an example plan it ships, and the whole demo. Also what the tarball holds:
 * the compiled CLI, the local GitHub with its assets, the action's bundle, the templates and
 * example plans, and no tests or sources.
 */
import { execFile } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../..");
const NAME = (JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { name: string }).name;

/** The environment without what an enclosing `npm test` sets for its own script (npm_config_*, npm_package_*…). */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!/^npm_/i.test(k) && k !== "INIT_CWD" && k !== "VITEST" && k !== "VITEST_POOL_ID" && k !== "VITEST_WORKER_ID") env[k] = v;
  env.PATH = `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ""}`;
  return env;
}

async function exec(file: string, args: string[], cwd: string, timeout: number): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(file, args, { cwd, env: cleanEnv(), timeout, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number | string; stdout?: string; stderr?: string };
    return { code: typeof e.code === "number" ? e.code : -1, stdout: e.stdout ?? "", stderr: e.stderr ?? String(err) };
  }
}

interface PackResult {
  name: string;
  filename: string;
  size: number;
  unpackedSize: number;
  files: { path: string }[];
}

const work = mkdtempSync(path.join(tmpdir(), "forge-pack-test-"));
// Readable as a project folder is (mkdtemp makes it 0700): the demo's agents run as OS users of their
// own (`isolation: auto`), and they must read the installed package's scripted agent.
chmodSync(work, 0o755);
const project = path.join(work, "project");
let packed: PackResult;
let forge: string;
let pkgDir: string;

// The installed package holds its dependencies (hundreds of MB): removing them can take longer than
// the default hook timeout on a loaded machine.
afterAll(() => rm(work, { recursive: true, force: true }), 180_000);

describe("the npm package", () => {
  beforeAll(async () => {
    const pack = await exec("npm", ["pack", "--json", "--pack-destination", work], ROOT, 300_000);
    expect(pack.code, pack.stderr.slice(-4000)).toBe(0);
    // `prepare` (the build) prints on stdout too: the JSON is what follows it.
    const json = pack.stdout.slice(pack.stdout.search(/^\[/m));
    packed = (JSON.parse(json) as PackResult[])[0]!;

    mkdirSync(project);
    writeFileSync(
      path.join(project, "package.json"),
      `${JSON.stringify({ name: "forge-pack-check", version: "1.0.0", private: true }, null, 2)}\n`,
    );
    const install = await exec(
      "npm",
      ["install", "--prefer-offline", "--no-audit", "--no-fund", path.join(work, packed.filename)],
      project,
      300_000,
    );
    expect(install.code, install.stderr.slice(-4000)).toBe(0);
    forge = path.join(project, "node_modules", ".bin", "forge");
    pkgDir = path.join(project, "node_modules", ...NAME.split("/"));
  }, 600_000);

  it("is named for Forge on the registry, and holds the built CLI, the local GitHub, the action, templates and examples — no tests, no sources", () => {
    expect(packed.name).toBe(NAME);
    expect(NAME).not.toBe("forge");
    const files = packed.files.map((f) => f.path);
    for (const f of [
      "bin/forge.js",
      "dist/cli/main.js",
      "dist/local-github/server.js",
      "dist/demo/main.js",
      "dist/demo/bin/forge-demo-agent.mjs",
      "dist/fake-agents/bin/forge-scripted-agent.mjs",
      "dist/local-github/spec/api.json",
      "dist/local-github/spec/routes.json",
      "dist/local-github/spec/webhooks.json",
      "dist/agent/prompts/1.md",
      "action/action.yml",
      "action/dist/index.js",
      "templates/workflows/forge-agent.yml",
      "examples/plans/textkit/dag.json",
      "app.yml",
    ]) {
      expect(files, f).toContain(f);
    }
    expect(
      files.filter((f) => /^(test|src|bench|scripts|\.ci|\.github)\//.test(f) || /\.test\.[jt]s$/.test(f) || f.endsWith(".map")),
    ).toEqual([]);
  });

  it("installs a forge that prints its help", async () => {
    const r = await exec(forge, ["--help"], project, 60_000);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("Usage: forge");
    for (const c of ["validate", "graph", "spawn", "sim", "tick", "demo", "init", "app", "doctor"]) expect(r.stdout).toContain(`  ${c} `);

    // Each command's own help is its text only: not the build's trailing `//# sourceMappingURL=` comment.
    for (const c of ["validate", "graph", "spawn", "sim", "tick", "demo", "init", "app", "doctor", "report"]) {
      const h = await exec(forge, [c, "--help"], project, 60_000);
      expect(h.code, h.stderr).toBe(0);
      expect(h.stdout, c).not.toContain("sourceMappingURL");
      expect(h.stdout.trimEnd().split("\n").at(-1), c).not.toMatch(/^\s*$/);
    }
  });

  it("validates and draws an example plan it ships", async () => {
    const plan = path.join(pkgDir, "examples", "plans", "semver-lite");
    const v = await exec(forge, ["validate", plan], project, 60_000);
    expect(v).toEqual({
      code: 0,
      stdout: 'OK plan "semver-lite": 7 tasks, 1 refinery, 10 dependencies, 0 overlays, 2 specs\n',
      stderr: "",
    });
    const g = await exec(forge, ["graph", plan], project, 60_000);
    expect(g.code, g.stderr).toBe(0);
    expect(g.stdout.startsWith("flowchart TD\n")).toBe(true);
  });

  it("from the installed package, --agent claude without Claude Code (a development dependency of Forge) says how to install it, before anything starts", async () => {
    const env = { PATH: path.dirname(process.execPath) };
    const r = await run(forge, ["demo", "--agent", "claude"], { cwd: project, env, timeout: 60_000 }).then(
      (x) => ({ code: 0, ...x }),
      (e: { code: number; stdout: string; stderr: string }) => e,
    );
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(
      "forge demo: --agent claude: Claude Code is not installed (no claude command on PATH): install it with npm i -g @anthropic-ai/claude-code, or run the demo with the scripted agent (no --agent)\n",
    );
  });

  it("runs the demo from the installed package: every task merged, the final PR, the project's tests passing", async () => {
    const out = path.join(work, "demo-out");
    const r = await exec(forge, ["demo", "--json", "--out", out], project, 540_000);
    const result = JSON.parse(r.stdout || "{}") as {
      ok?: boolean;
      status?: string;
      problems?: string[];
      tasks?: { id: string; status: string }[];
      finalPr?: unknown;
      testsOnIntegration?: { ok: boolean };
      reportPath?: string;
    };
    expect(r.code, `${r.stderr.slice(-4000)}\n${JSON.stringify(result.problems)}`).toBe(0);
    expect(result.ok).toBe(true);
    expect(result.status).toBe("completed");
    expect(result.tasks?.length).toBe(12);
    for (const t of result.tasks ?? []) expect(t.status, t.id).toBe("MERGED");
    expect(result.finalPr).toBeDefined();
    expect(result.testsOnIntegration?.ok).toBe(true);
    expect(result.reportPath?.startsWith(out)).toBe(true);
  }, 600_000);
});
