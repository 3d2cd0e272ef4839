/**
 * The checks a task PR must pass (src/github/required-checks.ts): the config's and those the
 * integration branch's rules name — rulesets' `required_status_checks` and branch protection's
 * contexts — read through the real port by an App with no administration permission, bounded,
 * cached per branch; how long the merge waits for a check only the rules name; and a check's name
 * as Forge writes it.
 */
import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inlineData } from "../../src/core/render/as-data.js";
import { ciVerdict } from "../../src/github/ci-checks.js";
import { OctokitPort } from "../../src/github/octokit-port.js";
import {
  graceLeft,
  readRuledChecks,
  protectionContexts,
  REQUIRED_CHECK_LIMITS,
  requiredChecks,
  RULED_CHECK_GRACE_MS,
  rulesetContexts,
} from "../../src/github/required-checks.js";
import { createSim, type Sim } from "../../src/local-github/server.js";
import { appKeys } from "../local-github/support/helpers.js";

let sim: Sim;
let admin: Octokit;
let port: OctokitPort;
const owner = "acme";
const repo = "widgets";

beforeAll(async () => {
  sim = await createSim({ workflowExecutor: "none" });
  await sim.control.createRepo({ owner, name: repo, files: { "README.md": "# w\n" } });
  admin = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken(owner) });
  const app = sim.control.registerApp({
    slug: "reader",
    publicKeyPem: appKeys().publicKeyPem,
    permissions: { contents: "read", checks: "read" },
    events: [],
  });
  const inst = sim.control.install(app.id, owner, [`${owner}/${repo}`]);
  port = new OctokitPort(new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.installationToken(inst.id) }) as never, owner, repo);
});
afterAll(async () => {
  await sim?.close();
});

describe("the checks the rules require, read by an App without administration", () => {
  it("a protected branch's contexts and its rulesets' required status checks; a branch not created yet has only its rulesets'", async () => {
    const { data: main } = await admin.rest.repos.getBranch({ owner, repo, branch: "main" });
    await admin.rest.git.createRef({ owner, repo, ref: "refs/heads/forge/r1/_integration", sha: main.commit.sha });
    await admin.rest.repos.updateBranchProtection({
      owner,
      repo,
      branch: "forge/r1/_integration",
      required_status_checks: { strict: false, contexts: ["ci/jenkins", "lint"] },
      enforce_admins: true,
      required_pull_request_reviews: null,
      restrictions: null,
    });
    await admin.rest.repos.createRepoRuleset({
      owner,
      repo,
      name: "integration",
      target: "branch",
      enforcement: "active",
      conditions: { ref_name: { include: ["refs/heads/forge/*/_integration"], exclude: [] } },
      rules: [
        {
          type: "required_status_checks",
          parameters: {
            strict_required_status_checks_policy: false,
            required_status_checks: [{ context: "circle: build", integration_id: 99 }, { context: "lint" }],
          },
        },
      ],
    });
    expect((await readRuledChecks(port, "forge/r1/_integration")).sort()).toEqual(["ci/jenkins", "circle: build", "lint", "lint"].sort());
    // Not created yet: the rulesets apply by pattern, the branch has no protection of its own.
    expect(await readRuledChecks(port, "forge/r2/_integration")).toEqual(["circle: build", "lint"]);
    expect(sim.violations.filter((v) => v.kind !== "request")).toEqual([]);
  });
});

