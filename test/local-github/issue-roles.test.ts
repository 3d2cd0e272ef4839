// Who may change an issue on the local GitHub, as on GitHub ("Repository roles for an organization"):
// triage closes, reopens and labels anyone's issue but edits only its own; read changes nobody's but
// its own issue ("Issue owners and users with push access or Triage role can edit an issue").
// Through plain Octokit with users' tokens, in strict mode.
import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSim, type Sim } from "../../src/local-github/server.js";

const owner = "acme";
const repo = "roles";
let sim: Sim;
let issue: number;

const as = (login: string) => new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken(login) });
const status = (p: Promise<unknown>) =>
  p.then(
    () => 200,
    (e: { status: number }) => e.status,
  );

beforeAll(async () => {
  sim = await createSim({ workflowExecutor: "noop" });
  await sim.control.createRepo({
    owner,
    name: repo,
    files: { "README.md": "# r\n" },
    collaborators: { writer: "write", triager: "triage", reader: "read" },
  });
  issue = (await as("writer").rest.issues.create({ owner, repo, title: "Writer's issue", body: "Body." })).data.number;
});

afterAll(async () => {
  await sim.close();
});

describe("issues/update by role", () => {
  it("triage closes and reopens another's issue, but cannot edit its title or body", async () => {
    const t = as("triager");
    expect(await status(t.rest.issues.update({ owner, repo, issue_number: issue, state: "closed" }))).toBe(200);
    expect(await status(t.rest.issues.update({ owner, repo, issue_number: issue, state: "open" }))).toBe(200);
    expect(await status(t.rest.issues.update({ owner, repo, issue_number: issue, body: "Mine now." }))).toBe(403);
    expect(await status(t.rest.issues.update({ owner, repo, issue_number: issue, title: "Mine now" }))).toBe(403);
    const { data } = await as("writer").rest.issues.get({ owner, repo, issue_number: issue });
    expect(data).toMatchObject({ state: "open", title: "Writer's issue", body: "Body." });
  });

  it("read cannot close another's issue; write edits anything", async () => {
    expect(await status(as("reader").rest.issues.update({ owner, repo, issue_number: issue, state: "closed" }))).toBe(403);
    expect(await status(as("writer").rest.issues.update({ owner, repo, issue_number: issue, title: "Renamed" }))).toBe(200);
    expect(sim.violations.filter((v) => v.kind !== "request")).toEqual([]);
  });

  it("an issue's author with read access edits its title and body and closes it; its labels stay; GraphQL says when the body was last edited", async () => {
    const r = as("reader");
    const own = (await r.rest.issues.create({ owner, repo, title: "Reader's issue", body: "First." })).data.number;
    const query = `query { repository(owner: "${owner}", name: "${repo}") { issue(number: ${own}) { title body lastEditedAt } } }`;
    type Answer = { repository: { issue: { title: string; body: string; lastEditedAt: string | null } } };
    expect((await as("writer").graphql<Answer>(query)).repository.issue).toEqual({
      title: "Reader's issue",
      body: "First.",
      lastEditedAt: null,
    });
    expect(await status(r.rest.issues.update({ owner, repo, issue_number: own, body: "Second.", labels: ["bug"] }))).toBe(200);
    expect(await status(r.rest.issues.update({ owner, repo, issue_number: own, title: "Renamed", state: "closed" }))).toBe(200);
    const { data } = await as("writer").rest.issues.get({ owner, repo, issue_number: own });
    expect(data).toMatchObject({ title: "Renamed", body: "Second.", state: "closed", labels: [] });
    const edited = (await as("writer").graphql<Answer>(query)).repository.issue;
    expect(edited.body).toBe("Second.");
    expect(Date.parse(edited.lastEditedAt!)).toBeGreaterThan(0);
    expect(sim.violations.filter((v) => v.kind !== "request")).toEqual([]);
  });
});
