// Conformance: branch protection and Apps from a manifest — the tests of each `describe` of conformance.test.ts, in its one world.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Octokit } from "@octokit/rest";
import { expect, it } from "vitest";
import { appJwt } from "../support/helpers.js";
import { doctorApp, gitIn, gitRefused, owner, refusedWith, repo, status, w } from "./world.js";

/** describe("branch protection") */
export function branchProtection(): void {
  it("admins protect a branch; direct pushes and ref updates are refused, a PR merges once approved and its checks passed", async () => {
    await w.sim.control.createRepo({
      owner,
      name: "guarded",
      files: { "README.md": "# guarded\n" },
      collaborators: { alice: "write", bob: "write", rita: "read" },
    });
    const p = { owner, repo: "guarded", branch: "main" };
    const admin = new Octokit({ baseUrl: w.sim.apiUrl, auth: w.sim.control.userToken(owner) });
    const bob = new Octokit({ baseUrl: w.sim.apiUrl, auth: w.sim.control.userToken("bob") });
    expect(await refusedWith(admin.rest.repos.getBranchProtection(p), 404)).toBe("Branch not protected");
    expect(await status(admin.rest.repos.getBranchProtection({ ...p, branch: "nope" }))).toBe(404);
    const body = {
      ...p,
      required_status_checks: { strict: false, contexts: ["ci"] },
      enforce_admins: true,
      required_pull_request_reviews: { required_approving_review_count: 1, dismiss_stale_reviews: true },
      restrictions: null,
    };
    // Administrators only: a writer, a reader, an App without Administration (write to protect).
    expect(await refusedWith(w.person.rest.repos.updateBranchProtection(body), 403)).toBe("Must have admin rights to Repository.");
    expect(await status(w.reader.rest.repos.getBranchProtection(p))).toBe(403);
    expect(await refusedWith(w.gh.rest.repos.getBranchProtection({ owner, repo, branch: "main" }), 403)).toBe(
      "Resource not accessible by integration",
    );
    expect(await status((await doctorApp({ administration: "read" })).rest.repos.updateBranchProtection(body))).toBe(403);
    // Restrictions are for organization repositories.
    expect(
      await refusedWith(admin.rest.repos.updateBranchProtection({ ...body, restrictions: { users: ["alice"], teams: [] } }), 422),
    ).toBe("Only organization repositories can have users and team restrictions");

    const { data: set } = await admin.rest.repos.updateBranchProtection(body);
    expect(set.required_pull_request_reviews?.required_approving_review_count).toBe(1);
    expect(set.enforce_admins?.enabled).toBe(true);
    const { data: got } = await (await doctorApp({ administration: "read" })).rest.repos.getBranchProtection(p);
    expect(got.required_status_checks?.contexts).toEqual(["ci"]);
    expect(got.required_status_checks?.checks).toEqual([{ context: "ci", app_id: null }]);
    expect(got.allow_force_pushes?.enabled).toBe(false);
    expect(got.allow_deletions?.enabled).toBe(false);
    expect((await w.person.rest.repos.getBranch(p)).data.protected).toBe(true);
    expect((await w.person.rest.repos.listBranches({ owner, repo: "guarded" })).data.map((b) => [b.name, b.protected])).toEqual([
      ["main", true],
    ]);

    const work = mkdtempSync(join(tmpdir(), "forge-conf-guarded-"));
    try {
      const aliceToken = w.sim.control.userToken("alice");
      await gitIn(work, ["clone", "-q", `${w.sim.gitUrl}/${owner}/guarded.git`, "w"], aliceToken);
      const dir = join(work, "w");
      const mainBefore = (await gitIn(dir, ["rev-parse", "HEAD"])).trim();
      await gitIn(dir, ["commit", "-q", "--allow-empty", "-m", "straight to main"]);
      const refused = await gitRefused(dir, ["push", "-q", "origin", "HEAD:main"], aliceToken);
      expect(refused).toContain("GH006: Protected branch update failed for refs/heads/main.");
      expect(refused).toContain("Changes must be made through a pull request.");
      expect((await admin.rest.repos.getBranch(p)).data.commit.sha).toBe(mainBefore);
      // Through the refs API: 422; an administrator is held to it too under enforce_admins.
      await gitIn(dir, ["push", "-q", "origin", "HEAD:feature"], aliceToken);
      const feature = (await gitIn(dir, ["rev-parse", "HEAD"])).trim();
      expect(await refusedWith(w.person.rest.git.updateRef({ owner, repo: "guarded", ref: "heads/main", sha: feature }), 422)).toContain(
        "Changes must be made through a pull request.",
      );
      expect(await status(admin.rest.git.updateRef({ owner, repo: "guarded", ref: "heads/main", sha: feature }))).toBe(422);
      expect(await status(admin.rest.git.deleteRef({ owner, repo: "guarded", ref: "heads/main" }))).toBe(422);

      // The pull request: approvals from writers, then the required check.
      const { data: pr } = await w.person.rest.pulls.create({ owner, repo: "guarded", head: "feature", base: "main", title: "Feature" });
      const merge = () => w.person.rest.pulls.merge({ owner, repo: "guarded", pull_number: pr.number });
      expect(await refusedWith(merge(), 405)).toBe("At least 1 approving review is required by reviewers with write access.");
      await w.reader.rest.pulls.createReview({ owner, repo: "guarded", pull_number: pr.number, event: "APPROVE" });
      expect(await refusedWith(merge(), 405)).toBe("At least 1 approving review is required by reviewers with write access.");
      await bob.rest.pulls.createReview({ owner, repo: "guarded", pull_number: pr.number, event: "APPROVE" });
      expect(await refusedWith(merge(), 405)).toBe('Required status check "ci" is expected.');
      const checker = await doctorApp({ checks: "write" });
      await checker.rest.checks.create({
        owner,
        repo: "guarded",
        name: "ci",
        head_sha: feature,
        status: "completed",
        conclusion: "failure",
      });
      expect(await refusedWith(merge(), 405)).toBe('Required status check "ci" is failing.');
      await checker.rest.checks.create({
        owner,
        repo: "guarded",
        name: "ci",
        head_sha: feature,
        status: "completed",
        conclusion: "success",
      });
      expect((await merge()).data.merged).toBe(true);

      // Without enforce_admins, administrators are exempt; force pushes and deletions stay refused to the others.
      await admin.rest.repos.updateBranchProtection({ ...body, enforce_admins: false });
      await gitIn(dir, ["fetch", "-q", "origin"], aliceToken);
      await gitIn(dir, ["reset", "-q", "--hard", "origin/main"]);
      await gitIn(dir, ["commit", "-q", "--allow-empty", "-m", "admin fix"]);
      await gitIn(dir, ["push", "-q", "origin", "HEAD:main"], w.sim.control.userToken(owner));
      await admin.rest.repos.updateBranchProtection({
        ...p,
        branch: "feature",
        required_status_checks: null,
        enforce_admins: null,
        required_pull_request_reviews: null,
        restrictions: null,
      });
      await gitIn(dir, ["commit", "-q", "--allow-empty", "-m", "fast-forward is fine"]);
      await gitIn(dir, ["push", "-q", "origin", "HEAD:feature", "--force"], aliceToken);
      await gitIn(dir, ["reset", "-q", "--hard", "HEAD~2"]);
      await gitIn(dir, ["commit", "-q", "--allow-empty", "-m", "rewritten"]);
      const forced = await gitRefused(dir, ["push", "-q", "--force", "origin", "HEAD:feature"], aliceToken);
      expect(forced).toContain("GH006: Protected branch update failed for refs/heads/feature.");
      expect(forced).toContain("Cannot force-push to this protected branch");
      expect(await gitRefused(dir, ["push", "-q", "origin", "--delete", "feature"], aliceToken)).toContain(
        "Cannot delete this protected branch",
      );
    } finally {
      rmSync(work, { recursive: true, force: true });
    }

    expect((await admin.rest.repos.deleteBranchProtection(p)).status).toBe(204);
    expect(await status(admin.rest.repos.getBranchProtection(p))).toBe(404);
    expect((await admin.rest.repos.getBranch(p)).data.protected).toBe(false);
    expect(w.sim.violations.filter((v) => v.kind !== "request")).toEqual([]);
  });
}

