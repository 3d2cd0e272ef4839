// Conformance of every implemented operation: each is called through plain @octokit/rest, its
// request and response are validated against GitHub's description by the simulator (strict mode
// turns a violating response into a 500, failing the call), and the documented error statuses
// are checked. The last test proves every implemented operation was exercised with a success.
import { Octokit } from "@octokit/rest";
import { describe, expect, it } from "vitest";
import { apps, repositories, repositoryMerges } from "./conformance/apps-repos.js";
import { checks, issues, pullRequests } from "./conformance/pulls-issues-checks.js";
import { actions, actionsQueued, actionsRuns, notImplemented, rulesets } from "./conformance/actions.js";
import { actionsPermissions, actionsSecrets } from "./conformance/actions-settings.js";
import { branchProtection, manifestApps, orgRulesets } from "./conformance/protection.js";
import { repositorySettings } from "./conformance/repo-settings.js";
import { asyncMerge, issueDependencies, subIssues } from "./conformance/issue-tree.js";
import { owner, status, useConformanceWorld, w } from "./conformance/world.js";

useConformanceWorld();

describe("apps", apps);
describe("repositories, contents, git database", repositories);
describe("repositories: merges, compare, permissions, statuses", repositoryMerges);
describe("pull requests", pullRequests);
describe("issues, comments, labels, reactions", issues);
describe("checks", checks);
describe("actions", actions);
describe("actions: dispatch, runs, jobs, logs", actionsRuns);
describe("actions: a queued run", actionsQueued);
describe("not implemented and not found", notImplemented);
describe("rulesets", rulesets);
describe("organisation rulesets", orgRulesets);
describe("actions permissions", actionsPermissions);
describe("actions secrets", actionsSecrets);
describe("branch protection", branchProtection);
describe("repository settings", repositorySettings);
describe("apps from a manifest", manifestApps);
describe("sub-issues", subIssues);
describe("issue dependencies", issueDependencies);
describe("asynchronous merge", asyncMerge);

describe("coverage", () => {
  it("every implemented operation answered a success at least once, with no schema violation", async () => {
    await w.sim.idle();
    const ok = new Set([...w.sim.core.served].filter((s) => /\s(2\d\d|302)$/.test(s)).map((s) => s.split(" ")[0]));
    const missing = w.sim.operations.filter((op) => !ok.has(op));
    expect(missing).toEqual([]);
    // Deliberately invalid requests (the 422 checks above) are the only request violations.
    expect(w.sim.violations.filter((v) => v.kind !== "request")).toEqual([]);
    expect(w.receiver.received.every((h) => h.signatureValid)).toBe(true);
    expect(w.receiver.received.filter((h) => h.schemaError)).toEqual([]);
  });
});

describe("installation lifecycle", () => {
  it("adds repositories (installation_repositories.added) and uninstalls (installation.deleted, tokens revoked)", async () => {
    await w.sim.control.createRepo({ owner, name: "later", files: { "x.txt": "x\n" } });
    expect(await status(w.gh.rest.repos.get({ owner, repo: "later" }))).toBe(404);
    w.sim.control.addInstallationRepositories(w.installationId, [`${owner}/later`]);
    const { data: tok } = await w.asApp.rest.apps.createInstallationAccessToken({ installation_id: w.installationId });
    const fresh = new Octokit({ baseUrl: w.sim.apiUrl, auth: tok.token });
    expect((await fresh.rest.repos.get({ owner, repo: "later" })).status).toBe(200);
    w.sim.control.uninstall(w.installationId);
    expect(await status(fresh.rest.repos.get({ owner, repo: "later" }))).toBe(401);
    await w.sim.idle();
    const added = await w.receiver.waitFor((h) => h.event === "installation_repositories" && h.action === "added");
    expect((added.payload.repositories_added as Array<{ full_name: string }>).map((r) => r.full_name)).toEqual([`${owner}/later`]);
    await w.receiver.waitFor((h) => h.event === "installation" && h.action === "deleted");
    expect(w.receiver.received.filter((h) => h.event.startsWith("installation")).every((h) => h.signatureValid && !h.schemaError)).toBe(
      true,
    );
    expect(w.sim.violations.filter((v) => v.kind !== "request")).toEqual([]);
  });
});
