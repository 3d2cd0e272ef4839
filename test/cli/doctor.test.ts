/**
 * `forge doctor` against the local GitHub: a repository set up as README.md says passes every
 * check; one that gets each thing wrong fails each check, with the fix; without a person's token the
 * admin-only checks are skipped, not guessed.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
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
const manifest = YAML.parse(readFileSync(APP_MANIFEST, "utf8")) as {
  default_permissions: Record<string, string>;
  default_events: string[];
};
const workflow = readFileSync(AGENT_WORKFLOW_TEMPLATE, "utf8");

async function api(method: string, path: string, body?: unknown): Promise<void> {
  const res = await sim.control.api("octo", method, path, body);
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
}

beforeAll(async () => {
  sim = await createSim();
  const keys = appKeys();
  const app = sim.control.registerApp({
    slug: "forge",
    owner: "octo",
    publicKeyPem: keys.publicKeyPem,
    permissions: manifest.default_permissions as never,
    events: manifest.default_events,
  });
  // Ready: set up as README.md says.
  await sim.control.createRepo({
    owner: "octo",
    name: "ready",
    files: { "README.md": "# ready\n", ".github/workflows/forge-agent.yml": workflow },
  });
  await api("POST", "/repos/octo/ready/rulesets", stateBranchRuleset(app.id));
  sim.control.setSecret("octo/ready", "ANTHROPIC_API_KEY", "sk-test");
  // The runner opens each task's pull request with the job's token.
  await api("PUT", "/repos/octo/ready/actions/permissions/workflow", {
    default_workflow_permissions: "read",
    can_approve_pull_request_reviews: true,
  });
  await api("PUT", "/repos/octo/ready/branches/main/protection", {
    required_status_checks: null,
    enforce_admins: false,
    required_pull_request_reviews: { required_approving_review_count: 1 },
    restrictions: null,
  });
  // Broken: each thing wrong.
  const drifted = workflow.replace(/\n {6}context:\n(?: {8}.*\n)+/, "\n").replace(/actions\/checkout@[0-9a-f]{40}/, "actions/checkout@v4");
  await sim.control.createRepo({
    owner: "octo",
    name: "broken",
    files: { "README.md": "# broken\n", ".github/workflows/forge-agent.yml": drifted },
  });
  await api("PUT", "/repos/octo/broken/actions/permissions", { enabled: true, allowed_actions: "local_only" });
  await api("POST", "/repos/octo/broken/rulesets", {
    name: "everything through review",
    target: "branch",
    enforcement: "active",
    conditions: { ref_name: { include: ["~ALL"], exclude: [] } },
    rules: [
      {
        type: "pull_request",
        parameters: {
          required_approving_review_count: 1,
          dismiss_stale_reviews_on_push: false,
          require_code_owner_review: false,
          require_last_push_approval: false,
          required_review_thread_resolution: false,
        },
      },
    ],
  });
  // Not installed at all.
  await sim.control.createRepo({ owner: "octo", name: "elsewhere", files: { "README.md": "# elsewhere\n" } });
  sim.control.install(app.id, "octo", ["ready", "broken"]);
  // The App's credentials where forge doctor looks for them: the .env `forge app` writes.
  dir = mkdtempSync(join(tmpdir(), "forge-doctor-"));
  updateEnvFile(join(dir, ".env"), { APP_ID: String(app.id), PRIVATE_KEY: keys.privateKeyPem, GITHUB_API_URL: sim.apiUrl });
  admin = sim.control.userToken("octo");
});

afterAll(async () => {
  await sim?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

type Warning = { rule: string; source: string; branch?: string; effect: string; fix: string; blocks: boolean };
type Check = { id: string; verdict: string; detail: string; fix?: string; warnings?: Warning[]; notes?: string[] };
async function doctor(repo: string, token?: string): Promise<{ code: number; checks: Check[]; out: string }> {
  const r = await runForge(
    ["doctor", "--repo", repo, "--dir", dir, "--api-url", sim.apiUrl, "--json", ...(token ? ["--token", token] : [])],
    dir,
  );
  const parsed = JSON.parse(r.out) as { checks: Check[] };
  return { code: r.code, checks: parsed.checks, out: r.out };
}
const verdicts = (checks: Check[]) => Object.fromEntries(checks.map((c) => [c.id, c.verdict]));

describe("forge doctor", () => {
  it("passes every check on a repository set up as README.md says", async () => {
    const r = await doctor("octo/ready", admin);
    expect(verdicts(r.checks)).toEqual({
      app: "pass",
      workflow: "pass",
      actions: "pass",
      "state-ruleset": "pass",
      secret: "pass",
      branches: "pass",
      settings: "pass",
    });
    expect(r.code).toBe(0);
    expect(r.checks.flatMap((c) => c.warnings ?? [])).toEqual([]);
    // What only makes the final pull request wait for a person is said, not warned about.
    expect(r.checks.find((c) => c.id === "branches")!.notes).toContain(
      "the final pull request waits for 1 approving review(s) (main's protection)",
    );
    // The text form: one line per check.
    const text = await runForge(["doctor", "--repo", "octo/ready", "--dir", dir, "--api-url", sim.apiUrl, "--token", admin], dir);
    expect(text.code).toBe(0);
    expect(text.out).toMatch(/^✓ the Forge App is installed/m);
    expect(text.out).toContain("All 7 checks passed.");
  });

  it("fails each check on a repository that gets each wrong, and says how to fix it", async () => {
    const r = await doctor("octo/broken", admin);
    expect(r.code).toBe(1);
    const by = Object.fromEntries(r.checks.map((c) => [c.id, c]));
    expect(by.app!.verdict).toBe("pass");
    expect(by.workflow).toMatchObject({ verdict: "fail" });
    expect(by.workflow!.detail).toMatch(/its inputs are attempt, run_id, task_id, not attempt, context, run_id, task_id/);
    expect(by.workflow!.detail).toMatch(/does not use actions\/checkout@3d3c42e/);
    expect(by.workflow!.fix).toMatch(/forge init --force/);
    expect(by.actions).toMatchObject({ verdict: "fail" });
    expect(by.actions!.detail).toMatch(/not allowed \(local_only\): actions\/checkout@v4, forge-dev\/forge\/action@v1/);
    expect(by["state-ruleset"]).toMatchObject({ verdict: "fail" });
    expect(by["state-ruleset"]!.fix).toMatch(/Protect the state branches/);
    expect(by.secret).toMatchObject({ verdict: "fail", detail: "no Actions secret ANTHROPIC_API_KEY" });
    expect(by.branches).toMatchObject({ verdict: "fail" });
    // Required reviews on every branch: neither the App's journal nor the runner's pushes can be
    // written (Forge cannot work), and each task would wait for an approval.
    const reviews = by.branches!.warnings!.filter(
      (w) => w.rule === "pull_request" && w.source.startsWith('ruleset "everything through review"'),
    );
    expect(reviews.map((w) => [w.branch, w.blocks])).toEqual([
      ["forge/plan-1a2b3c4/_state", true],
      ["forge/plan-1a2b3c4/task/1", true],
      ["forge/plan-1a2b3c4/_integration", false],
    ]);
    expect(reviews[0]!.effect).toBe("the App cannot write its journal: changes must be made through a pull request");
    expect(reviews[1]!.effect).toBe("the runner cannot push task branches: changes must be made through a pull request");
    expect(reviews[1]!.fix).toMatch(/exclude refs\/heads\/forge\/\*\* from ruleset "everything through review"/);
    expect(reviews[2]!.effect).toMatch(/^required reviews: each task waits for 1 approving review before Forge can merge it/);

    const elsewhere = await doctor("octo/elsewhere", admin);
    expect(elsewhere.checks.find((c) => c.id === "app")).toMatchObject({
      verdict: "fail",
      detail: "the App is not installed on octo/elsewhere",
    });
    expect(elsewhere.checks.find((c) => c.id === "workflow")).toMatchObject({
      verdict: "fail",
      detail: ".github/workflows/forge-agent.yml is not on main",
    });

    // An App registered with less than app.yml asks.
    const keys = appKeys();
    const lite = sim.control.registerApp({
      slug: "forge-lite",
      publicKeyPem: keys.publicKeyPem,
      permissions: { contents: "read" },
      events: ["push"],
    });
    sim.control.install(lite.id, "octo", ["broken"]);
    const liteDir = mkdtempSync(join(tmpdir(), "forge-doctor-lite-"));
    try {
      updateEnvFile(join(liteDir, ".env"), { APP_ID: String(lite.id), PRIVATE_KEY: keys.privateKeyPem, GITHUB_API_URL: sim.apiUrl });
      const weak = await runForge(["doctor", "--repo", "octo/broken", "--dir", liteDir, "--api-url", sim.apiUrl, "--json"], liteDir);
      const app = (JSON.parse(weak.out) as { checks: Check[] }).checks.find((c) => c.id === "app")!;
      expect(app.verdict).toBe("fail");
      expect(app.detail).toMatch(
        /^permissions missing: actions: write \(has none\), checks: write \(has none\), contents: write \(has read\)/,
      );
      expect(app.detail).toMatch(/events missing: pull_request, pull_request_review, workflow_run/);
      // Commit statuses (Jenkins, CircleCI) are red CI too: the App must receive them.
      expect(app.detail).toMatch(/events missing: [^\n]*\bcheck_suite, status\b/);
      expect(app.fix).toMatch(/accept the new permissions/);
    } finally {
      rmSync(liteDir, { recursive: true, force: true });
    }

    // Actions turned off altogether.
    await api("PUT", "/repos/octo/broken/actions/permissions", { enabled: false });
    expect((await doctor("octo/broken", admin)).checks.find((c) => c.id === "actions")).toMatchObject({
      verdict: "fail",
      detail: "Actions is disabled for the repository",
    });
  });

  it("without a person's token, the admin-only checks are skipped with what they need; without the App's credentials, the App's", async () => {
    const r = await doctor("octo/ready");
    expect(verdicts(r.checks)).toEqual({
      app: "pass",
      workflow: "pass",
      actions: "skip",
      "state-ruleset": "pass",
      secret: "skip",
      branches: "pass",
      settings: "skip",
    });
    // Checks that could not run are no pass: exit 3 (CLI_EXIT.NOT_CHECKED), and the last line says why.
    expect(r.code).toBe(3);
    expect(r.checks.find((c) => c.id === "settings")!.detail).toMatch(
      /^not checked: Actions' workflow permissions \(needs a token of a repository admin/,
    );
    expect(r.checks.find((c) => c.id === "secret")!.detail).toMatch(/needs a token of a repository admin/);
    const text = await runForge(["doctor", "--repo", "octo/ready", "--dir", dir, "--api-url", sim.apiUrl], dir);
    expect(text.code).toBe(3);
    expect(text.out.trimEnd().split("\n").at(-1)).toBe(
      "3 of 7 checks could not run: needs a token of a repository admin (--token, GITHUB_TOKEN or GH_TOKEN); Actions' workflow permissions (needs a token of a repository admin (--token, GITHUB_TOKEN or GH_TOKEN)). 4 passed; the repository is not shown ready.",
    );

    const bare = mkdtempSync(join(tmpdir(), "forge-doctor-bare-"));
    try {
      const noApp = await runForge(
        ["doctor", "--repo", "octo/ready", "--dir", bare, "--api-url", sim.apiUrl, "--token", admin, "--json"],
        bare,
      );
      const checks = (JSON.parse(noApp.out) as { checks: Check[] }).checks;
      expect(checks.find((c) => c.id === "app")).toMatchObject({ verdict: "skip" });
      expect(checks.find((c) => c.id === "workflow")).toMatchObject({ verdict: "pass" });
    } finally {
      rmSync(bare, { recursive: true, force: true });
    }
  });

  it("answers bad input in one line", async () => {
    const notRepo = await runForge(["doctor", "--repo", "no-slash", "--dir", dir], dir);
    expect(notRepo.code).toBe(2);
    expect(notRepo.err).toMatch(/--repo "no-slash" is not owner\/name/);
    writeFileSync(join(dir, "x"), "");
    const noOrigin = await runForge(["doctor", "--dir", dir], dir);
    expect(noOrigin.code).toBe(2);
    expect(noOrigin.err).toMatch(/--repo owner\/name is required/);
  });
});

describe("forge doctor when it cannot check, and where it finds the repository", () => {
  it("exits non-zero when nothing could be checked, and names why: no credentials, a refused token, GitHub out of reach, no such repository", async () => {
    const bare = mkdtempSync(join(tmpdir(), "forge-doctor-bare-"));
    const last = (out: string) => out.trimEnd().split("\n").at(-1)!;
    try {
      const none = await runForge(["doctor", "--repo", "octo/ready", "--dir", bare, "--api-url", sim.apiUrl], bare);
      expect(none.code).toBe(3);
      expect(none.out).not.toMatch(/checks passed/);
      expect(last(none.out)).toMatch(/^7 of 7 checks could not run: no App credentials \(APP_ID and PRIVATE_KEY\); no token: .*0 passed/);

      const refused = await doctor("octo/ready", "ghp_not-a-token");
      expect(refused.code).toBe(3);
      expect(refused.checks.find((c) => c.id === "actions")!.detail).toMatch(/GitHub answered 401: the credentials were refused/);

      // A port nothing listens on (taken and let go).
      const closed = createServer();
      await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
      const port = (closed.address() as AddressInfo).port;
      await new Promise<void>((r) => closed.close(() => r()));
      const nobody = `http://127.0.0.1:${port}/api/v3`;
      const unreachable = await runForge(["doctor", "--repo", "octo/ready", "--dir", dir, "--api-url", nobody, "--token", admin], dir);
      expect(unreachable.code).toBe(3);
      expect(last(unreachable.out)).toContain(`7 of 7 checks could not run: ${nobody} could not be reached (`);
      expect(unreachable.out).toMatch(/ECONNREFUSED/);
      expect(unreachable.out).not.toMatch(/GitHub answered 500/);

      const nowhere = await doctor("octo/no-such-repo", admin);
      expect(nowhere.code).toBe(3);
      // Every check could not run, for that one reason (the settings check names what it could not read).
      for (const c of nowhere.checks) {
        expect(c.verdict, c.id).toBe("skip");
        expect(c.detail, c.id).toMatch(
          /^not checked: (?:Actions' workflow permissions \()?no repository octo\/no-such-repo that these credentials can see \(GitHub answered 404\)\)?$/,
        );
      }
      expect(nowhere.checks).toHaveLength(7);
    } finally {
      rmSync(bare, { recursive: true, force: true });
    }
  });

  it("takes the repository from the origin remote of the clone it runs in, with --dir where the App's .env is (README.md)", async () => {
    const clone = mkdtempSync(join(tmpdir(), "forge-doctor-clone-"));
    try {
      execFileSync("git", ["init", "-q", clone]);
      execFileSync("git", ["-C", clone, "remote", "add", "origin", `${sim.gitUrl}/octo/ready.git`]);
      const r = await runForge(["doctor", "--dir", dir, "--api-url", sim.apiUrl, "--token", admin], clone);
      expect(r.out).toMatch(/^forge doctor: octo\/ready \(its origin remote\)$/m);
      expect(r.out).toContain("All 7 checks passed.");
      expect(r.code).toBe(0);
    } finally {
      rmSync(clone, { recursive: true, force: true });
    }
  });
});
