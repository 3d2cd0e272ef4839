/**
 * `forge doctor`'s warnings about what Forge's merges wait for and what its pushes must look like:
 * required checks (strict, unreported, outside Forge's required_checks), merge queues, deployments,
 * required workflows and code scanning, commit message / e-mail / branch name patterns, file rules —
 * each set through the local GitHub's API (doctor-world.ts; README.md, "What forge doctor warns about").
 */
import { describe, expect, it } from "vitest";
import { api, doctor, INTEGRATION, one, ready, ruleset, STATE, summary, TASK, w, workflow, useDoctorWorld } from "./doctor-world.js";

useDoctorWorld();

describe("forge doctor: what merges wait for", () => {
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
    w.sim.control.setSecret(own, "FORGE_PUSH_TOKEN", "ghp-test");
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

  it("a merge queue on the integration branch: Forge merges through it, slower", async () => {
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
    expect(r.warnings[0]!.effect).toMatch(/^merge queue required: Forge merges each task through the queue .*must run on merge_group$/);
    expect(r.warnings[0]!.fix).toMatch(/^exclude refs\/heads\/forge\/\*\/_integration from ruleset "queue"/);
    // On the default branch the queue only holds the final pull request, which a person merges.
    expect(r.checks.find((c) => c.id === "branches")!.notes).toContain(
      'the final pull request goes through the merge queue (ruleset "queue")',
    );
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
});

describe("forge doctor: what pushes must look like", () => {
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
});

describe("forge doctor: push rulesets", () => {
  it("a push ruleset's rules hold every push: Forge's own files refused (fails), file sizes warn", async () => {
    const repo = await ready();
    await api("POST", `/repos/${repo}/rulesets`, {
      name: "push rules",
      target: "push",
      enforcement: "active",
      rules: [
        { type: "file_path_restriction", parameters: { restricted_file_paths: [".forge/**"] } },
        { type: "max_file_size", parameters: { max_file_size: 5 } },
      ],
    });
    const r = await doctor(repo);
    expect(summary(r.warnings)).toEqual([`${TASK} file_path_restriction blocks`, `${TASK} max_file_size warns`]);
    expect(r.warnings[0]).toMatchObject({
      source: `ruleset "push rules" (repository ruleset ${repo})`,
      effect:
        "the runner cannot push task branches: file_path_restriction covers Forge's own file .forge/runs/plan-1a2b3c4/task/1/walkthrough.md",
    });
    expect(r.code).toBe(1);
  });
});