describe("required checks", () => {
  it("are the config's first, then the rules' without repeats, the rules read once per TTL; a failed read counts the config's", async () => {
    const owner = {};
    let reads = 0;
    const read = async () => (reads++, ["lint", "circle: build", "lint"]);
    expect(await requiredChecks(owner, "b", ["test", "lint"], 0, 1000, read)).toEqual({
      all: ["test", "lint", "circle: build"],
      configured: ["test", "lint"],
    });
    await requiredChecks(owner, "b", ["test"], 999, 1000, read);
    expect(reads).toBe(1);
    await requiredChecks(owner, "b", ["test"], 1000, 1000, read);
    expect(reads).toBe(2);
    const failing = async (): Promise<string[]> => {
      throw new Error("403");
    };
    expect(await requiredChecks({}, "b", ["test"], 0, 1000, failing)).toEqual({ all: ["test"], configured: ["test"] });
  });

  it("take a bounded number of bounded names from the rules", () => {
    const many = Array.from({ length: 80 }, (_, i) => ({ context: `c${i}${"x".repeat(300)}` }));
    const names = rulesetContexts([{ type: "required_status_checks", parameters: { required_status_checks: many } }]);
    expect(names).toHaveLength(REQUIRED_CHECK_LIMITS.names);
    expect(Math.max(...names.map((n) => n.length))).toBe(REQUIRED_CHECK_LIMITS.name);
    expect(rulesetContexts([{ type: "pull_request", parameters: {} }, { type: "required_status_checks" }])).toEqual([]);
    expect(protectionContexts({ protection: { required_status_checks: { contexts: ["a", 3, ""], checks: [{ context: "b" }] } } })).toEqual([
      "a",
      "b",
    ]);
    expect(protectionContexts({ protected: false })).toEqual([]);
  });
});

describe("what the checks of a head say to its merge", () => {
  const ci = (o: { running?: boolean; missing?: string[]; failing?: number }) => ({
    pending: !!o.running || (o.missing ?? []).length > 0,
    running: !!o.running,
    missing: o.missing ?? [],
    failing: Array.from({ length: o.failing ?? 0 }, () => ({
      name: "x",
      conclusion: "failure",
      title: "",
      summary: "",
      annotations: [],
      log: "",
    })),
  });
  it("wait while one runs or one the config names has not reported; red once done with a failure; else go", () => {
    expect(ciVerdict(ci({ running: true, failing: 1 }), [])).toBe("wait");
    expect(ciVerdict(ci({ missing: ["test"], failing: 1 }), ["test"])).toBe("wait");
    expect(ciVerdict(ci({ missing: ["circle"], failing: 1 }), ["test"])).toBe("red");
    expect(ciVerdict(ci({ missing: ["circle"] }), ["test"])).toBe("go");
    expect(ciVerdict(ci({}), [])).toBe("go");
  });

  it("a check only the rules name is waited for RULED_CHECK_GRACE_MS from when it was first found missing on that head", () => {
    const owner = {};
    expect(graceLeft(owner, "h1", ["circle"], 1_000)).toBe(RULED_CHECK_GRACE_MS);
    expect(graceLeft(owner, "h1", ["circle"], 11_000)).toBe(RULED_CHECK_GRACE_MS - 10_000);
    expect(graceLeft(owner, "h1", ["circle"], 1_000 + RULED_CHECK_GRACE_MS)).toBe(0);
    expect(graceLeft(owner, "h2", ["circle"], 50_000)).toBe(RULED_CHECK_GRACE_MS);
    // Reported: nothing to wait for, and a new miss of the same head counts from then.
    expect(graceLeft(owner, "h1", [], 60_000)).toBe(0);
    expect(graceLeft(owner, "h1", ["circle"], 70_000)).toBe(RULED_CHECK_GRACE_MS);
  });
});

describe("a check's name in Forge's text", () => {
  it("is one line, bounded, its Markdown and mentions inert", () => {
    expect(inlineData("test")).toBe("test");
    expect(inlineData("ci/jenkins: build (linux).js")).toBe("ci/jenkins: build (linux).js");
    expect(inlineData("[x](https://evil.example) ![i](y) `c` <b>*e*</b> a|b ~s~ _u_")).toBe(
      "\\[x\\](https://evil.example) !\\[i\\](y) \\`c\\` \\<b\\>\\*e\\*\\</b\\> a\\|b \\~s\\~ \\_u\\_",
    );
    expect(inlineData("line\nbreak\r\n# heading")).toBe("line break # heading");
    expect(inlineData("@octocat look")).toBe("@\u200Boctocat look");
    expect(inlineData("x".repeat(500))).toHaveLength(200);
  });
});
