// Bundles the Action (action/src/entry.ts) into action/dist/index.js, the agents' `forge`
// command (action/src/forge-entry.ts: spawn, validate) into action/dist/forge.js, and the tick mode's
// reconciler (src/app/tick-entry.ts, the App's own code; index.js loads it only in tick mode) into
// action/dist/tick.js, with esbuild: one ESM file
// for Node 20+, chunks for what is loaded lazily (the artifact client), and the agent layer's
// built-in prompts copied beside it. `node action/build.mjs --outdir <dir>` builds elsewhere (the
// stale-dist test compares the two).
import { cp, mkdir, readdir, rm } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.dirname(here);
const i = process.argv.indexOf("--outdir");
const outdir = i > 0 ? path.resolve(process.argv[i + 1]) : path.join(here, "dist");

await rm(outdir, { recursive: true, force: true });
await build({
  entryPoints: {
    index: path.join(here, "src/entry.ts"),
    forge: path.join(here, "src/forge-entry.ts"),
    tick: path.join(root, "src/app/tick-entry.ts"),
  },
  outdir,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  // Stable output: no absolute paths, no timestamps, no source maps, so a rebuild is byte-identical.
  sourcemap: false,
  minify: false,
  legalComments: "none",
  logLevel: "warning",
  absWorkingDir: root,
  // Paths in the bundle stay relative to the checkout even when node_modules is a symlink (a
  // worktree sharing another's), so the output does not depend on where it was built.
  preserveSymlinks: true,
  // Some bundled CommonJS dependencies call require(); ESM output needs one.
  banner: {
    js: "import { createRequire as __forgeCreateRequire } from 'node:module';\nconst require = __forgeCreateRequire(import.meta.url);",
  },
});

const prompts = path.join(root, "src/agent/prompts");
const files = (await readdir(prompts).catch(() => [])).filter((f) => f.endsWith(".md"));
if (files.length) {
  await mkdir(path.join(outdir, "prompts"), { recursive: true });
  for (const f of files) await cp(path.join(prompts, f), path.join(outdir, "prompts", f));
}
console.log(`built ${path.relative(root, outdir) || outdir}`);
