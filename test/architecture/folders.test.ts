/**
 * The folders' conventions (CONTRIBUTING.md, "Folders"): a folder's entry file is its `index.ts`,
 * never a module of the same name beside it; an entry names what it re-exports (no `export *`);
 * and every module of Forge is used by Forge — code only tests use lives in test/.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");
const CODE = ["src", "action/src"];

/** Every file under the code folders, as `src/…` paths. */
const FILES = CODE.flatMap((dir) =>
  readdirSync(path.join(ROOT, dir), { recursive: true, encoding: "utf8" }).map((f) => `${dir}/${f.split(path.sep).join("/")}`),
).sort();
const MODULES = FILES.filter((f) => f.endsWith(".ts"));

/** The programs: run by node, bundled by action/build.mjs, or started by the CLI, so nothing imports them. */
const PROGRAMS = new Set([
  "action/src/entry.ts",
  "action/src/forge-entry.ts",
  "src/app/main.ts",
  "src/app/tick-entry.ts",
  "src/cli/main.ts",
  "src/cli/sim-main.ts",
  "src/demo/main.ts",
  "src/local-github/main.ts",
]);
/** The fake agents stand in for an agent or its model for the tests (and some for the demo). */
const FOR_TESTS = "src/fake-agents/";

const IMPORT = /(?:^|\n)\s*(?:import|export)\s+(?:type\s+)?(?:[^;]*?\sfrom\s+)?["'](\.[^"']+)["']|\bimport\(\s*["'](\.[^"']+)["']\s*\)/g;

/** The build's scripts (scripts/generate-schemas.ts writes schemas/ from the formats' schemas). */
const SCRIPTS = readdirSync(path.join(ROOT, "scripts"))
  .filter((f) => f.endsWith(".ts"))
  .map((f) => `scripts/${f}`);

/** The modules of src/ and action/src/ that Forge's own modules and scripts import. */
function importedByForge(): Set<string> {
  const imported = new Set<string>();
  for (const file of [...MODULES, ...SCRIPTS])
    for (const m of readFileSync(path.join(ROOT, file), "utf8").matchAll(IMPORT))
      imported.add(path.posix.join(path.posix.dirname(file), (m[1] ?? m[2])!).replace(/\.js$/, ".ts"));
  // The bin/*.mjs commands import their module by URL.
  for (const file of FILES.filter((f) => /\/bin\/[^/]+\.mjs$/.test(f)))
    for (const m of readFileSync(path.join(ROOT, file), "utf8").matchAll(/new URL\("(\.\.\/[^"]+)\.js"/g))
      imported.add(path.posix.join(path.posix.dirname(file), `${m[1]}.ts`));
  return imported;
}

describe("the folders' conventions", () => {
  it("a folder's entry file is its index.ts, not a module of the same name beside it", () => {
    const folders = new Set(MODULES.map((f) => path.posix.dirname(f)));
    const beside = MODULES.filter((f) => folders.has(f.replace(/\.ts$/, "")));
    expect(beside, "move each into its folder as index.ts").toEqual([]);
  });

  it("an entry file names what it re-exports", () => {
    const star = MODULES.filter((f) => /(?:^|\n)\s*export\s+\*\s+from\s/.test(readFileSync(path.join(ROOT, f), "utf8")));
    expect(star).toEqual([]);
  });

  it("every module is used by Forge: a module only tests import belongs in test/", () => {
    const imported = importedByForge();
    const unused = MODULES.filter((f) => !imported.has(f) && !PROGRAMS.has(f) && !f.startsWith(FOR_TESTS));
    expect(unused).toEqual([]);
  });

  it("each program of the list exists", () => {
    for (const p of PROGRAMS) expect(MODULES, p).toContain(p);
  });
});
