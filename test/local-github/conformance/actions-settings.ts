// Conformance: Actions' permissions and secrets — the tests of each `describe` of conformance.test.ts, in its one world.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Octokit } from "@octokit/rest";
import sodium from "libsodium-wrappers";
import { expect, it } from "vitest";
import { createSim } from "../../../src/local-github/server.js";
import { completedRun, doctorApp, gitIn, owner, refusedWith, repo, status, w } from "./world.js";

/** describe("actions permissions") */
export function actionsPermissions(): void {
  const CI = `name: CI
on: [push, workflow_dispatch]
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: other/tool@v1
      - uses: acme/own-action@v2
      - uses: ./local-action
      - run: echo built
`;

  it("GET/PUT by administrators (a person with admin, an App with administration); disabled Actions runs nothing and refuses dispatches", async () => {
    await w.sim.control.createRepo({
      owner,
      name: "ci-off",
      files: { ".github/workflows/ci.yml": CI },
      collaborators: { alice: "write", rita: "read" },
    });
    const admin = new Octokit({ baseUrl: w.sim.apiUrl, auth: w.sim.control.userToken(owner) });
    const p = { owner, repo: "ci-off" };
    expect((await admin.rest.actions.getGithubActionsPermissionsRepository(p)).data).toMatchObject({
      enabled: true,
      allowed_actions: "all",
    });
    // Writers, readers and an App without the Administration permission may not read them.
    expect(await refusedWith(w.person.rest.actions.getGithubActionsPermissionsRepository(p), 403)).toBe(
      "Must have admin rights to Repository.",
    );
    expect(await status(w.reader.rest.actions.getGithubActionsPermissionsRepository(p))).toBe(403);
    expect(await refusedWith(w.gh.rest.actions.getGithubActionsPermissionsRepository({ owner, repo }), 403)).toBe(
      "Resource not accessible by integration",
    );
    const doctorRead = await doctorApp({ administration: "read" });
    expect((await doctorRead.rest.actions.getGithubActionsPermissionsRepository(p)).data.enabled).toBe(true);
    expect(await status(doctorRead.rest.actions.setGithubActionsPermissionsRepository({ ...p, enabled: false }))).toBe(403);
    const doctor = await doctorApp({ administration: "write" });
    expect((await doctor.rest.actions.setGithubActionsPermissionsRepository({ ...p, enabled: false })).status).toBe(204);
    expect((await admin.rest.actions.getGithubActionsPermissionsRepository(p)).data).toEqual({ enabled: false });

    // A push (a real one, over Git) starts nothing; a dispatch is refused as GitHub refuses it.
    const work = mkdtempSync(join(tmpdir(), "forge-conf-ci-off-"));
    try {
      const token = w.sim.control.userToken("alice");
      await gitIn(work, ["clone", "-q", `${w.sim.gitUrl}/${owner}/ci-off.git`, "w"], token);
      const dir = join(work, "w");
      await gitIn(dir, ["commit", "-q", "--allow-empty", "-m", "nothing runs"]);
      await gitIn(dir, ["push", "-q", "origin", "HEAD:main"], token);
      await w.sim.idle();
      expect((await admin.rest.actions.listWorkflowRunsForRepo(p)).data.total_count).toBe(0);
      expect(await refusedWith(admin.rest.actions.createWorkflowDispatch({ ...p, workflow_id: "ci.yml", ref: "main" }), 422)).toBe(
        "Actions has been disabled for this repository.",
      );
      // Enabled again, the next push runs its workflow.
      await admin.rest.actions.setGithubActionsPermissionsRepository({ ...p, enabled: true, allowed_actions: "all" });
      await gitIn(dir, ["commit", "-q", "--allow-empty", "-m", "this one runs"]);
      await gitIn(dir, ["push", "-q", "origin", "HEAD:main"], token);
      await w.sim.idle();
      const runs = (await admin.rest.actions.listWorkflowRunsForRepo(p)).data.workflow_runs;
      expect(runs.map((r) => [r.event, r.display_title])).toEqual([["push", "this one runs"]]);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });

  it("local_only and selected: a run using an action the policy does not allow fails at the start of its job, naming the action", async () => {
    await w.sim.control.createRepo({ owner, name: "ci-policy", files: { ".github/workflows/ci.yml": CI } });
    const admin = new Octokit({ baseUrl: w.sim.apiUrl, auth: w.sim.control.userToken(owner) });
    const p = { owner, repo: "ci-policy" };
    const dispatchAndWait = async (): Promise<{ conclusion: string | null; log: string }> => {
      const res = await admin.request("POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches", {
        ...p,
        workflow_id: "ci.yml",
        ref: "main",
        return_run_details: true,
      });
      const runId = (res.data as unknown as { workflow_run_id: number }).workflow_run_id;
      const run = await completedRun(admin, "ci-policy", runId);
      const { data: jobs } = await admin.rest.actions.listJobsForWorkflowRun({ ...p, run_id: runId });
      return { conclusion: run.conclusion, log: jobs.jobs.map((j) => w.sim.control.logsOfJob(j.id) ?? "").join("") };
    };

    await admin.rest.actions.setGithubActionsPermissionsRepository({ ...p, enabled: true, allowed_actions: "local_only" });
    expect((await admin.rest.actions.getGithubActionsPermissionsRepository(p)).data).toMatchObject({ allowed_actions: "local_only" });
    // The selected-actions lists are for the "selected" policy only.
    expect(await status(admin.rest.actions.getAllowedActionsRepository(p))).toBe(409);
    const local = await dispatchAndWait();
    expect(local.conclusion).toBe("startup_failure");
    expect(local.log).toContain(
      "##[error]The actions actions/checkout@v4, other/tool@v1 are not allowed in acme/ci-policy because all actions must be from a repository owned by acme.",
    );
    expect(local.log).not.toContain("noop executor");

    await admin.rest.actions.setGithubActionsPermissionsRepository({ ...p, enabled: true, allowed_actions: "selected" });
    const perms = (await admin.rest.actions.getGithubActionsPermissionsRepository(p)).data;
    expect(perms.selected_actions_url).toBe(`${w.sim.apiUrl}/repos/${owner}/ci-policy/actions/permissions/selected-actions`);
    await admin.rest.actions.setAllowedActionsRepository({
      ...p,
      github_owned_allowed: true,
      verified_allowed: false,
      patterns_allowed: [],
    });
    expect((await admin.rest.actions.getAllowedActionsRepository(p)).data).toEqual({
      github_owned_allowed: true,
      verified_allowed: false,
      patterns_allowed: [],
    });
    const selected = await dispatchAndWait();
    expect(selected.conclusion).toBe("startup_failure");
    expect(selected.log).toContain(
      "The action other/tool@v1 is not allowed in acme/ci-policy because all actions must be from a repository owned by acme or created by GitHub.",
    );
    expect(await status(w.person.rest.actions.setAllowedActionsRepository({ ...p, patterns_allowed: ["other/*"] }))).toBe(403);
    await admin.rest.actions.setAllowedActionsRepository({ ...p, github_owned_allowed: true, patterns_allowed: ["other/tool@*"] });
    const allowed = await dispatchAndWait();
    expect(allowed.conclusion).toBe("success");
    expect(allowed.log).toContain("noop executor");
    expect(w.sim.violations.filter((v) => v.kind !== "request")).toEqual([]);
  });
}

/** describe("actions secrets") */
export function actionsSecrets(): void {
  it("sealed with the repository's public key, stored by name, listed without values; admins and the Secrets permission only", async () => {
    await w.sim.control.createRepo({
      owner,
      name: "vault",
      files: { "README.md": "# vault\n" },
      collaborators: { alice: "write", rita: "read" },
    });
    const p = { owner, repo: "vault" };
    const admin = new Octokit({ baseUrl: w.sim.apiUrl, auth: w.sim.control.userToken(owner) });
    const doctor = await doctorApp({ secrets: "write" });
    // "Anyone with read access to the repository can use this endpoint."
    const { data: key } = await w.reader.rest.actions.getRepoPublicKey(p);
    expect(key.key_id).toMatch(/^\d+$/);
    expect(Buffer.from(key.key, "base64")).toHaveLength(32);
    await sodium.ready;
    const seal = (value: string) =>
      sodium.to_base64(
        sodium.crypto_box_seal(sodium.from_string(value), sodium.from_base64(key.key, sodium.base64_variants.ORIGINAL)),
        sodium.base64_variants.ORIGINAL,
      );

    const put = await doctor.rest.actions.createOrUpdateRepoSecret({
      ...p,
      secret_name: "model_key",
      encrypted_value: seal("sk-1"),
      key_id: key.key_id,
    });
    expect(put.status).toBe(201);
    const again = await admin.rest.actions.createOrUpdateRepoSecret({
      ...p,
      secret_name: "MODEL_KEY",
      encrypted_value: seal("sk-2"),
      key_id: key.key_id,
    });
    expect(again.status).toBe(204);
    // A value not sealed with the current key is refused.
    expect(
      await refusedWith(
        admin.rest.actions.createOrUpdateRepoSecret({ ...p, secret_name: "OTHER", encrypted_value: seal("x"), key_id: "1" }),
        422,
      ),
    ).toBe("Bad request - validation failed due to an improperly encrypted secret");
    expect(
      await status(
        admin.rest.actions.createOrUpdateRepoSecret({
          ...p,
          secret_name: "OTHER",
          encrypted_value: Buffer.from("plain").toString("base64"),
          key_id: key.key_id,
        }),
      ),
    ).toBe(422);
    expect(
      await status(
        admin.rest.actions.createOrUpdateRepoSecret({ ...p, secret_name: "GITHUB_X", encrypted_value: seal("x"), key_id: key.key_id }),
      ),
    ).toBe(422);
    w.sim.control.setSecret(`${owner}/vault`, "Seeded", "by-the-test");

    const { data: list } = await doctor.rest.actions.listRepoSecrets(p);
    expect(list.total_count).toBe(2);
    expect(list.secrets.map((s) => s.name)).toEqual(["MODEL_KEY", "SEEDED"]);
    const { data: one } = await admin.rest.actions.getRepoSecret({ ...p, secret_name: "model_key" });
    expect(Object.keys(one).sort()).toEqual(["created_at", "name", "updated_at"]);
    expect(JSON.stringify(list)).not.toContain("sk-2");
    // The value really is stored (what runs get as secrets.*).
    expect(w.sim.core.state.repoByName(owner, "vault")!.secrets!.byName.get("MODEL_KEY")!.value).toBe("sk-2");

    // A writer is not an administrator; an App needs the Secrets permission (read to list, write to set).
    expect(await refusedWith(w.person.rest.actions.listRepoSecrets(p), 403)).toBe("Must have admin rights to Repository.");
    expect(await refusedWith(w.gh.rest.actions.listRepoSecrets({ owner, repo }), 403)).toBe("Resource not accessible by integration");
    const readOnly = await doctorApp({ secrets: "read" });
    expect((await readOnly.rest.actions.getRepoSecret({ ...p, secret_name: "SEEDED" })).status).toBe(200);
    expect(await status(readOnly.rest.actions.deleteRepoSecret({ ...p, secret_name: "SEEDED" }))).toBe(403);

    expect((await doctor.rest.actions.deleteRepoSecret({ ...p, secret_name: "seeded" })).status).toBe(204);
    expect(await status(admin.rest.actions.getRepoSecret({ ...p, secret_name: "SEEDED" }))).toBe(404);
    expect(await status(admin.rest.actions.deleteRepoSecret({ ...p, secret_name: "SEEDED" }))).toBe(404);
  });

  it("stored secrets reach the repository's workflow runs", async () => {
    const own = await createSim();
    try {
      await own.control.createRepo({
        owner,
        name: "vault",
        files: { ".github/workflows/ci.yml": "on: workflow_dispatch\njobs:\n  a:\n    runs-on: x\n    steps:\n      - run: echo\n" },
      });
      const seen: Array<Record<string, string>> = [];
      own.onWorkflowDispatch((d) => {
        seen.push(d.secrets);
        d.complete("success");
      });
      const kit = new Octokit({ baseUrl: own.apiUrl, auth: own.control.userToken(owner) });
      const { data: key } = await kit.rest.actions.getRepoPublicKey({ owner, repo: "vault" });
      await sodium.ready;
      const sealed = sodium.to_base64(
        sodium.crypto_box_seal(sodium.from_string("from-rest"), sodium.from_base64(key.key, sodium.base64_variants.ORIGINAL)),
        sodium.base64_variants.ORIGINAL,
      );
      await kit.rest.actions.createOrUpdateRepoSecret({
        owner,
        repo: "vault",
        secret_name: "API_TOKEN",
        encrypted_value: sealed,
        key_id: key.key_id,
      });
      own.control.setSecret(`${owner}/vault`, "SEEDED", "from-control");
      await kit.rest.actions.createWorkflowDispatch({ owner, repo: "vault", workflow_id: "ci.yml", ref: "main" });
      for (let i = 0; i < 100 && !seen.length; i++) await new Promise((r) => setTimeout(r, 10));
      expect(seen).toEqual([{ API_TOKEN: "from-rest", SEEDED: "from-control" }]);
      expect(own.violations).toEqual([]);
    } finally {
      await own.close();
    }
  });
}
