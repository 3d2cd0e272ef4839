// Conformance: a repository's pull request settings (`PATCH /repos/{owner}/{repo}`) and Actions'
// workflow permissions — the tests of each `describe` of conformance.test.ts, in its one world.
import { Octokit } from "@octokit/rest";
import { expect, it } from "vitest";
import { tokenPermissions } from "../../../src/local-github/workflows/index.js";
import { doctorApp, owner, refusedWith, status, w } from "./world.js";

/** describe("repository settings") */
export function repositorySettings(): void {
  it("administrators choose the merge methods; a pull request merged by one left out answers 405 in GitHub's words", async () => {
    await w.sim.control.createRepo({
      owner,
      name: "methods",
      files: { "README.md": "# methods\n" },
      collaborators: { alice: "write", rita: "read" },
    });
    const p = { owner, repo: "methods" };
    const admin = new Octokit({ baseUrl: w.sim.apiUrl, auth: w.sim.control.userToken(owner) });
    // GitHub's defaults: every method.
    expect((await admin.rest.repos.get(p)).data).toMatchObject({
      allow_merge_commit: true,
      allow_squash_merge: true,
      allow_rebase_merge: true,
    });
    // Writers and an App without the Administration permission may not change them.
    expect(await refusedWith(w.person.rest.repos.update({ ...p, allow_merge_commit: false }), 403)).toBe(
      "Must have admin rights to Repository.",
    );
    expect(await status(w.gh.rest.repos.update({ owner, repo: "gadgets", allow_merge_commit: false }))).toBe(403);
    const doctor = await doctorApp({ administration: "write", contents: "write", pull_requests: "write" });
    const { data: updated } = await doctor.rest.repos.update({ ...p, allow_merge_commit: false, allow_rebase_merge: false });
    expect(updated).toMatchObject({ allow_merge_commit: false, allow_squash_merge: true, allow_rebase_merge: false });
    expect((await w.reader.rest.repos.get(p)).data).toMatchObject({ allow_merge_commit: false, allow_squash_merge: true });

    // A pull request: a merge commit and a rebase are refused, a squash goes through.
    const { data: main } = await admin.rest.git.getRef({ ...p, ref: "heads/main" });
    await admin.rest.git.createRef({ ...p, ref: "refs/heads/topic", sha: main.object.sha });
    await admin.rest.repos.createOrUpdateFileContents({
      ...p,
      path: "topic.txt",
      message: "topic",
      content: Buffer.from("t\n").toString("base64"),
      branch: "topic",
    });
    const { data: pr } = await admin.rest.pulls.create({ ...p, head: "topic", base: "main", title: "topic" });
    expect(await refusedWith(doctor.rest.pulls.merge({ ...p, pull_number: pr.number }), 405)).toBe(
      "Merge commits are not allowed on this repository.",
    );
    expect(await refusedWith(doctor.rest.pulls.merge({ ...p, pull_number: pr.number, merge_method: "rebase" }), 405)).toBe(
      "Rebase merges are not allowed on this repository.",
    );
    await admin.rest.repos.update({ ...p, allow_squash_merge: false, allow_merge_commit: true });
    expect(await refusedWith(doctor.rest.pulls.merge({ ...p, pull_number: pr.number, merge_method: "squash" }), 405)).toBe(
      "Squash merges are not allowed on this repository.",
    );
    expect((await doctor.rest.pulls.merge({ ...p, pull_number: pr.number })).data.merged).toBe(true);

    // A field the local GitHub does not keep is not silently dropped.
    const e = await w.sim.control.api(owner, "PATCH", "/repos/acme/methods", { name: "renamed" });
    expect(e.status).toBe(501);
    expect(JSON.stringify(e.body)).toContain("repos/update: name");
    expect(w.sim.violations.filter((v) => v.kind !== "request")).toEqual([]);
  });

  it("workflow permissions: GitHub's defaults (read, no pull requests from Actions), set by administrators, the default given to a workflow that names none", async () => {
    await w.sim.control.createRepo({ owner, name: "tokens", files: { "README.md": "# tokens\n" }, collaborators: { alice: "write" } });
    const p = { owner, repo: "tokens" };
    const admin = new Octokit({ baseUrl: w.sim.apiUrl, auth: w.sim.control.userToken(owner) });
    expect((await admin.rest.actions.getGithubActionsDefaultWorkflowPermissionsRepository(p)).data).toEqual({
      default_workflow_permissions: "read",
      can_approve_pull_request_reviews: false,
    });
    expect(await refusedWith(w.person.rest.actions.getGithubActionsDefaultWorkflowPermissionsRepository(p), 403)).toBe(
      "Must have admin rights to Repository.",
    );
    expect(await refusedWith(w.gh.rest.actions.getGithubActionsDefaultWorkflowPermissionsRepository({ owner, repo: "gadgets" }), 403)).toBe(
      "Resource not accessible by integration",
    );
    const doctorRead = await doctorApp({ administration: "read" });
    expect((await doctorRead.rest.actions.getGithubActionsDefaultWorkflowPermissionsRepository(p)).data.default_workflow_permissions).toBe(
      "read",
    );
    expect(
      await status(
        doctorRead.rest.actions.setGithubActionsDefaultWorkflowPermissionsRepository({ ...p, default_workflow_permissions: "write" }),
      ),
    ).toBe(403);
    const set = await admin.rest.actions.setGithubActionsDefaultWorkflowPermissionsRepository({
      ...p,
      default_workflow_permissions: "write",
      can_approve_pull_request_reviews: true,
    });
    expect(set.status).toBe(204);
    expect((await admin.rest.actions.getGithubActionsDefaultWorkflowPermissionsRepository(p)).data).toEqual({
      default_workflow_permissions: "write",
      can_approve_pull_request_reviews: true,
    });
    // The job token of a workflow without `permissions:`: restricted, or permissive under "write";
    // a workflow that names its permissions gets those whatever the default.
    expect(tokenPermissions(undefined)).toEqual({ contents: "read", packages: "read", metadata: "read" });
    expect(tokenPermissions(undefined, "write")).toMatchObject({ contents: "write", pull_requests: "write", metadata: "read" });
    expect(tokenPermissions(undefined, "write").id_token).toBeUndefined();
    expect(tokenPermissions({ contents: "read" }, "write")).toEqual({ metadata: "read", contents: "read" });
  });
}
