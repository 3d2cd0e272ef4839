// Nothing in a workflow is fetched by a bare name: every third-party action is pinned to a full
// commit SHA (with its version in a comment, for people and for update tools), and no `run:` step
// lets npx — or a global install — pull a package from the registry by name. A job of these
// workflows may hold the App's private key or a model key; a moved tag or a squatted package name
// would run a stranger's code with it.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { isMap, isScalar, parseDocument, visit } from "yaml";

const DIRS = ["templates/workflows", ".github/workflows"];

/**
 * Actions exempt from pinning: Forge's own action. The templates ship in this repository, released
 * together with the action from the same tag, and a commit cannot name its own SHA — so the template
 * names the release (`@v1`) that this repository publishes, not a third party's code. Installers who
 * want a pin replace it with the SHA of the release they copied the template from.
 */
const OWN_ACTIONS = ["forge-dev/forge/action"];

export interface Finding {
  line: number;
  problem: string;
}

const SHA_PINNED = /^[^@\s]+@[0-9a-f]{40}$/;
const VERSION_COMMENT = /^[ \t]+#[ \t]*v\d[^\s]*/;

/** A `uses:` that runs code from elsewhere without naming its exact content, or undefined. */
function usesProblem(uses: string, restOfLine: string): string | undefined {
  if (uses.startsWith("./") || uses.startsWith("../")) return undefined; // this repository's own files
  if (uses.startsWith("docker://"))
    return /@sha256:[0-9a-f]{64}$/.test(uses) ? undefined : `${uses} is not pinned to an image digest (@sha256:…)`;
  if (OWN_ACTIONS.includes(uses.split("@")[0]!)) return undefined;
  if (!SHA_PINNED.test(uses)) return `${uses} is not pinned to a full commit SHA`;
  if (!VERSION_COMMENT.test(restOfLine)) return `${uses} has no "# v…" comment naming its version`;
  return undefined;
}

/** Commands of a `run:` script that may download a package by name and run it. */
function runProblems(script: string): string[] {
  const found: string[] = [];
  // Each simple command: split at separators, so `a && npx b` is two.
  for (const command of script.split(/&&|\|\||[;|\n`()]/)) {
    const words = command.trim().split(/\s+/).filter(Boolean);
    // Leading `VAR=value` assignments and wrappers do not change what runs.
    while (words.length && (/^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0]!) || ["env", "sudo", "exec", "time"].includes(words[0]!)))
      words.shift();
    const [tool, sub, ...rest] = words;
    const text = words.join(" ");
    if (tool === "npx" || (tool === "npm" && (sub === "exec" || sub === "x"))) {
      const opts = tool === "npx" ? [sub, ...rest] : rest;
      let offline = false;
      for (const o of opts) {
        if (o === undefined || !o.startsWith("-") || o === "--") break;
        if (o === "--no-install" || o === "--no") offline = true;
      }
      if (!offline) found.push(`\`${text}\` may download a package by name (use \`npx --no-install …\` or a pinned devDependency)`);
    } else if (tool === "npm" && ["install", "i", "add", "isntall", "in"].includes(sub ?? "") && rest.some((o) => o === "-g" || o === "--global")) {
      found.push(`\`${text}\` installs a package globally by name`);
    } else if (tool === "bunx" || ((tool === "pnpm" || tool === "yarn") && sub === "dlx")) {
      found.push(`\`${text}\` downloads a package by name and runs it`);
    }
  }
  return found;
}

/** Every problem of a workflow file's text, with its line (1-based). */
export function checkWorkflow(source: string): Finding[] {
  const doc = parseDocument(source);
  const findings: Finding[] = [];
  const lineOf = (offset: number) => source.slice(0, offset).split("\n").length;
  if (doc.errors.length) return doc.errors.map((e) => ({ line: lineOf(e.pos[0]), problem: `invalid YAML: ${e.message}` }));
  visit(doc, {
    Pair(_, pair) {
      if (!isScalar(pair.key) || !isScalar(pair.value) || typeof pair.value.value !== "string" || !pair.value.range) return;
      const [start, end] = pair.value.range;
      const eol = source.indexOf("\n", end);
      if (pair.key.value === "uses") {
        const problem = usesProblem(pair.value.value.trim(), source.slice(end, eol < 0 ? undefined : eol));
        if (problem) findings.push({ line: lineOf(start), problem });
      } else if (pair.key.value === "run") {
        for (const problem of runProblems(pair.value.value)) findings.push({ line: lineOf(start), problem });
      }
    },
  });
  return findings;
}