/** describe("apps from a manifest") */
export function manifestApps(): void {
  it("the setup page's form → GitHub's create page → redirect with code and state → conversion gives id, key and secret, once", async () => {
    const manifest = {
      name: "Forge Setup Test",
      url: "https://forge.example",
      redirect_url: "http://127.0.0.1:9/setup/done",
      hook_attributes: { url: w.receiver.url },
      public: false,
      default_permissions: { contents: "write", issues: "write", metadata: "read" },
      default_events: ["push", "issues"],
    };
    const form = new URLSearchParams({ manifest: JSON.stringify(manifest) });
    const shown = await fetch(`${w.sim.url}/settings/apps/new?state=s-123`, { method: "POST", body: form });
    expect(shown.status).toBe(200);
    const html = await shown.text();
    expect(html).toContain('id="create"');
    expect(html).toContain('value="Forge Setup Test"');
    // The person names the App and creates it: back to the redirect URL with the code and the state.
    const confirm = new URLSearchParams({ manifest: JSON.stringify(manifest), state: "s-123", name: "Forge Setup Test", login: owner });
    const created = await fetch(`${w.sim.url}/settings/apps/new/confirm`, { method: "POST", body: confirm, redirect: "manual" });
    expect(created.status).toBe(302);
    const back = new URL(created.headers.get("location")!);
    expect(`${back.origin}${back.pathname}`).toBe("http://127.0.0.1:9/setup/done");
    expect(back.searchParams.get("state")).toBe("s-123");
    const code = back.searchParams.get("code")!;
    expect(code).toMatch(/^[0-9a-f]{40}$/);

    // The conversion needs no authentication; its answer is validated against GitHub's description.
    const anon = new Octokit({ baseUrl: w.sim.apiUrl });
    const { data: app } = await anon.rest.apps.createFromManifest({ code });
    expect(app.slug).toBe("forge-setup-test");
    expect((app.owner as { login?: string } | null)?.login).toBe(owner);
    expect(app.permissions).toMatchObject({ contents: "write", issues: "write" });
    expect(app.events).toEqual(["push", "issues"]);
    expect(app.webhook_secret).toMatch(/^[0-9a-f]{40}$/);
    expect(app.pem).toContain("BEGIN RSA PRIVATE KEY");
    // The key it handed out signs the App's JWT.
    const asNew = new Octokit({ baseUrl: w.sim.apiUrl, auth: appJwt(app.id, app.pem) });
    expect((await asNew.rest.apps.getAuthenticated()).data!.slug).toBe("forge-setup-test");
    // A code works once.
    expect(await status(anon.rest.apps.createFromManifest({ code }))).toBe(404);
    // A form without a manifest, or with one that is not JSON, is refused on the page.
    expect((await fetch(`${w.sim.url}/settings/apps/new`, { method: "POST", body: new URLSearchParams({ manifest: "{" }) })).status).toBe(
      422,
    );
  });
}

