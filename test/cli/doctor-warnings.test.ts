/**
 * The pure parts of `forge doctor`'s warnings: a *_pattern rule against Forge's texts, which
 * workflows report a check on Forge's pull requests, and the rules the local GitHub cannot hold yet
 * (an organization's ruleset, a rule read without the App's bypass).
 */
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { AGENT_WORKFLOW_TEMPLATE } from "../../src/cli/commands/init.js";
import { admits, ciJobs, namedAnywhere, reportersOf } from "../../src/cli/doctor/ci-reporters.js";
import { forgeBranches, forgeFacts } from "../../src/cli/doctor/forge-facts.js";
import { patternAllows, ruleFindings } from "../../src/cli/doctor/rule-effects.js";
import { branchFindings } from "../../src/cli/doctor/warnings.js";
import type { Readiness, RuleFact } from "../../src/github/readiness.js";

const template = readFileSync(AGENT_WORKFLOW_TEMPLATE, "utf8");

/** What doctor would have read: `rules` on the integration branch, as the App or not. */
function read(
  rules: { integration?: RuleFact[]; task?: RuleFact[] },
  asApp: boolean,
  config: string | null = null,
): Readiness & { template: string } {
  const branches = forgeBranches(config, "main");
  return {
    repo: "octo/x",
    defaultBranch: "main",
    installation: { ok: false, reason: "-" },
    workflow: { ok: true, value: template },
    actions: { ok: false, reason: "-" },
    config: { ok: true, value: config },
    branches,
    rules: { ok: true, value: { state: [], task: rules.task ?? [], integration: rules.integration ?? [], base: [], push: [], asApp } },
    secrets: { ok: false, reason: "-" },
    protection: { ok: true, value: null },
    settings: { ok: true, value: {} },
    workflowPermissions: { ok: false, reason: "-" },
    workflows: { ok: true, value: [] },
    template,
  };
}

