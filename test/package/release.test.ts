/**
 * The release, as CI can run it (no network, no npm account): `.github/workflows/release.yml` is a
 * workflow GitHub accepts, started by hand with a dry run by default, and it runs
 * `scripts/release.mjs`; the script's dry run — the checks, dist/ built, the committed action/dist
 * compared with a fresh build, the tarball packed, `npm publish --dry-run` — passes on this checkout
 * and says which tags the real run makes: v<version> and the moving v<major> that
 * `uses: forge-dev/forge/action@v<major>` names.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import YAML from "yaml";
import { afterAll, describe, expect, it } from "vitest";
import { checkWorkflow } from "../../src/local-github/runner/workflow.js";

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../..");
const out = mkdtempSync(path.join(tmpdir(), "forge-release-test-"));
afterAll(() => rmSync(out, { recursive: true, force: true }));

const pkg = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { name: string; version: string; private?: boolean };

/** The environment without what an enclosing `npm test` sets for its own script (npm_config_*, npm_package_*…). */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k) && k !== "INIT_CWD"));
}

describe("the release", () => {
  it("is a workflow GitHub accepts, started by hand, a dry run unless asked otherwise, running scripts/release.mjs", async () => {
    const text = readFileSync(path.join(ROOT, ".github/workflows/release.yml"), "utf8");
    const checked = await checkWorkflow(text, ".github/workflows/release.yml");
    expect(checked.ok, checked.ok ? "" : checked.error.message).toBe(true);
    const doc = YAML.parse(text) as {
      on: Record<string, { inputs?: Record<string, { type: string; default: unknown }> }>;
      permissions: Record<string, string>;
      jobs: Record<string, { steps: { run?: string }[] }>;
    };
    expect(Object.keys(doc.on)).toEqual(["workflow_dispatch"]);
    expect(doc.on.workflow_dispatch!.inputs!["dry-run"]).toMatchObject({ type: "boolean", default: true });
    expect(doc.permissions).toEqual({ contents: "write", "id-token": "write" });
    const steps = Object.values(doc.jobs).flatMap((j) => j.steps.map((s) => s.run ?? ""));
    expect(steps.join("\n")).toContain("node scripts/release.mjs ${{ inputs.dry-run && '--dry-run' || '' }}");
  });

  it("dry run: checks, builds, finds action/dist fresh, packs and runs npm publish --dry-run; names the tags it would make", async () => {
    expect(pkg.private, "package.json must not say private: npm refuses to publish it").toBeUndefined();
    const major = `v${pkg.version.split(".")[0]}`;
    const { stdout } = await run(process.execPath, ["scripts/release.mjs", "--dry-run", "--out", out], {
      cwd: ROOT,
      env: cleanEnv(),
      timeout: 400_000,
      maxBuffer: 64 << 20,
    });
    expect(stdout).toMatch(/^▸ action\/dist is what the sources build to$/m);
    expect(stdout).toMatch(/^▸ publish \(dry run\)$/m);
    const tarball = path.join(out, `${pkg.name.replace(/^@/, "").replace("/", "-")}-${pkg.version}.tgz`);
    expect(existsSync(tarball), tarball).toBe(true);
    expect(stdout.trimEnd().split("\n").at(-1)).toMatch(
      new RegExp(
        `^release ${pkg.version} \\(dry run\\): would publish ${pkg.name}@${pkg.version}, tag v${pkg.version} and move ${major} to [0-9a-f]{12}$`,
      ),
    );
    // The major tag the release moves is the one the templates' workflows name.
    for (const file of ["forge-agent.yml", "forge-tick.yml"])
      expect(readFileSync(path.join(ROOT, "templates/workflows", file), "utf8")).toContain(`uses: forge-dev/forge/action@${major}\n`);
  }, 420_000);
});