/** Organisation rulesets (docs.github.com/rest/orgs/rules; more in conformance-org-rulesets.test.ts). */
export function orgRulesets(): void {
  it("an organisation's owner creates, lists, reads, updates and deletes its rulesets; others and unknown ids are answered 404", async () => {
    const org = "gadget-org";
    w.sim.control.setOrgOwner(org, "orga");
    await w.sim.control.createRepo({ owner: org, name: "tool", files: { "README.md": "# t\n" } });
    const orga = new Octokit({ baseUrl: w.sim.apiUrl, auth: w.sim.control.userToken("orga") });
    const body = {
      org,
      name: "org deletions",
      enforcement: "active" as const,
      conditions: { ref_name: { include: ["~ALL"], exclude: [] }, repository_name: { include: ["~ALL"], exclude: [] } },
      rules: [{ type: "deletion" as const }],
    };
    expect(await status(w.person.rest.repos.createOrgRuleset(body))).toBe(404);
    const { data: set } = await orga.rest.repos.createOrgRuleset(body);
    expect((await orga.rest.repos.getOrgRulesets({ org })).data.map((r) => r.id)).toEqual([set.id]);
    expect((await orga.rest.repos.getOrgRuleset({ org, ruleset_id: set.id })).data.source_type).toBe("Organization");
    expect((await orga.rest.repos.updateOrgRuleset({ org, ruleset_id: set.id, enforcement: "disabled" })).data.enforcement).toBe(
      "disabled",
    );
    expect((await orga.rest.repos.deleteOrgRuleset({ org, ruleset_id: set.id })).status).toBe(204);
    expect(await status(orga.rest.repos.getOrgRuleset({ org, ruleset_id: set.id }))).toBe(404);
    expect(await status(orga.rest.repos.getOrgRulesets({ org: owner }))).toBe(404); // a person's account has none
  });
}
