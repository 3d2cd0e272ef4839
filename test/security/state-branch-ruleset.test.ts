/**
 * Attack: a run's journal lives on `forge/<runId>/_state`, which anyone with `contents: write` can
 * push to. The seal (test/security/forged-journal) makes a forged journal harmless but freezes the
 * run; the ruleset README.md describes ("Protect the state branches") keeps the branch the App's
 * alone, so the forgery never lands. The local GitHub enforces rulesets as GitHub does — over Git
 * (a pre-receive hook answering GH013) and through the REST API — and the App checks at run start
 * that the state branch is covered, warning on the tracker when it is not.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Octokit } from "@octokit/rest";
import { afterEach, describe, expect, it } from "vitest";
import { stateBranchRuleset, stateBranchWarning } from "../../src/app/start-run.js";
import { checkStateRuleset, type DoctorFacts } from "../../src/cli/doctor/checks.js";
import { OctokitPort } from "../../src/github/octokit-port.js";
import type { Journal } from "../../src/core/journal.js";
import { LABELS } from "../../src/core/layout.js";
import { planFiles } from "../helpers/plan-files.js";
import { FULL, OWNER, REPO, startHarness, type Harness } from "../app/helpers.js";
import type { Script } from "../app/scripted-runner.js";

let h: Harness | undefined;
let work: string | undefined;
afterEach(async () => {
  const done = h;
  h = undefined;
  await done?.close();
  if (work) rmSync(work, { recursive: true, force: true });
  work = undefined;
}, 60_000);

const task = (j: Journal, id: string) => j.tasks.find((t) => t.id === id)!;

const stateRuleset = stateBranchRuleset;

function git(cwd: string, args: string[], token: string): Promise<{ ok: boolean; out: string }> {
  const header = `http.extraheader=AUTHORIZATION: basic ${Buffer.from(`x-access-token:${token}`).toString("base64")}`;
  return new Promise((resolve) =>
    execFile(
      "git",
      ["-c", header, ...args],
      {
        cwd,
        encoding: "utf8",
        env: {
          ...process.env,
          GIT_TERMINAL_PROMPT: "0",
          GIT_CONFIG_NOSYSTEM: "1",
          HOME: cwd,
          GIT_AUTHOR_NAME: "Mallory",
          GIT_AUTHOR_EMAIL: "mallory@forge.invalid",
          GIT_COMMITTER_NAME: "Mallory",
          GIT_COMMITTER_EMAIL: "mallory@forge.invalid",
        },
      },
      (err, stdout, stderr) => resolve({ ok: !err, out: `${stdout}${stderr}` }),
    ),
  );
}

async function trackerBody(g: Harness): Promise<string> {
  for (let i = 0; i < 150; i++) {
    await g.app.forge.idle();
    const { data } = await g.user.rest.issues.listForRepo({ owner: OWNER, repo: REPO, state: "all", labels: LABELS.tracker });
    if (data[0]?.body) return data[0].body;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("no tracker");
}

describe("the state branches are the App's alone", () => {
  it(
    "with the README's ruleset a collaborator can neither push, force-push, write nor delete a run's state branch; the App's own writes go through and the run completes",
    { timeout: 120_000 },
    async () => {
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      h = await startHarness((id): Script => ({ kind: "success", ...(id === "a" ? { gate } : {}) }));
      const g = h;
      const created = await g.sim.control.api("acme", "POST", `/repos/${FULL}/rulesets`, stateRuleset(g.appId));
      expect(created.status).toBe(201);
      // A collaborator with write access cannot add or loosen rulesets.
      const denied = await g.sim.control.api("octocat", "POST", `/repos/${FULL}/rulesets`, { ...stateRuleset(g.appId), name: "x" });
      expect(denied.status).toBe(403);

      await g.pushFiles(planFiles("mini", { a: [], b: ["a"] }), "Add plan");
      const running = await g.waitFor((x) => task(x, "a").status === "RUNNING");
      const state = `forge/${running.runId}/_state`;
      const rules = await g.user.rest.repos.getBranchRules({ owner: OWNER, repo: REPO, branch: state });
      expect(rules.data.map((r) => r.type).sort()).toEqual(["creation", "deletion", "non_fast_forward", "update"]);
      expect(await trackerBody(g)).not.toContain("state branch is not protected");

      const { data: before } = await g.user.rest.git.getRef({ owner: OWNER, repo: REPO, ref: `heads/${state}` });
      const { data: main } = await g.user.rest.git.getRef({ owner: OWNER, repo: REPO, ref: "heads/main" });

      // REST: a forced update, a deletion and a contents write are each refused with the rules named.
      const forced = await g.sim.control.api("octocat", "PATCH", `/repos/${FULL}/git/refs/heads/${state}`, {
        sha: main.object.sha,
        force: true,
      });
      expect(forced.status).toBe(422);
      expect(JSON.stringify(forced.body)).toContain("Repository rule violations found");
      expect(JSON.stringify(forced.body)).toContain("Cannot force-push to this branch");
      const deleted = await g.sim.control.api("octocat", "DELETE", `/repos/${FULL}/git/refs/heads/${state}`);
      expect(deleted.status).toBe(422);
      expect(JSON.stringify(deleted.body)).toContain("Cannot delete this protected ref.");
      // Nor plant a new run's state branch (a journal sealed elsewhere, or an earlier one of this run).
      const planted = await g.sim.control.api("octocat", "POST", `/repos/${FULL}/git/refs`, {
        ref: "refs/heads/forge/planted-0000000/_state",
        sha: main.object.sha,
      });
      expect(planted.status).toBe(422);
      expect(JSON.stringify(planted.body)).toContain("Cannot create ref due to creations being restricted.");
      const written = await g.sim.control.api("octocat", "PUT", `/repos/${FULL}/contents/evil.txt`, {
        message: "forged",
        content: Buffer.from("x").toString("base64"),
        branch: state,
      });
      expect(written.status).toBe(422);
      expect(JSON.stringify(written.body)).toContain("Cannot update this protected ref.");

      // Git: a fast-forward push of a forged journal commit is refused with GitHub's GH013 message.
      work = mkdtempSync(join(tmpdir(), "forge-ruleset-"));
      const token = g.sim.control.userToken("octocat");
      const url = `${g.sim.gitUrl}/${FULL}.git`;
      expect((await git(work, ["clone", "-q", "--branch", state, url, "w"], token)).ok).toBe(true);
      const w = join(work, "w");
      writeFileSync(join(w, "journal.json"), "{}\n");
      await git(w, ["commit", "-qam", "forged journal"], token);
      const pushed = await git(w, ["push", "origin", `HEAD:refs/heads/${state}`], token);
      expect(pushed.ok).toBe(false);
      expect(pushed.out).toContain(`GH013: Repository rule violations found for refs/heads/${state}.`);
      expect(pushed.out).toContain("Cannot update this protected ref.");
      const removed = await git(w, ["push", "origin", `:refs/heads/${state}`], token);
      expect(removed.ok).toBe(false);
      expect(removed.out).toContain("Cannot delete this protected ref.");
      // The rules name only the state branches: the same person still pushes elsewhere.
      expect((await git(w, ["push", "-q", "origin", "HEAD:refs/heads/mallory"], token)).ok).toBe(true);

      const { data: after } = await g.user.rest.git.getRef({ owner: OWNER, repo: REPO, ref: `heads/${state}` });
      expect(after.object.sha).toBe(before.object.sha);

      // The App (on the bypass list) keeps writing its journal: the run completes.
      release();
      const done = await g.waitFor((x) => x.status === "completed", 90_000);
      expect(done.tasks.every((t) => t.status === "MERGED")).toBe(true);
    },
  );

  it("without the ruleset the App warns on the run's tracker, naming the branch and the README section", { timeout: 120_000 }, async () => {
    h = await startHarness((): Script => ({ kind: "success" }));
    const g = h;
    await g.pushFiles(planFiles("mini", { a: [] }), "Add plan");
    const running = await g.waitFor((x) => x.tasks.length > 0);
    const body = await trackerBody(g);
    expect(body).toContain("state branch is not protected");
    expect(body).toContain(`no ruleset restricts creations, updates or deletions of \`forge/${running.runId}/_state\``);
    expect(body).toContain('"Protect the state branches"');
    // A ruleset that only stops deletions is not enough: updates are still named.
    const partial = stateRuleset(g.appId);
    const made = await g.sim.control.api("acme", "POST", `/repos/${FULL}/rulesets`, { ...partial, rules: [{ type: "deletion" }] });
    expect(made.status).toBe(201);
    const port = new OctokitPort(
      new Octokit({ baseUrl: g.sim.apiUrl, auth: g.sim.control.installationToken(g.installationId) }) as never,
      OWNER,
      REPO,
    );
    expect(await stateBranchWarning(port, running.runId)).toBe(
      `no ruleset restricts creations or updates of \`forge/${running.runId}/_state\``,
    );
    const full = await g.sim.control.api("acme", "POST", `/repos/${FULL}/rulesets`, { ...partial, name: "all" });
    expect(full.status).toBe(201);
    expect(await stateBranchWarning(port, running.runId)).toBeUndefined();
    await g.waitFor((x) => x.status === "completed", 90_000);
  });

  it(
    "a ruleset that does not restrict creations (anyone may plant a new state branch) is reported at run start and by forge doctor",
    { timeout: 120_000 },
    async () => {
      h = await startHarness((): Script => ({ kind: "success" }));
      const g = h;
      // The ruleset README.md gave before: updates, deletions and force pushes, not creations.
      const old = stateRuleset(g.appId);
      const made = await g.sim.control.api("acme", "POST", `/repos/${FULL}/rulesets`, {
        ...old,
        rules: old.rules.filter((r) => r.type !== "creation"),
      });
      expect(made.status).toBe(201);
      await g.pushFiles(planFiles("mini", { a: [] }), "Add plan");
      const running = await g.waitFor((x) => x.tasks.length > 0);
      const body = await trackerBody(g);
      expect(body).toContain(`no ruleset restricts creations of \`forge/${running.runId}/_state\``);

      // forge doctor reads the same rules (GET /repos/{owner}/{repo}/rules/branches/{branch}).
      const port = new OctokitPort(
        new Octokit({ baseUrl: g.sim.apiUrl, auth: g.sim.control.installationToken(g.installationId) }) as never,
        OWNER,
        REPO,
      );
      const state = await port.branchRules("forge/any-run/_state");
      const verdict = checkStateRuleset({
        rules: { ok: true, value: { state, task: [], integration: [], base: [], push: [], asApp: true } },
      } as unknown as DoctorFacts);
      expect(verdict.verdict).toBe("fail");
      expect(verdict.detail).toBe("no ruleset restricts creations of forge/<run>/_state");
      await g.waitFor((x) => x.status === "completed", 90_000);
    },
  );
});