function workflowFiles(): string[] {
  return DIRS.flatMap((dir) =>
    readdirSync(dir)
      .filter((f) => /\.ya?ml$/.test(f))
      .map((f) => path.join(dir, f)),
  );
}

describe("workflows pin what they run", () => {
  it("finds the workflow files", () => {
    const files = workflowFiles();
    expect(files).toContain(path.join("templates/workflows", "forge-agent.yml"));
    expect(files).toContain(path.join("templates/workflows", "forge-tick.yml"));
    expect(files).toContain(path.join(".github/workflows", "ci.yml"));
  });

  for (const file of workflowFiles()) {
    it(`${file}: every third-party action is pinned to a commit SHA, and no run step fetches a package by name`, () => {
      const text = readFileSync(file, "utf8");
      expect(isMap(parseDocument(text).contents)).toBe(true);
      expect(checkWorkflow(text).map((f) => `${file}:${f.line}: ${f.problem}`)).toEqual([]);
    });
  }
});

describe("the checker", () => {
  const step = (body: string) => `on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n${body}`;

  it("reports an action pinned to a tag or branch", () => {
    const found = checkWorkflow(step("      - uses: actions/checkout@v4\n      - uses: actions/setup-node@main\n"));
    expect(found).toEqual([
      { line: 6, problem: "actions/checkout@v4 is not pinned to a full commit SHA" },
      { line: 7, problem: "actions/setup-node@main is not pinned to a full commit SHA" },
    ]);
  });

  it("reports a SHA pin without its version comment, and a short SHA", () => {
    const sha = "3d3c42e5aac5ba805825da76410c181273ba90b1";
    expect(checkWorkflow(step(`      - uses: actions/checkout@${sha}\n`))).toEqual([
      { line: 6, problem: `actions/checkout@${sha} has no "# v…" comment naming its version` },
    ]);
    expect(checkWorkflow(step(`      - uses: actions/checkout@${sha.slice(0, 7)} # v7.0.1\n`))[0]!.problem).toMatch(/not pinned/);
    expect(checkWorkflow(step(`      - uses: actions/checkout@${sha} # v7.0.1\n`))).toEqual([]);
  });

  it("reports a reusable workflow and a docker image by tag", () => {
    const wf = "on: push\njobs:\n  a:\n    uses: octo/ci/.github/workflows/x.yml@main\n  b:\n    runs-on: x\n    steps:\n      - uses: docker://alpine:3\n";
    expect(checkWorkflow(wf).map((f) => f.line)).toEqual([4, 8]);
  });

  it("lets local actions and Forge's own action through", () => {
    expect(checkWorkflow(step("      - uses: ./my-action\n      - uses: forge-dev/forge/action@v1\n"))).toEqual([]);
  });

  it("reports npx that may download, and global installs", () => {
    const run = (script: string) => checkWorkflow(step(`      - run: ${JSON.stringify(script)}\n`)).map((f) => f.problem);
    expect(run("npx --yes forge tick")).toEqual([expect.stringMatching(/`npx --yes forge tick` may download a package by name/)]);
    expect(run("npx forge tick")).toHaveLength(1);
    expect(run("npm ci && npx -y prettier --check .")).toHaveLength(1);
    expect(run("FOO=1 npx forge")).toHaveLength(1);
    expect(run("npm exec --yes -- forge tick")).toHaveLength(1);
    expect(run("npm install -g @forge-dev/forge")).toEqual([expect.stringMatching(/installs a package globally/)]);
    expect(run("npm i -g forge")).toHaveLength(1);
    expect(run("npm i --global forge")).toHaveLength(1);
    expect(run("pnpm dlx forge")).toHaveLength(1);
    // Offline npx runs only what is installed; a local install is the lockfile's business.
    expect(run("npx --no-install forge tick")).toEqual([]);
    expect(run("npx --no forge tick")).toEqual([]);
    expect(run("npm ci && npm test")).toEqual([]);
  });

  it("reads block scripts line by line", () => {
    const found = checkWorkflow(step("      - run: |\n          npm ci\n          npx --yes forge tick\n"));
    expect(found).toEqual([{ line: 6, problem: expect.stringMatching(/npx --yes forge tick/) }]);
  });
});
