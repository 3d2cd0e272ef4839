/**
 * `forge doctor`'s warnings about the default branch's protection (the run's final pull request), the
 * repository's merge settings and Actions' workflow permissions, and how the warnings print — set
 * through the local GitHub's API (doctor-world.ts; README.md, "What forge doctor warns about").
 */
import { describe, expect, it } from "vitest";
import { runForge } from "./helpers.js";
import { api, doctor, INTEGRATION, ready, ruleset, summary, TASK, w, workflow, useDoctorWorld } from "./doctor-world.js";

useDoctorWorld();

describe("forge doctor: protection and settings", () => {
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
    const text = await runForge(["doctor", "--repo", repo, "--dir", w.dir, "--api-url", w.sim.apiUrl, "--token", w.admin], w.dir);
    expect(text.code).toBe(1);
    expect(text.out).toContain(
      `✗ the rules of Forge's branches let it work (${TASK}, ${INTEGRATION}, the final pull request into main)\n    1 warning(s), 1 of which stop Forge altogether\n` +
        `    ⚠ ${TASK} · required_signatures · ruleset "signed" (repository ruleset ${repo}): required signatures: the runner's commits are unsigned, so it cannot push task branches [Forge cannot work]\n` +
        `      fix: exclude refs/heads/forge/** from ruleset "signed" (Settings → Rules → Rulesets → its target branches → Exclude by pattern)\n`,
    );
    expect(text.out).toMatch(/1 check\(s\) failed with 1 warning\(s\)\.\n$/);
  });
});
