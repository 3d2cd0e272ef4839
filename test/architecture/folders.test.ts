/**
 * The folders' conventions (CONTRIBUTING.md, "Folders"): a folder's entry file is its `index.ts`,
 * never a module of the same name beside it; an entry names what it re-exports (no `export *`).
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
});
