// The second half of `npm run build`: tsc compiles src/ into dist/; this copies beside the compiled
// code the files it reads at run time that are not TypeScript — the local GitHub's trimmed GitHub
// descriptions (src/local-github/spec/*.json), its agents' commands (*/bin/*.mjs), the agents'
// built-in prompts (src/agent/prompts/*.md) — so dist/ runs on its own, as the installed package does.
// READMEs stay in src/.
import { cpSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const src = path.join(root, "src");
const dist = path.join(root, "dist");

let copied = 0;
for (const e of readdirSync(src, { recursive: true, withFileTypes: true })) {
  if (!e.isFile() || e.name.endsWith(".ts") || e.name === "README.md") continue;
  const from = path.join(e.parentPath, e.name);
  cpSync(from, path.join(dist, path.relative(src, from)), { preserveTimestamps: true });
  copied++;
}
console.log(`copy-assets: ${copied} files from src/ to dist/`);
