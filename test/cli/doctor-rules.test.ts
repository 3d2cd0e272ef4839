/**
 * `forge doctor`'s warnings about who may write Forge's branches and how: creations, updates and
 * deletions restricted, linear history, signatures, reviews and checks required — each set through
 * the local GitHub's API on a repository otherwise set up as README.md says (doctor-world.ts). Doctor
 * names the rule, its source, the branch, the effect and the fix, and fails only for what stops
 * Forge altogether; a clean repository gives no warning (README.md, "What forge doctor warns about").
 */
import { describe, expect, it } from "vitest";
import {
  api,
  CI,
  doctor,
  INTEGRATION,
  one,
  ready,
  REVIEW,
  ruleset,
  STATE,
  summary,
  TASK,
  w,
  workflow,
  useDoctorWorld,
} from "./doctor-world.js";

useDoctorWorld();

describe("forge doctor: who may write Forge's branches", () => {
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
    w.sim.control.setSecret(own, "FORGE_PUSH_TOKEN", "ghp-test");
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
});

describe("forge doctor: history, signatures and reviews", () => {
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
});
