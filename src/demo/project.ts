/**
 * The small real project `forge demo` seeds: the start of `textkit`, a JavaScript library with JSDoc
 * types and `node --test` tests — nothing to install, so each agent job and the final check take
 * well under a second. The plan's tasks write the rest.
 */
export const DEMO_OWNER = "acme";
export const DEMO_REPO = "textkit";
export const FULL = `${DEMO_OWNER}/${DEMO_REPO}`;
export const PERSON = "octocat";
/** The repository's `ANTHROPIC_API_KEY` secret, a dummy: the job's model proxy holds it, the agent never sees it. */
export const ANTHROPIC_SECRET = "sk-ant-forge-demo-dummy";

/**
 * The agent's isolation (docs/runner.md#isolation): `auto`, Forge's default — its own OS user where the
 * machine allows it (root, or passwordless sudo, with useradd and setpriv), else the runner's user with a
 * warning in each job's log; the result says which (`isolation`, read from the jobs' logs).
 */
export const ISOLATION = "auto";

/**
 * The project's own CI, as most repositories have one, in two workflows. `ci.yml`: its check (no
 * work-in-progress marker committed) on every push to main and to Forge's agent branches
 * (forge/<run>/<task>/<attempt>; not the run's journal nor its integration branch, which only
 * receives merged PRs). Its job `check` is the demo's required check (`required_checks: [check]`):
 * a task PR merges only once it passes on the head, and its failure starts a fix revision. It runs
 * on the runners' pushes because the demo's agent workflow pushes with a machine user's token
 * (`FORGE_PUSH_TOKEN`), not the job's GITHUB_TOKEN. `test.yml`: the tests, on main and on pull
 * requests to it (the run's final PR). The App tells these runs from the agents' jobs. A newer push
 * to a branch cancels the check still running on its older head (`concurrency`, cancel-in-progress):
 * a runner pushes an attempt's stages one after another, and only the head's check counts.
 */
export const CI_WORKFLOW = `name: CI
on:
  push:
    branches: ["main", "forge/*/*/*"]
# A newer push to the same branch supersedes the check of the older head (as most projects do).
concurrency:
  group: ci-\${{ github.ref }}
  cancel-in-progress: true
jobs:
  check:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: node scripts/check.js
`;

export const TEST_WORKFLOW = `name: Tests
on:
  push:
    branches: [main]
  pull_request:
    branches: [main]
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

/** The project's own check: no work-in-progress marker (`*.wip`) is committed; each found is a GitHub annotation. */
export const CHECK_SCRIPT = `// @ts-check
// No work-in-progress marker (*.wip) may be committed: each one found fails CI with an annotation.
import { readdirSync } from "node:fs";
import path from "node:path";

/** @type {string[]} */
const found = [];
/** @param {string} dir */
function walk(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if ([".git", "node_modules", ".forge"].includes(e.name)) continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p);
    else if (e.name.endsWith(".wip")) found.push(path.relative(".", p).split(path.sep).join("/"));
  }
}
walk(".");
for (const f of found) console.log(\`::error file=\${f},line=1::\${f} is a work-in-progress marker: finish the work and delete it\`);
if (found.length > 0) {
  console.error(\`\${found.length} work-in-progress marker(s) committed\`);
  process.exit(1);
}
console.log("no work-in-progress markers");
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
    "scripts/check.js": CHECK_SCRIPT,
    ".github/workflows/ci.yml": CI_WORKFLOW,
    ".github/workflows/test.yml": TEST_WORKFLOW,
  };
}
