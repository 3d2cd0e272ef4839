/**
 * `forge doctor`'s warnings against the local GitHub: each rule, protection or setting that would
 * stop Forge's branches, merges or final pull request is set through the local GitHub's API on a
 * repository otherwise set up as README.md says, and doctor names it — the rule, its source, the
 * branch, the effect, the fix — failing only for what stops Forge altogether. A clean repository
 * gives no warning. (README.md, "What forge doctor warns about", lists them.)
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import YAML from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { APP_MANIFEST } from "../../src/app/launch.js";
import { updateEnvFile } from "../../src/app/setup.js";
import { stateBranchRuleset } from "../../src/app/start-run.js";
import { AGENT_WORKFLOW_TEMPLATE } from "../../src/cli/commands/init.js";
import { appKeys } from "../../src/demo/app-keys.js";
import { createSim, type Sim } from "../../src/local-github/server.js";
import { runForge } from "./helpers.js";

let sim: Sim;
let dir: string;
let admin: string;
let appId: number;
let repos = 0;
const manifest = YAML.parse(readFileSync(APP_MANIFEST, "utf8")) as {
  default_permissions: Record<string, string>;
  default_events: string[];
};
const workflow = readFileSync(AGENT_WORKFLOW_TEMPLATE, "utf8");

const TASK = "forge/plan-1a2b3c4/task/1";
const INTEGRATION = "forge/plan-1a2b3c4/_integration";
const STATE = "forge/plan-1a2b3c4/_state";
const REVIEW = {
  required_approving_review_count: 2,
  dismiss_stale_reviews_on_push: false,
  require_code_owner_review: false,
  require_last_push_approval: false,
  required_review_thread_resolution: false,
};

async function api(method: string, path: string, body?: unknown): Promise<void> {
  const res = await sim.control.api("octo", method, path, body);
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
}

/** A repository set up as README.md says (the agent workflow, the state ruleset, the secret, pull requests from Actions), plus `files`. */
async function ready(files: Record<string, string> = {}): Promise<string> {
  const name = `r${++repos}`;
  await sim.control.createRepo({
    owner: "octo",
    name,
    files: { "README.md": `# ${name}\n`, ".github/workflows/forge-agent.yml": workflow, ...files },
  });
  await api("POST", `/repos/octo/${name}/rulesets`, stateBranchRuleset(appId));
  sim.control.setSecret(`octo/${name}`, "ANTHROPIC_API_KEY", "sk-test");
  await api("PUT", `/repos/octo/${name}/actions/permissions/workflow`, { can_approve_pull_request_reviews: true });
  return `octo/${name}`;
}

/** An active ruleset on `include` (ref patterns) with `rules`; `bypass`: the Forge App's bypass mode. */
async function ruleset(repo: string, name: string, include: string[], rules: unknown[], bypass?: "always" | "pull_request"): Promise<void> {
  await api("POST", `/repos/${repo}/rulesets`, {
    name,
    target: "branch",
    enforcement: "active",
    conditions: { ref_name: { include, exclude: [] } },
    rules,
    ...(bypass ? { bypass_actors: [{ actor_id: appId, actor_type: "Integration", bypass_mode: bypass }] } : {}),
  });
}

type Warning = { rule: string; source: string; branch?: string; effect: string; fix: string; blocks: boolean };
type Check = { id: string; verdict: string; detail: string; warnings?: Warning[]; notes?: string[] };

async function doctor(repo: string, opts: { token?: string | null } = {}): Promise<{ code: number; warnings: Warning[]; checks: Check[] }> {
  const token = opts.token === undefined ? admin : opts.token;
  const r = await runForge(
    ["doctor", "--repo", repo, "--dir", dir, "--api-url", sim.apiUrl, "--json", ...(token ? ["--token", token] : [])],
    dir,
  );
  const parsed = JSON.parse(r.out) as { checks: Check[]; warnings: Warning[] };
  return { code: r.code, warnings: parsed.warnings, checks: parsed.checks };
}

/** Each warning as `branch rule blocks|warns`, in doctor's order. */
const summary = (ws: Warning[]): string[] => ws.map((w) => `${w.branch ?? "-"} ${w.rule} ${w.blocks ? "blocks" : "warns"}`);
const one = (ws: Warning[], branch: string, rule: string): Warning => {
  const found = ws.filter((w) => w.branch === branch && w.rule === rule);
  expect(found).toHaveLength(1);
  return found[0]!;
};

