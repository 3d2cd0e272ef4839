#!/usr/bin/env node
// Forge's release (README.md, "Releases"; .github/workflows/release.yml runs it): from the checked-out
// commit, with the version package.json says —
//  1. checks: a version x.y.z, the package publishable (not private, MIT with its LICENSE), the
//     templates' `forge-dev/forge/action@v<major>` naming this major, the tag v<version> not taken;
//  2. builds: dist/ (`npm run build`), and action/dist rebuilt aside and compared with the committed
//     one, byte for byte (GitHub runs the committed action/dist, never action/src);
//  3. packs the tarball and checks it holds the CLI, the action's bundle and the LICENSE;
//  4. publishes it to npm, then tags the commit: v<version> (immutable: never moved, never reused)
//     and v<major> moved to it (what `uses: forge-dev/forge/action@v<major>` resolves to).
// `--dry-run` (what CI runs) does all of it but step 4, which it runs as `npm publish --dry-run`
// and says which tags it would make. `--out <dir>` keeps the tarball there.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const ACTION = "forge-dev/forge/action";
const { values } = parseArgs({ options: { "dry-run": { type: "boolean" }, out: { type: "string" } }, strict: true });
const dryRun = !!values["dry-run"];

/** One line on stderr and exit 1: what stops the release. */
function fail(message) {
  console.error(`release: ${message}`);
  process.exit(1);
}

function run(cmd, args, { quiet = false } = {}) {
  try {
    return execFileSync(cmd, args, {
      cwd: ROOT,
      encoding: "utf8",
      stdio: ["ignore", "pipe", quiet ? "pipe" : "inherit"],
      maxBuffer: 64 << 20,
    }).trim();
  } catch (e) {
    fail(`${cmd} ${args.join(" ")} failed${e.stderr ? `: ${String(e.stderr).trim().split("\n").at(-1)}` : ""}`);
  }
}

function step(title) {
  console.log(`▸ ${title}`);
}

function files(dir, prefix = "") {
  return readdirSync(path.join(dir, prefix), { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? files(dir, path.join(prefix, e.name)) : [path.join(prefix, e.name)]))
    .sort();
}

// 1. What is released, and whether it may be.
step("checks");
const pkg = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8"));
const m = /^(\d+)\.(\d+)\.(\d+)$/.exec(pkg.version ?? "");
if (!m) fail(`package.json's version ${JSON.stringify(pkg.version)} is not x.y.z`);
const version = pkg.version;
const major = `v${m[1]}`;
const tag = `v${version}`;
if (pkg.private) fail("package.json says private: npm refuses to publish it");
if (pkg.license !== "MIT" || !/^MIT License$/m.test(readFileSync(path.join(ROOT, "LICENSE"), "utf8")))
  fail("package.json's license and the LICENSE file must both say MIT");
for (const file of readdirSync(path.join(ROOT, "templates/workflows"))) {
  const text = readFileSync(path.join(ROOT, "templates/workflows", file), "utf8");
  for (const [, ref] of text.matchAll(new RegExp(`uses: ${ACTION}@(\\S+)`, "g")))
    if (ref !== major) fail(`templates/workflows/${file} uses ${ACTION}@${ref}, but this release's major tag is ${major}`);
}
if (!readFileSync(path.join(ROOT, "README.md"), "utf8").includes(`${ACTION}@${major}`))
  fail(`README.md does not name ${ACTION}@${major}, the tag this release moves`);
const head = run("git", ["rev-parse", "HEAD"]);
const taken = run("git", ["tag", "--list", tag]);
if (taken) {
  const at = run("git", ["rev-list", "-n", "1", tag]);
  // Version tags are never moved: a new release needs a new version. A dry run (CI, between
  // releases) says so and goes on, so that the rest is still checked.
  const why = `the tag ${tag} exists (at ${at.slice(0, 12)}): raise the version in package.json`;
  if (!dryRun) fail(why);
  if (at !== head) console.log(`  note: ${why} before the next release`);
}
// The remote's tags too, before anything is published: a push refused after the publish would leave a package without its tag.
if (!dryRun && run("git", ["ls-remote", "--tags", "origin", `refs/tags/${tag}`]))
  fail(`origin has the tag ${tag}: raise the version in package.json`);
const dirty = run("git", ["status", "--porcelain", "--untracked-files=no"]);
if (dirty && !dryRun) fail(`the checkout has changes; a release is made from a commit:\n${dirty}`);
console.log(`  ${pkg.name}@${version} from ${head.slice(0, 12)}${dirty ? " (dry run of a checkout with changes)" : ""}`);

// 2. The build, and the committed action bundle against a fresh one.
step("build: dist/");
run("npm", ["run", "--silent", "build"]);
step("action/dist is what the sources build to");
const fresh = mkdtempSync(path.join(tmpdir(), "forge-release-action-"));
try {
  run("node", [path.join(ROOT, "action/build.mjs"), "--outdir", fresh], { quiet: true });
  const committed = path.join(ROOT, "action/dist");
  const want = files(fresh);
  const have = existsSync(committed) ? files(committed) : [];
  const stale = [
    ...want.filter((f) => !have.includes(f) || !readFileSync(path.join(fresh, f)).equals(readFileSync(path.join(committed, f)))),
    ...have.filter((f) => !want.includes(f)),
  ];
  if (stale.length)
    fail(`action/dist is stale (${stale.slice(0, 5).join(", ")}${stale.length > 5 ? ", …" : ""}): run npm run build:action and commit it`);
} finally {
  rmSync(fresh, { recursive: true, force: true });
}

// 3. The tarball.
step("pack");
const out = values.out ? path.resolve(values.out) : mkdtempSync(path.join(tmpdir(), "forge-release-"));
const [packed] = JSON.parse(run("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", out], { quiet: true }));
const inside = new Set(packed.files.map((f) => f.path));
for (const need of [
  "LICENSE",
  "bin/forge.js",
  "dist/cli/main.js",
  "action/action.yml",
  "action/dist/index.js",
  "templates/workflows/forge-agent.yml",
])
  if (!inside.has(need)) fail(`the tarball has no ${need}`);
const tarball = path.join(out, packed.filename);
console.log(`  ${tarball} (${packed.files.length} files, ${(packed.size / 1e6).toFixed(1)} MB)`);

// 4. Publish, then tag.
step(dryRun ? "publish (dry run)" : "publish");
run("npm", ["publish", tarball, "--ignore-scripts", ...(dryRun ? ["--dry-run"] : ["--provenance"])], { quiet: true });
if (dryRun) {
  console.log(`release ${version} (dry run): would publish ${pkg.name}@${version}, tag ${tag} and move ${major} to ${head.slice(0, 12)}`);
} else {
  step(`tags: ${tag}, ${major}`);
  run("git", ["tag", "--annotate", tag, "--message", `Forge ${version}`, head]);
  run("git", ["tag", "--force", "--annotate", major, "--message", `Forge ${version} (the newest ${major}.x.y)`, head]);
  run("git", ["push", "origin", `refs/tags/${tag}`]);
  run("git", ["push", "--force", "origin", `refs/tags/${major}`]);
  console.log(`release ${version}: published ${pkg.name}@${version}, tagged ${tag}, moved ${major} to ${head.slice(0, 12)}`);
}
