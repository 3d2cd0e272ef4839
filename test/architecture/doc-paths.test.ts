/**
 * The documents cite files and folders that exist: README.md, CONTRIBUTING.md (its layout block
 * too), SECURITY.md, BENCHMARKS.md, the spec pages in docs/ and the READMEs of the code's folders
 * whose paths are the repository's (src/demo's and src/fake-agents' name their own bin/ files). A
 * file moved or renamed without its mentions fails here, with the line that cites it.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { missingPaths } from "./doc-paths.js";

const DOCS = [
  "CONTRIBUTING.md",
  "README.md",
  "SECURITY.md",
  "BENCHMARKS.md",
  "examples/README.md",
  "src/agent/README.md",
  "src/local-github/README.md",
  "src/local-github/latency/README.md",
  "src/local-github/runner/README.md",
  "test/chaos/README.md",
  ...readdirSync("docs")
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];

describe("the paths the documents cite", () => {
  it.each(DOCS)("%s cites only paths that exist", (doc) => {
    expect(missingPaths(doc)).toEqual([]);
  });

  it("no file cites the design notes the pages replaced (docs/README.md, Old citations)", () => {
    const old = new RegExp(["seed 00[0-9]", "DESIGN\\.md", "the seed's"].join("|"), "i");
    const found: string[] = [];
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const p = `${dir}/${e.name}`;
        if (e.isDirectory()) {
          if (!["node_modules", "dist"].includes(e.name) || dir === "action") walk(p);
        } else if (
          /\.(ts|js|mjs|md|json|ya?ml)$/.test(e.name) &&
          p !== "test/architecture/doc-paths.test.ts" &&
          old.test(readFileSync(p, "utf8"))
        )
          found.push(p);
      }
    };
    // docs/ may: its pages say where the code differs from the design notes.
    for (const dir of ["src", "action", "test", "schemas", "templates", "examples", "scripts", "bench"]) walk(dir);
    for (const f of ["README.md", "CONTRIBUTING.md", "SECURITY.md", "BENCHMARKS.md", "app.yml"])
      if (old.test(readFileSync(f, "utf8"))) found.push(f);
    expect(found).toEqual([]);
  });

  it("finds a cited path that does not exist, in code, a link and a layout block", () => {
    const dir = mkdtempSync(path.join("test", "architecture", ".doc-paths-"));
    try {
      const doc = path.join(dir, "probe.md");
      writeFileSync(
        doc,
        [
          "See `src/core/layout.ts`, `src/core/no-such.ts#anchor`, `schemas/*.schema.json`, `schemas/*.nothing` and `index.ts`.",
          "Read [the spec](../../../docs/README.md) and [a lost page](../../../docs/lost.md), not [this](https://example.com/x).",
          "```",
          "action/                     the Action: src/task/, src/captain.ts, dist/ (built)",
          "src/gone/                   a folder that moved",
          "```",
          "`.github/forge.yml` is the user's, `<planId>/dag.json` a placeholder.",
        ].join("\n"),
      );
      expect(missingPaths(doc.split(path.sep).join("/"))).toEqual([
        "line 1: src/core/no-such.ts",
        "line 1: schemas/*.nothing",
        "line 2: ../../../docs/lost.md",
        "line 4: action/src/captain.ts",
        "line 5: src/gone/",
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
