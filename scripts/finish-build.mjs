// The second half of `npm run build`: tsc compiles src/ into dist/; this
//  - copies beside the compiled code the files it reads at run time that are not TypeScript — the
//    local GitHub's trimmed GitHub descriptions (src/local-github/spec/*.json), the commands of the
//    fake agents and the demo (*/bin/*.mjs), the agents' built-in prompts (src/agent/prompts/*.md) — so dist/ runs
//    on its own, as the installed package does (READMEs stay in src/);
//  - bundles GitHub's workflow parser into the one module that imports it
//    (src/local-github/runner/workflow-parser.ts says why);
//  - removes what an earlier build left in dist/ for a source that is gone (a moved or deleted
//    module), so the package never ships a stale one, and the folders that leaves empty. Nothing
//    else is deleted: other processes may be running from dist/ while it builds.
import { cpSync, existsSync, readdirSync, rmdirSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const src = path.join(root, "src");
const dist = path.join(root, "dist");

const isAsset = (name) => !name.endsWith(".ts") && name !== "README.md";

let copied = 0;
for (const e of readdirSync(src, { recursive: true, withFileTypes: true })) {
  if (!e.isFile() || !isAsset(e.name)) continue;
  const from = path.join(e.parentPath, e.name);
  cpSync(from, path.join(dist, path.relative(src, from)), { preserveTimestamps: true });
  copied++;
}

// @actions/workflow-parser imports its JSON schemas without an import attribute, which plain Node
// refuses (actions/languageservices#387). Its importer's compiled output becomes a bundle of the
// importer, the parser and its schemas; @actions/expressions and yaml stay imports (dependencies of
// the package, shared with the rest of dist/), so do Node's modules.
const PARSER_IMPORTER = "local-github/runner/workflow-parser";
await build({
  entryPoints: [path.join(src, `${PARSER_IMPORTER}.ts`)],
  outfile: path.join(dist, `${PARSER_IMPORTER}.js`),
  allowOverwrite: true,
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node20",
  external: ["@actions/expressions", "@actions/expressions/*", "yaml"],
  sourcemap: false,
  legalComments: "none",
  logLevel: "warning",
  absWorkingDir: root,
  // Paths in the bundle stay relative to the checkout even when node_modules is a symlink.
  preserveSymlinks: true,
});
rmSync(path.join(dist, `${PARSER_IMPORTER}.js.map`), { force: true });

/** The source a file of dist/ was built or copied from. */
function sourceOf(rel) {
  const m = /^(.*)\.(js|d\.ts|js\.map|d\.ts\.map)$/.exec(rel);
  return path.join(src, m ? `${m[1]}.ts` : rel);
}

let removed = 0;
for (const e of readdirSync(dist, { recursive: true, withFileTypes: true })) {
  if (!e.isFile()) continue;
  const file = path.join(e.parentPath, e.name);
  const rel = path.relative(dist, file);
  if (existsSync(sourceOf(rel))) continue;
  rmSync(file, { force: true });
  removed++;
}
// A folder left empty (its sources moved) goes too, deepest first.
const folders = readdirSync(dist, { recursive: true, withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => path.join(e.parentPath, e.name))
  .sort((a, b) => b.length - a.length);
for (const folder of folders) if (readdirSync(folder).length === 0) rmdirSync(folder);

console.log(
  `finish-build: ${copied} files copied from src/ to dist/, GitHub's workflow parser bundled${removed ? `, ${removed} stale files removed` : ""}`,
);
