// The second half of `npm run build`: tsc compiles src/ into dist/; this
//  - copies beside the compiled code the files it reads at run time that are not TypeScript — the
//    local GitHub's trimmed GitHub descriptions (src/local-github/spec/*.json), the commands of the
//    fake agents and the demo (*/bin/*.mjs), the agents' built-in prompts (src/agent/prompts/*.md) — so dist/ runs
//    on its own, as the installed package does (READMEs stay in src/);
//  - removes what an earlier build left in dist/ for a source that is gone (a moved or deleted
//    module), so the package never ships a stale one, and the folders that leaves empty. Nothing
//    else is deleted: other processes may be running from dist/ while it builds.
import { cpSync, existsSync, readdirSync, rmdirSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

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

console.log(`finish-build: ${copied} files copied from src/ to dist/${removed ? `, ${removed} stale files removed` : ""}`);
