/**
 * The world of `forge doctor`'s warning tests (doctor-*.test.ts): one local GitHub per test file,
 * the Forge App registered from app.yml and installed on every repository of \`octo\`, its
 * credentials in a .env, and helpers that set up a repository as README.md says and read doctor's
 * JSON.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import YAML from "yaml";
import { afterAll, beforeAll, expect } from "vitest";
import { APP_MANIFEST } from "../../src/app/launch.js";
import { updateEnvFile } from "../../src/app/setup.js";
import { stateBranchRuleset } from "../../src/app/start-run.js";
import { AGENT_WORKFLOW_TEMPLATE } from "../../src/cli/commands/init.js";
import { appKeys } from "../../src/demo/app-keys.js";
import { createSim, type Sim } from "../../src/local-github/server.js";
import { runForge } from "./helpers.js";

/** The local GitHub, the folder of the App's .env, a repository admin's token, the App's id. */
export const w = {} as { sim: Sim; dir: string; admin: string; appId: number };
let repos = 0;
const manifest = YAML.parse(readFileSync(APP_MANIFEST, "utf8")) as {
  default_permissions: Record<string, string>;
  default_events: string[];
};
export const workflow = readFileSync(AGENT_WORKFLOW_TEMPLATE, "utf8");

export const TASK = "forge/plan-1a2b3c4/task/1";
export const INTEGRATION = "forge/plan-1a2b3c4/_integration";
export const STATE = "forge/plan-1a2b3c4/_state";
export const REVIEW = {
  required_approving_review_count: 2,
  dismiss_stale_reviews_on_push: false,
  require_code_owner_review: false,
  require_last_push_approval: false,
  required_review_thread_resolution: false,
};

export async function api(method: string, path: string, body?: unknown): Promise<void> {
  const res = await w.sim.control.api("octo", method, path, body);
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
}

/** A repository set up as README.md says (the agent workflow, the state ruleset, the secret, pull requests from Actions), plus `files`. */
export async function ready(files: Record<string, string> = {}): Promise<string> {
  const name = `r${++repos}`;
  await w.sim.control.createRepo({
    owner: "octo",
    name,
    files: { "README.md": `# ${name}\n`, ".github/workflows/forge-agent.yml": workflow, ...files },
  });
  await api("POST", `/repos/octo/${name}/rulesets`, stateBranchRuleset(w.appId));
  w.sim.control.setSecret(`octo/${name}`, "ANTHROPIC_API_KEY", "sk-test");
  await api("PUT", `/repos/octo/${name}/actions/permissions/workflow`, { can_approve_pull_request_reviews: true });
  return `octo/${name}`;
}

/** An active ruleset on `include` (ref patterns) with `rules`; `bypass`: the Forge App's bypass mode. */
export async function ruleset(
  repo: string,
  name: string,
  include: string[],
  rules: unknown[],
  bypass?: "always" | "pull_request",
): Promise<void> {
  await api("POST", `/repos/${repo}/rulesets`, {
    name,
    target: "branch",
    enforcement: "active",
    conditions: { ref_name: { include, exclude: [] } },
    rules,
    ...(bypass ? { bypass_actors: [{ actor_id: w.appId, actor_type: "Integration", bypass_mode: bypass }] } : {}),
  });
}

export type Warning = { rule: string; source: string; branch?: string; effect: string; fix: string; blocks: boolean };
export type Check = { id: string; verdict: string; detail: string; warnings?: Warning[]; notes?: string[] };

export async function doctor(
  repo: string,
  opts: { token?: string | null } = {},
): Promise<{ code: number; warnings: Warning[]; checks: Check[] }> {
  const token = opts.token === undefined ? w.admin : opts.token;
  const r = await runForge(
    ["doctor", "--repo", repo, "--dir", w.dir, "--api-url", w.sim.apiUrl, "--json", ...(token ? ["--token", token] : [])],
    w.dir,
  );
  const parsed = JSON.parse(r.out) as { checks: Check[]; warnings: Warning[] };
  return { code: r.code, warnings: parsed.warnings, checks: parsed.checks };
}

/** Each warning as `branch rule blocks|warns`, in doctor's order. */
export const summary = (ws: Warning[]): string[] => ws.map((w) => `${w.branch ?? "-"} ${w.rule} ${w.blocks ? "blocks" : "warns"}`);
export const one = (ws: Warning[], branch: string, rule: string): Warning => {
  const found = ws.filter((w) => w.branch === branch && w.rule === rule);
  expect(found).toHaveLength(1);
  return found[0]!;
};

/** One local GitHub for the test file, with the Forge App installed on `octo`. */
export function useDoctorWorld(): void {
  beforeAll(async () => {
    w.sim = await createSim();
    const keys = appKeys();
    w.appId = w.sim.control.registerApp({
      slug: "forge",
      owner: "octo",
      publicKeyPem: keys.publicKeyPem,
      permissions: manifest.default_permissions as never,
      events: manifest.default_events,
    }).id;
    w.sim.control.install(w.appId, "octo", "all");
    w.dir = mkdtempSync(join(tmpdir(), "forge-doctor-rules-"));
    updateEnvFile(join(w.dir, ".env"), { APP_ID: String(w.appId), PRIVATE_KEY: keys.privateKeyPem, GITHUB_API_URL: w.sim.apiUrl });
    w.admin = w.sim.control.userToken("octo");
  });

  afterAll(async () => {
    await w.sim?.close();
    if (w.dir) rmSync(w.dir, { recursive: true, force: true });
  });
}

export const CI = `name: CI
on:
  pull_request:
  push:
    branches-ignore: ["forge/*/_state"]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - run: npm test
`;
