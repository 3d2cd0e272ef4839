/**
 * The small real project `forge demo` seeds: the start of `textkit`, a JavaScript library with JSDoc
 * types and `node --test` tests — nothing to install, so each agent job and the final check take
 * well under a second. The plan's tasks write the rest.
 */
export const DEMO_OWNER = "acme";
export const DEMO_REPO = "textkit";

/**
 * The project's own CI, as most repositories have one: its tests on every push and pull request —
 * Forge's task branches included (not the run's journal writes). Its runs are not the agents' jobs,
 * and the App tells them apart.
 */
export const CI_WORKFLOW = `name: CI
on:
  push:
    branches-ignore: ["forge/*/_state"]
  pull_request:
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-node@v4
        with:
          node-version: 20
      - run: npm test
`;

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
    ".github/workflows/ci.yml": CI_WORKFLOW,
  };
}
