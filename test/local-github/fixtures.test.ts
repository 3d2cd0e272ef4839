// Replays @octokit/fixtures scenarios — HTTP traffic recorded from the real api.github.com — against
// the local GitHub: each recorded request is sent as recorded (placeholders mapped to the
// simulator's shas), and the simulator must answer with the recorded status and at least every
// field the recorded response had. Steps that use an operation the simulator does not implement
// must answer 501 naming it (never an invented body).
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSim, type Sim } from "../../src/local-github/server.js";

interface Step {
  method: string;
  path: string;
  body?: unknown;
  status: number;
  reqheaders: Record<string, string>;
  response: unknown;
}

const require = createRequire(import.meta.url);
const root = join(dirname(require.resolve("@octokit/fixtures/package.json")), "scenarios", "api.github.com");
const load = (name: string): Step[] => JSON.parse(readFileSync(join(root, name, "normalized-fixture.json"), "utf8")) as Step[];

const ORG = "octokit-fixture-org";
let sim: Sim;
let token: string;
/** placeholder sha (as normalized by @octokit/fixtures) → real sha, per repository */
const shas = new Map<string, Map<string, string>>();

/** Fields GitHub added to an object that the simulator lacks (path-qualified). */
function missingKeys(recorded: unknown, actual: unknown, at = ""): string[] {
  if (Array.isArray(recorded)) {
    if (!Array.isArray(actual)) return [`${at || "/"} (not an array)`];
    return recorded.length && actual.length ? missingKeys(recorded[0], actual[0], `${at}[0]`) : [];
  }
  if (!recorded || typeof recorded !== "object") return [];
  if (!actual || typeof actual !== "object") return [`${at || "/"} (not an object)`];
  const out: string[] = [];
  for (const [k, v] of Object.entries(recorded)) {
    if (!(k in (actual as Record<string, unknown>))) out.push(`${at}.${k}`);
    else if (v && typeof v === "object") out.push(...missingKeys(v, (actual as Record<string, unknown>)[k], `${at}.${k}`));
  }
  return out;
}

/**
 * Fields of real responses the simulator deliberately leaves out (not in GitHub's description or
 * of no use to Forge); each would otherwise be reported as missing.
 */
const NOT_MODELLED = new Set([
  ".organization", // owners are modelled as users; no organization object
  ".temp_clone_token", // a web-UI clone token Forge never uses
]);

async function replay(
  repo: string,
  steps: Step[],
): Promise<Array<{ step: string; status: number; expected: number; missing: string[]; operation?: string }>> {
  const map = shas.get(repo) ?? new Map<string, string>();
  const sub = (text: string) => text.replace(/0{39}[1-9]/g, (p) => map.get(p) ?? p);
  const results = [];
  for (const s of steps) {
    const path = sub(s.path);
    const headers: Record<string, string> = {
      accept: s.reqheaders.accept ?? "application/vnd.github.v3+json",
      authorization: `token ${token}`,
    };
    if (s.body !== undefined && s.body !== "") headers["content-type"] = "application/json";
    const res = await fetch(`${sim.apiUrl}${path}`, {
      method: s.method.toUpperCase(),
      headers,
      body: s.body !== undefined && s.body !== "" ? sub(JSON.stringify(s.body)) : undefined,
    });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : "";
    } catch {
      /* raw */
    }
    const operation = res.status === 501 ? (body as { operationId?: string }).operationId : undefined;
    const missing = res.status === s.status ? missingKeys(s.response, body).filter((k) => !NOT_MODELLED.has(k.replace(/\[0\]/g, ""))) : [];
    results.push({ step: `${s.method.toUpperCase()} ${s.path}`, status: res.status, expected: s.status, missing, operation });
  }
  return results;
}