beforeAll(async () => {
  sim = await createSim();
  const keys = appKeys();
  appId = sim.control.registerApp({
    slug: "forge",
    owner: "octo",
    publicKeyPem: keys.publicKeyPem,
    permissions: manifest.default_permissions as never,
    events: manifest.default_events,
  }).id;
  sim.control.install(appId, "octo", "all");
  dir = mkdtempSync(join(tmpdir(), "forge-doctor-rules-"));
  updateEnvFile(join(dir, ".env"), { APP_ID: String(appId), PRIVATE_KEY: keys.privateKeyPem, GITHUB_API_URL: sim.apiUrl });
  admin = sim.control.userToken("octo");
});

afterAll(async () => {
  await sim?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const CI = `name: CI
on:
  pull_request:
  push:
    branches-ignore: ["forge/*/_state"]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - run: npm test
`;

describe("forge doctor: rules, protection and settings", () => {
  it("a clean repository gives no warning, its protected default branch only notes", async () => {
    const repo = await ready({ ".github/workflows/ci.yml": CI, ".github/forge.yml": "required_checks: [test]\n" });
    await api("PUT", `/repos/${repo}/branches/main/protection`, {
      required_status_checks: { strict: true, contexts: ["test"] },
      enforce_admins: false,
      required_pull_request_reviews: { required_approving_review_count: 1 },
      restrictions: null,
    });
    const r = await doctor(repo);
    expect(r.warnings).toEqual([]);
    expect(r.code).toBe(0);
    const branches = r.checks.find((c) => c.id === "branches")!;
    expect(branches.verdict).toBe("pass");
    expect(branches.notes).toEqual([
      "the final pull request waits for 1 approving review(s) (main's protection)",
      "the final pull request must be up to date with main before it merges",
    ]);
    expect(r.checks.find((c) => c.id === "settings")!.verdict).toBe("pass");
  });

  it("creation restricted on Forge's branches: no run can start (fails); the App on the bypass list clears it", async () => {
    const repo = await ready();
    await ruleset(repo, "no new branches", ["refs/heads/forge/**"], [{ type: "creation" }]);
    const r = await doctor(repo);
    expect(summary(r.warnings)).toEqual([`${STATE} creation blocks`, `${TASK} creation blocks`, `${INTEGRATION} creation blocks`]);
    const task = one(r.warnings, TASK, "creation");
    expect(task).toMatchObject({
      source: `ruleset "no new branches" (repository ruleset ${repo})`,
      effect: "task branches cannot be created: creation restricted",
      fix: 'add the Forge App to the bypass list of ruleset "no new branches" (Always)',
    });
    expect(r.code).toBe(1);
    expect(r.checks.find((c) => c.id === "branches")).toMatchObject({
      verdict: "fail",
      detail: "3 warning(s), 3 of which stop Forge altogether",
    });

    const bypassed = await ready();
    await ruleset(bypassed, "no new branches", ["refs/heads/forge/**"], [{ type: "creation" }], "always");
    expect((await doctor(bypassed)).warnings).toEqual([]);
  });

  it("updates restricted on task branches: the runner cannot push (fails); with a token of the workflow's own it only warns", async () => {
    const repo = await ready();
    await ruleset(repo, "frozen", ["refs/heads/forge/*/*/*"], [{ type: "update" }]);
    const r = await doctor(repo);
    expect(summary(r.warnings)).toEqual([`${TASK} update blocks`]);
    expect(r.warnings[0]!.effect).toBe("the runner cannot push task branches: updates restricted");
    expect(r.warnings[0]!.fix).toMatch(/^exclude refs\/heads\/forge\/\*\* from ruleset "frozen"/);

    const own = await ready({
      ".github/workflows/forge-agent.yml": workflow.replace(
        "          run-id: ${{ inputs.run_id }}",
        "          github-token: ${{ secrets.FORGE_PUSH_TOKEN }}\n          run-id: ${{ inputs.run_id }}",
      ),
    });
    sim.control.setSecret(own, "FORGE_PUSH_TOKEN", "ghp-test");
    await ruleset(own, "frozen", ["refs/heads/forge/*/*/*"], [{ type: "update" }]);
    const o = await doctor(own);
    expect(summary(o.warnings)).toEqual([`${TASK} update warns`]);
    expect(o.warnings[0]!.effect).toMatch(/unless the token in the Forge step's github-token is on its bypass list$/);
    expect(o.code).toBe(0);
  });

  it("updates restricted on the integration branch: Forge cannot merge, each task waits for a person; a pull-request bypass clears it", async () => {
    const repo = await ready();
    await ruleset(repo, "integration frozen", ["refs/heads/forge/*/_integration"], [{ type: "update" }]);
    const r = await doctor(repo);
    expect(summary(r.warnings)).toEqual([`${INTEGRATION} update warns`]);
    expect(r.warnings[0]!.effect).toBe(
      "Forge cannot merge into the integration branch: updates restricted; each task waits for a person who may bypass it",
    );
    expect(r.warnings[0]!.fix).toBe('add the Forge App to the bypass list of ruleset "integration frozen" (For pull requests only)');
    expect(r.code).toBe(0);
    expect(r.checks.find((c) => c.id === "branches")!.verdict).toBe("warn");

    const bypassed = await ready();
    await ruleset(bypassed, "integration frozen", ["refs/heads/forge/*/_integration"], [{ type: "update" }], "pull_request");
    expect((await doctor(bypassed)).warnings).toEqual([]);
  });

  it("deletion restricted: task branches stay when branch_cleanup asks Forge to delete them; nothing with branch_cleanup: never", async () => {
    const repo = await ready({ ".github/forge.yml": "branch_cleanup: on_merge\n" });
    await ruleset(repo, "keep", ["refs/heads/forge/**"], [{ type: "deletion" }, { type: "non_fast_forward" }]);
    const r = await doctor(repo);
    expect(summary(r.warnings)).toEqual([`${TASK} deletion warns`]);
    expect(r.warnings[0]!.effect).toBe("task branches are not deleted (branch_cleanup: on_merge): deletion restricted");
    expect(r.warnings[0]!.fix).toMatch(/or set branch_cleanup: never in \.github\/forge\.yml$/);

    const never = await ready();
    await ruleset(never, "keep", ["refs/heads/forge/**"], [{ type: "deletion" }, { type: "non_fast_forward" }]);
    expect((await doctor(never)).warnings).toEqual([]);
  });

  it("linear history everywhere: refineries fail, merges will be squashed, the final pull request must be squashed — warnings only", async () => {
    const repo = await ready();
    await ruleset(repo, "linear", ["~ALL"], [{ type: "required_linear_history" }]);
    const r = await doctor(repo);
    expect(summary(r.warnings)).toEqual([
      `${TASK} required_linear_history warns`,
      `${INTEGRATION} required_linear_history warns`,
      "main required_linear_history warns",
    ]);
    expect(one(r.warnings, TASK, "required_linear_history").effect).toMatch(/^refineries and tasks that split into sub-agents fail/);
    expect(one(r.warnings, INTEGRATION, "required_linear_history").effect).toMatch(/^merges will be squashed: one commit per task/);
    expect(one(r.warnings, "main", "required_linear_history").effect).toBe(
      "the run's final pull request cannot be merged with a merge commit: merge it with Squash or Rebase",
    );
    expect(r.code).toBe(0);
  });

  it("required signatures everywhere: the runner's commits are unsigned (fails); merge commits into the integration branch are refused", async () => {
    const repo = await ready();
    await ruleset(repo, "signed", ["~ALL"], [{ type: "required_signatures" }]);
    const r = await doctor(repo);
    expect(summary(r.warnings)).toEqual([
      `${TASK} required_signatures blocks`,
      `${INTEGRATION} required_signatures warns`,
      "main required_signatures warns",
    ]);
    expect(one(r.warnings, TASK, "required_signatures").effect).toBe(
      "required signatures: the runner's commits are unsigned, so it cannot push task branches",
    );
    expect(one(r.warnings, INTEGRATION, "required_signatures").effect).toMatch(
      /^required signatures: a merge commit brings the runner's unsigned commits/,
    );
    expect(r.code).toBe(1);

    // With a linear history too, Forge squashes into the integration branch: GitHub signs the squash commit.
    const both = await ready();
    await ruleset(
      both,
      "signed",
      ["refs/heads/forge/*/_integration"],
      [{ type: "required_signatures" }, { type: "required_linear_history" }],
    );
    expect(summary((await doctor(both)).warnings)).toEqual([`${INTEGRATION} required_linear_history warns`]);
  });

  it("required reviews on the integration branch: each task waits for the approvals; a pull-request bypass for the App clears it", async () => {
    const repo = await ready();
    await ruleset(repo, "two reviews", ["refs/heads/forge/*/_integration"], [{ type: "pull_request", parameters: REVIEW }]);
    const r = await doctor(repo);
    expect(summary(r.warnings)).toEqual([`${INTEGRATION} pull_request warns`]);
    expect(r.warnings[0]!.effect).toBe("required reviews: each task waits for 2 approving reviews before Forge can merge it");
    expect(r.warnings[0]!.fix).toMatch(/For pull requests only\); or keep it and set merge_policy: review/);

    const bypassed = await ready();
    await ruleset(
      bypassed,
      "two reviews",
      ["refs/heads/forge/*/_integration"],
      [{ type: "pull_request", parameters: REVIEW }],
      "pull_request",
    );
    expect((await doctor(bypassed)).warnings).toEqual([]);
  });

  it("required status checks on the integration branch: strict, a check no workflow reports, one whose triggers leave Forge out, one Forge does not wait for", async () => {
    const ci = `name: CI
on: pull_request
jobs:
  test:
    runs-on: ubuntu-latest
    steps: [{ run: npm test }]
`;
    const lint = `name: Lint
on:
  pull_request:
    branches: [main]
jobs:
  lint:
    runs-on: ubuntu-latest
    steps: [{ run: npm run lint }]
`;
    const repo = await ready({ ".github/workflows/ci.yml": ci, ".github/workflows/lint.yml": lint });
    await ruleset(
      repo,
      "green",
      ["refs/heads/forge/*/_integration"],
      [
        {
          type: "required_status_checks",
          parameters: {
            strict_required_status_checks_policy: true,
            required_status_checks: [
              { context: "test" },
              { context: "lint" },
              { context: "deploy-preview" },
              { context: "circleci", integration_id: 4242 },
            ],
          },
        },
      ],
    );
    const r = await doctor(repo);
    const effects = r.warnings.map((w) => w.effect);
    expect(effects).toEqual([
      expect.stringMatching(/^strict required checks: Forge will update branches/),
      expect.stringMatching(
        /^required check "test" \(\.github\/workflows\/ci\.yml\) does not run on the runner's pushes: they are made with the job's GITHUB_TOKEN/,
      ),
      expect.stringMatching(/^required check "test" is not in Forge's required_checks/),
      expect.stringMatching(
        /^a required check no workflow of yours reports on task pull requests: "lint" \(\.github\/workflows\/lint\.yml has a job of that name, but its triggers leave out pull requests into forge\/plan-1a2b3c4\/_integration\)/,
      ),
      'a required check no workflow of yours reports: "deploy-preview"; each task waits for a person',
      expect.stringMatching(/^required check "circleci" \(reported by another App, id 4242\) is not in Forge's required_checks/),
    ]);
    expect(r.warnings.every((w) => w.rule === "required_status_checks" && w.branch === INTEGRATION && !w.blocks)).toBe(true);
    expect(r.code).toBe(0);

    // Forge waits for both, the runner pushes with a token of its own: only strict is left.
    const own = await ready({
      ".github/workflows/ci.yml": ci,
      ".github/forge.yml": "required_checks: [test, circleci]\n",
      ".github/workflows/forge-agent.yml": workflow.replace(
        "          run-id: ${{ inputs.run_id }}",
        "          github-token: ${{ secrets.FORGE_PUSH_TOKEN }}\n          run-id: ${{ inputs.run_id }}",
      ),
    });
    sim.control.setSecret(own, "FORGE_PUSH_TOKEN", "ghp-test");
    await ruleset(
      own,
      "green",
      ["refs/heads/forge/*/_integration"],
      [
        {
          type: "required_status_checks",
          parameters: {
            strict_required_status_checks_policy: true,
            required_status_checks: [{ context: "test" }, { context: "circleci", integration_id: 4242 }],
          },
        },
      ],
    );
    expect((await doctor(own)).warnings.map((w) => w.effect)).toEqual([
      expect.stringMatching(/^strict required checks: Forge will update branches/),
    ]);
  });

  it("status checks or reviews required on task branches: the runner's direct pushes are refused (fails)", async () => {
    const repo = await ready();
    await ruleset(
      repo,
      "checked pushes",
      ["refs/heads/forge/*/*/*"],
      [
        {
          type: "required_status_checks",
          parameters: { strict_required_status_checks_policy: false, required_status_checks: [{ context: "test" }] },
        },
      ],
    );
    const r = await doctor(repo);
    expect(summary(r.warnings)).toEqual([`${TASK} required_status_checks blocks`]);
    expect(r.warnings[0]!.effect).toBe(
      "the runner cannot push task branches: required status checks must pass on a commit before the branch may point at it",
    );
  });

  it("a merge queue on the integration branch: Forge cannot merge, merges wait for a person", async () => {
    const repo = await ready();
    await ruleset(
      repo,
      "queue",
      ["refs/heads/forge/*/_integration", "~DEFAULT_BRANCH"],
      [
        {
          type: "merge_queue",
          parameters: {
            check_response_timeout_minutes: 60,
            grouping_strategy: "ALLGREEN",
            max_entries_to_build: 5,
            max_entries_to_merge: 5,
            merge_method: "MERGE",
            min_entries_to_merge: 1,
            min_entries_to_merge_wait_minutes: 5,
          },
        },
      ],
    );
    const r = await doctor(repo);
    expect(summary(r.warnings)).toEqual([`${INTEGRATION} merge_queue warns`]);
    expect(r.warnings[0]!.effect).toBe("merge queue required: Forge cannot merge; merges wait for a person");
    expect(r.warnings[0]!.fix).toMatch(/^exclude refs\/heads\/forge\/\*\/_integration from ruleset "queue"/);
    // On the default branch the queue only holds the final pull request, which a person merges.
    expect(r.checks.find((c) => c.id === "branches")!.notes).toContain(
      'the final pull request goes through the merge queue (ruleset "queue")',
    );
  });

  it("commit message, author e-mail and branch name patterns Forge does not meet: refused (fails); ones it meets: nothing", async () => {
    const repo = await ready();
    await ruleset(
      repo,
      "jira",
      ["refs/heads/forge/**"],
      [{ type: "commit_message_pattern", parameters: { operator: "starts_with", pattern: "JIRA-", negate: false } }],
    );
    const r = await doctor(repo);
    expect(summary(r.warnings)).toEqual([
      `${STATE} commit_message_pattern blocks`,
      `${TASK} commit_message_pattern blocks`,
      `${INTEGRATION} commit_message_pattern warns`,
    ]);
    expect(one(r.warnings, TASK, "commit_message_pattern").effect).toBe(
      'the runner cannot push task branches: commit_message_pattern (starts with "JIRA-") refuses Forge\'s message "forge(task): start attempt 1"',
    );
    expect(one(r.warnings, STATE, "commit_message_pattern").effect).toMatch(/^the App cannot write its journal: commit_message_pattern/);

    const email = await ready();
    await ruleset(
      email,
      "corp",
      ["refs/heads/forge/*/*/*"],
      [{ type: "commit_author_email_pattern", parameters: { operator: "ends_with", pattern: "@corp.example", negate: false } }],
    );
    const e = await doctor(email);
    expect(summary(e.warnings)).toEqual([`${TASK} commit_author_email_pattern blocks`]);
    expect(e.warnings[0]!.effect).toMatch(/refuses the runner's address 41898282\+github-actions\[bot\]@users\.noreply\.github\.com$/);

    const names = await ready();
    await ruleset(
      names,
      "feature names",
      ["~ALL"],
      [{ type: "branch_name_pattern", parameters: { operator: "regex", pattern: "^(main|feature/.*)$", negate: false } }],
    );
    const n = await doctor(names);
    expect(summary(n.warnings)).toEqual([
      `${STATE} branch_name_pattern blocks`,
      `${TASK} branch_name_pattern blocks`,
      `${INTEGRATION} branch_name_pattern blocks`,
    ]);
    expect(one(n.warnings, TASK, "branch_name_pattern").effect).toBe(
      `branch_name_pattern (regex "^(main|feature/.*)$") refuses Forge's branch name ${TASK}: it cannot be created`,
    );

    const met = await ready();
    await ruleset(
      met,
      "forge style",
      ["refs/heads/forge/**"],
      [
        { type: "commit_message_pattern", parameters: { operator: "regex", pattern: "^forge[(:]", negate: false } },
        { type: "branch_name_pattern", parameters: { operator: "starts_with", pattern: "forge/", negate: false } },
      ],
    );
    expect((await doctor(met)).warnings).toEqual([]);
  });

  it("file rules: Forge's own record files refused (fails); other paths, extensions and sizes warn about the agents' work", async () => {
    const repo = await ready();
    await ruleset(
      repo,
      "no runs",
      ["refs/heads/forge/*/*/*"],
      [{ type: "file_path_restriction", parameters: { restricted_file_paths: [".forge/runs"] } }],
    );
    const r = await doctor(repo);
    expect(summary(r.warnings)).toEqual([`${TASK} file_path_restriction blocks`]);
    expect(r.warnings[0]!.effect).toBe(
      "the runner cannot push task branches: file_path_restriction covers Forge's own file .forge/runs/plan-1a2b3c4/task/1/walkthrough.md",
    );

    const soft = await ready();
    await ruleset(
      soft,
      "careful",
      ["refs/heads/forge/*/*/*"],
      [
        { type: "file_path_restriction", parameters: { restricted_file_paths: ["secrets/**"] } },
        { type: "file_extension_restriction", parameters: { restricted_file_extensions: ["*.exe"] } },
        { type: "max_file_size", parameters: { max_file_size: 10 } },
        { type: "max_file_path_length", parameters: { max_file_path_length: 200 } },
      ],
    );
    const s = await doctor(soft);
    expect(summary(s.warnings)).toEqual([
      `${TASK} file_path_restriction warns`,
      `${TASK} file_extension_restriction warns`,
      `${TASK} max_file_size warns`,
      `${TASK} max_file_path_length warns`,
    ]);
    expect(one(s.warnings, TASK, "max_file_size").effect).toBe(
      "max_file_size 10 MB: a task whose agent writes a larger file fails (its push is refused)",
    );
    expect(s.code).toBe(0);

    const md = await ready();
    await ruleset(
      md,
      "no markdown",
      ["refs/heads/forge/*/*/*"],
      [
        { type: "file_extension_restriction", parameters: { restricted_file_extensions: [".md"] } },
        { type: "max_file_path_length", parameters: { max_file_path_length: 30 } },
      ],
    );
    expect(summary((await doctor(md)).warnings)).toEqual([
      `${TASK} file_extension_restriction blocks`,
      `${TASK} max_file_path_length blocks`,
    ]);
  });

  it("deployments, workflows and code scanning required on the integration branch: each merge waits for what Forge never starts", async () => {
    const repo = await ready();
    await ruleset(
      repo,
      "gates",
      ["refs/heads/forge/*/_integration"],
      [
        { type: "required_deployments", parameters: { required_deployment_environments: ["staging"] } },
        { type: "workflows", parameters: { workflows: [{ path: ".github/workflows/audit.yml", repository_id: 1 }] } },
        {
          type: "code_scanning",
          parameters: {
            code_scanning_tools: [{ tool: "CodeQL", alerts_threshold: "errors", security_alerts_threshold: "high_or_higher" }],
          },
        },
      ],
    );
    const r = await doctor(repo);
    expect(r.warnings.map((w) => [w.rule, w.effect])).toEqual([
      [
        "required_deployments",
        "each merge waits for a successful deployment to staging, which Forge neither starts nor waits for; each task waits for a person",
      ],
      [
        "workflows",
        "each merge waits for the required workflows (.github/workflows/audit.yml) to pass, which Forge neither starts nor waits for; each task waits for a person",
      ],
      [
        "code_scanning",
        "each merge waits for code scanning results from CodeQL, which Forge neither starts nor waits for; each task waits for a person",
      ],
    ]);
  });

  it("the default branch's protection: a required check no workflow reports, linear history, a locked branch — and without an admin's token, a note", async () => {
    const repo = await ready();
    await api("PUT", `/repos/${repo}/branches/main/protection`, {
      required_status_checks: { strict: false, contexts: ["e2e"] },
      enforce_admins: true,
      required_pull_request_reviews: null,
      restrictions: null,
      required_linear_history: true,
      lock_branch: true,
    });
    const r = await doctor(repo);
    expect(r.warnings.map((w) => [w.rule, w.source, w.branch, w.effect])).toEqual([
      [
        "branch protection: required status checks",
        "branch protection of main",
        "main",
        'a required check no workflow of yours reports: "e2e"; the run\'s final pull request waits for a person',
      ],
      [
        "branch protection: required linear history",
        "branch protection of main",
        "main",
        "the run's final pull request cannot be merged with a merge commit, and the integration branch holds merge commits (so Rebase cannot replay it): merge it with Squash",
      ],
      [
        "branch protection: lock branch",
        "branch protection of main",
        "main",
        "the run's final pull request cannot be merged: main is locked",
      ],
    ]);
    expect(r.code).toBe(0);

    // Without the Administration permission only its required checks are seen.
    const bare = await doctor(repo, { token: null });
    expect(bare.warnings.map((w) => w.rule)).toEqual(["branch protection: required status checks"]);
    expect(bare.checks.find((c) => c.id === "branches")!.notes).toContain(
      "main is protected; its protection was read without the Administration permission (only its required checks): pass --token with a repository admin's token to read the rest",
    );
  });

  it("repository settings: the merge method Forge uses left out, and Actions not allowed to open pull requests or to write", async () => {
    const repo = await ready();
    await api("PATCH", `/repos/${repo}`, { allow_merge_commit: false });
    const r = await doctor(repo);
    expect(r.warnings).toEqual([
      {
        rule: "allow_merge_commit",
        source: "repository settings",
        branch: INTEGRATION,
        effect:
          "Forge's merges are refused: it merges task pull requests with a merge commit, and the repository does not allow merge commits; each task waits for a person",
        fix: "Settings → General → Pull Requests: allow merge commits",
        blocks: false,
      },
    ]);

    // Where its rules want a linear history Forge squashes: squash merging must be allowed.
    const squash = await ready();
    await api("PATCH", `/repos/${squash}`, { allow_squash_merge: false });
    await ruleset(squash, "linear", ["refs/heads/forge/*/_integration"], [{ type: "required_linear_history" }]);
    expect(summary((await doctor(squash)).warnings)).toEqual([
      `${INTEGRATION} required_linear_history warns`,
      `${INTEGRATION} allow_squash_merge warns`,
    ]);

    const actions = await ready({
      ".github/workflows/forge-agent.yml": workflow.replace(/\npermissions:\n(?: {2}.*\n|\s*#.*\n)+/, "\n"),
    });
    await api("PUT", `/repos/${actions}/actions/permissions/workflow`, {
      default_workflow_permissions: "read",
      can_approve_pull_request_reviews: false,
    });
    const a = await doctor(actions);
    expect(summary(a.warnings)).toEqual(["- default_workflow_permissions blocks", "- can_approve_pull_request_reviews warns"]);
    expect(a.warnings[1]!.effect).toMatch(
      /^GitHub Actions may not create pull requests here: the runner cannot open a task's pull request/,
    );
    expect(a.checks.find((c) => c.id === "settings")!.verdict).toBe("fail");
    expect(a.code).toBe(1);
  });

  it("prints each warning on its own line, with the rule, its source, the branch and the fix", async () => {
    const repo = await ready();
    await ruleset(repo, "signed", ["refs/heads/forge/*/*/*"], [{ type: "required_signatures" }]);
    const text = await runForge(["doctor", "--repo", repo, "--dir", dir, "--api-url", sim.apiUrl, "--token", admin], dir);
    expect(text.code).toBe(1);
    expect(text.out).toContain(
      `✗ the rules of Forge's branches let it work (${TASK}, ${INTEGRATION}, the final pull request into main)\n    1 warning(s), 1 of which stop Forge altogether\n` +
        `    ⚠ ${TASK} · required_signatures · ruleset "signed" (repository ruleset ${repo}): required signatures: the runner's commits are unsigned, so it cannot push task branches [Forge cannot work]\n` +
        `      fix: exclude refs/heads/forge/** from ruleset "signed" (Settings → Rules → Rulesets → its target branches → Exclude by pattern)\n`,
    );
    expect(text.out).toMatch(/1 check\(s\) failed with 1 warning\(s\)\.\n$/);
  });
});