describe("forge doctor's warnings, pure", () => {
  it("a pattern rule: each operator, negate, a regular expression that does not compile", () => {
    const p = (operator: string, pattern: string, negate = false) => ({ operator, pattern, negate });
    expect(patternAllows(p("starts_with", "forge("), "forge(task): start attempt 1\n\nRun: r\n")).toBe(true);
    expect(patternAllows(p("starts_with", "JIRA-"), "forge(task): x")).toBe(false);
    expect(patternAllows(p("ends_with", "Attempt: 1"), "forge(task): x\n\nAttempt: 1\n")).toBe(true);
    expect(patternAllows(p("contains", "WIP", true), "forge(task): WIP")).toBe(false);
    expect(patternAllows(p("regex", "^forge[(:]"), "forge: start run r")).toBe(true);
    expect(patternAllows(p("regex", "(unclosed"), "x")).toBeUndefined();
    expect(patternAllows(p("sounds_like", "x"), "x")).toBeUndefined();
  });

  it("which workflows report a check on Forge's pull requests: names, matrices, expressions, called workflows, branch filters", () => {
    const jobs = ciJobs(
      [
        {
          path: ".github/workflows/ci.yml",
          text: "on:\n  pull_request:\n    branches: ['**', '!release/*']\njobs:\n  build:\n    strategy: { matrix: { node: [18, 20] } }\n    runs-on: x\n  e2e:\n    name: e2e ${{ matrix.os }}\n    runs-on: x\n",
        },
        {
          path: ".github/workflows/lib.yml",
          text: "on:\n  push:\n    branches-ignore: ['forge/**']\njobs:\n  call:\n    uses: ./.github/workflows/shared.yml\n",
        },
        { path: ".github/workflows/tags.yml", text: "on:\n  push:\n    tags: ['v*']\njobs:\n  publish: { runs-on: x }\n" },
        { path: ".github/workflows/forge-agent.yml", text: template },
      ],
      ".github/workflows/forge-agent.yml",
    );
    const into = "forge/plan-1a2b3c4/_integration";
    const head = "forge/plan-1a2b3c4/task/1";
    expect(reportersOf(jobs, "build (18)", into, head)).toEqual([".github/workflows/ci.yml"]);
    expect(reportersOf(jobs, "build", into, head)).toEqual([".github/workflows/ci.yml"]);
    expect(reportersOf(jobs, "e2e ubuntu", into, head)).toEqual([".github/workflows/ci.yml"]);
    expect(reportersOf(jobs, "build (18)", "release/1", head)).toEqual([]);
    // A push filter that leaves Forge's branches out; a tags-only push never runs for a branch.
    expect(reportersOf(jobs, "call / test", into, head)).toEqual([]);
    expect(namedAnywhere(jobs, "call / test")).toEqual([".github/workflows/lib.yml"]);
    expect(reportersOf(jobs, "publish", into, head)).toEqual([]);
    // Forge's own agent workflow reports nothing on pull requests.
    expect(namedAnywhere(jobs, "agent")).toEqual([]);
    expect(admits({ branches: ["main", "forge/**"] }, into)).toBe(true);
    expect(admits({ branches: ["forge/*"] }, into)).toBe(false);
    expect(admits({ ignore: ["forge/**"] }, into)).toBe(false);
  });

  it("an organization's ruleset is named as one, and its fix goes to an organization owner", () => {
    const rule: RuleFact = {
      type: "pull_request",
      parameters: { required_approving_review_count: 1 },
      ruleset: { id: 7, name: "org review", sourceType: "Organization", source: "octo" },
      appBypass: "never",
    };
    const f = read({ integration: [rule], task: [rule] }, true);
    const found = branchFindings(f, forgeFacts(f)).warnings;
    expect(found.map((w) => [w.branch, w.source, w.blocks])).toEqual([
      ["forge/plan-1a2b3c4/task/1", 'ruleset "org review" of the organization octo (organization ruleset octo)', true],
      ["forge/plan-1a2b3c4/_integration", 'ruleset "org review" of the organization octo (organization ruleset octo)', false],
    ]);
    expect(found[0]!.fix).toMatch(
      /^an organization owner: exclude refs\/heads\/forge\/\*\* from ruleset "org review" of the organization octo/,
    );
  });

  it("without the App's bypass read, what the App may bypass does not fail doctor and says so", () => {
    const creation: RuleFact = { type: "creation", ruleset: { id: 1, name: "locked" } };
    const update: RuleFact = { type: "update", ruleset: { id: 1, name: "locked" } };
    const known = read({ integration: [creation, update] }, true);
    expect(branchFindings(known, forgeFacts(known)).warnings.map((w) => [w.rule, w.blocks])).toEqual([
      ["creation", true],
      ["update", false],
    ]);
    const unknown = read({ integration: [creation, update] }, false);
    const found = branchFindings(unknown, forgeFacts(unknown));
    expect(found.warnings.map((w) => [w.rule, w.blocks])).toEqual([["update", false]]);
    expect(found.warnings[0]!.effect).toMatch(
      /unless the Forge App is on its bypass list \(give forge doctor the App's credentials to know\)$/,
    );
    expect(found.notes).toContain(
      "the rulesets' bypass lists were not read as the App (no App credentials): a rule the App may bypass is counted as holding it",
    );
  });

  it("Forge's branches come from .github/forge.yml: another template, another base", () => {
    const config =
      "branch_template: bots/{runId}/{taskId}-{attempt}\nintegration_branch_template: bots/{runId}/all\nbase_branch: develop\n";
    expect(forgeBranches(config, "main")).toEqual({
      state: "forge/plan-1a2b3c4/_state",
      task: "bots/plan-1a2b3c4/task-1",
      integration: "bots/plan-1a2b3c4/all",
      base: "develop",
    });
    const f = read({ task: [{ type: "update", ruleset: { name: "x" } }] }, true, config);
    const facts = forgeFacts(f);
    expect(facts.refGlob).toBe("refs/heads/bots/**");
    expect(facts.integrationGlob).toBe("refs/heads/bots/*/all");
    expect(
      ruleFindings({ role: "task", branch: facts.branches.task, rule: { type: "update", ruleset: { name: "x" } }, forge: facts })[0]!.fix,
    ).toMatch(/^exclude refs\/heads\/bots\/\*\* from ruleset "x"/);
    // A config that does not parse: the defaults stand in, and doctor says so.
    const bad = read({}, true, "branch_template: nope\n");
    expect(forgeFacts(bad).configProblem).toMatch(/^\.github\/forge\.yml does not parse \(.*\): Forge's defaults stand in$/);
  });
});
