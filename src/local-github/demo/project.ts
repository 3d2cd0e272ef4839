/**
 * The small real project `forge demo` seeds: the start of `textkit`, a JavaScript library with JSDoc
 * types and `node --test` tests — nothing to install, so each agent job and the final check take
 * well under a second. The plan's tasks write the rest.
 */
export const DEMO_OWNER = "acme";
export const DEMO_REPO = "textkit";

export function projectFiles(): Record<string, string> {
  return {
    "README.md":
      "# textkit\n\nTiny text utilities for Node 20. Built by Forge's demo, one pull request per task.\n\n```sh\nnpm test   # node --test\n```\n",
    "package.json": `${JSON.stringify({ name: "textkit", version: "0.1.0", private: true, type: "module", exports: "./src/index.js", scripts: { test: "node --test" }, engines: { node: ">=20" } }, null, 2)}\n`,
    // TypeScript checks the JSDoc types when an editor opens the folder (no build, no install).
    "jsconfig.json": `${JSON.stringify({ compilerOptions: { checkJs: true, strict: true, module: "nodenext", target: "es2022", noEmit: true }, include: ["src", "test"] }, null, 2)}\n`,
    "AGENTS.md":
      "# Conventions\n\n- ESM JavaScript under `src/`, one module per feature, `// @ts-check` and JSDoc types.\n- Tests under `test/<module>.test.js` with `node:test` and `node:assert/strict`; run `npm test`.\n- No dependencies.\n",
    ".gitignore": "node_modules/\n",
  };
}