beforeAll(async () => {
  sim = await createSim();
  token = sim.control.userToken(ORG);
  // get-content / get-repository: README.md "# hello-world" has the recorded blob sha.
  await sim.control.createRepo({ owner: ORG, name: "hello-world", defaultBranch: "master", files: { "README.md": "# hello-world" } });
  for (const name of ["create-status", "add-labels-to-issue", "labels", "create-file", "errors"])
    await sim.control.createRepo({ owner: ORG, name, defaultBranch: "master", files: { "README.md": `# ${name}\n` } });
  // git-refs: 0…02 is a commit and 0…01 its child, the branch head (the recording fast-forwards "test").
  await sim.control.createRepo({ owner: ORG, name: "git-refs", defaultBranch: "master", files: { "README.md": "# git-refs\n" } });
  const api = (path: string, method = "GET", body?: unknown) => sim.control.api(ORG, method, path, body);
  const first = ((await api(`/repos/${ORG}/git-refs/git/ref/heads/master`)).body as { object: { sha: string } }).object.sha;
  await api(`/repos/${ORG}/git-refs/contents/second.txt`, "PUT", { message: "second", content: "Mg==" });
  const second = ((await api(`/repos/${ORG}/git-refs/git/ref/heads/master`)).body as { object: { sha: string } }).object.sha;
  shas.set(
    "git-refs",
    new Map([
      ["0000000000000000000000000000000000000002", first],
      ["0000000000000000000000000000000000000001", second],
    ]),
  );
  const head = ((await api(`/repos/${ORG}/create-status/git/ref/heads/master`)).body as { object: { sha: string } }).object.sha;
  shas.set("create-status", new Map([["0000000000000000000000000000000000000001", head]]));
});

afterAll(async () => {
  await sim?.close();
});

describe("@octokit/fixtures replayed against the local GitHub", () => {
  for (const [scenario, repo] of [
    ["create-status", "create-status"],
    ["add-labels-to-issue", "add-labels-to-issue"],
    ["create-file", "create-file"],
    ["errors", "errors"],
    ["get-repository", "hello-world"],
    ["get-content", "hello-world"],
  ] as const) {
    it(`${scenario}: recorded statuses and fields`, async () => {
      const results = await replay(repo, load(scenario));
      expect(results.map((r) => `${r.step} → ${r.status}`)).toEqual(results.map((r) => `${r.step} → ${r.expected}`));
      expect(results.flatMap((r) => r.missing.map((m) => `${r.step}: ${m}`))).toEqual([]);
    });
  }

  it("get-content: the raw media type returns the file itself, and the blob sha matches GitHub's", async () => {
    const [dir, raw] = await replay("hello-world", load("get-content"));
    expect(dir?.status).toBe(200);
    expect(raw?.status).toBe(200);
    const res = await fetch(`${sim.apiUrl}/repos/${ORG}/hello-world/contents/README.md`, {
      headers: { accept: "application/vnd.github.v3.raw", authorization: `token ${token}` },
    });
    expect(await res.text()).toBe("# hello-world");
    const listing = (await (
      await fetch(`${sim.apiUrl}/repos/${ORG}/hello-world/contents/`, { headers: { authorization: `token ${token}` } })
    ).json()) as Array<{ sha: string }>;
    expect(listing[0]!.sha).toBe((load("get-content")[0]!.response as Array<{ sha: string }>)[0]!.sha);
  });

  it("git-refs and labels: implemented steps match; the others answer 501 naming their operation", async () => {
    const refs = await replay("git-refs", load("git-refs"));
    const labels = await replay("labels", load("labels"));
    const all = [...refs, ...labels];
    for (const r of all) {
      if (r.status === 501) expect(r.operation).toMatch(/^[a-z-]+\/[a-z-]+$/);
      else if (r.status === 404 && r.step.endsWith("/git/refs/")) {
        // The list-all-refs endpoint was removed from GitHub's current description.
        expect(sim.core.validator.describe("GET", "/repos/o/r/git/refs/")).toBeUndefined();
      } else expect(`${r.step} → ${r.status}`).toBe(`${r.step} → ${r.expected}`);
    }
    expect(all.flatMap((r) => r.missing.map((m) => `${r.step}: ${m}`))).toEqual([]);
    expect(labels.filter((r) => r.status === 501).map((r) => r.operation)).toEqual(["issues/update-label", "issues/delete-label"]);
    expect(sim.violations.filter((v) => v.kind !== "request")).toEqual([]);
  });
});
