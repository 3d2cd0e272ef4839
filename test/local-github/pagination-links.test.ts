// GitHub's pagination links name a repository by its id — "Using pagination in the REST API"
// (docs.github.com/rest/using-the-rest-api/using-pagination-in-the-rest-api) shows
// `link: <https://api.github.com/repositories/1300192/issues?page=2>; rel="next"` — and those paths
// answer like the repository's own routes.
import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSim, type Sim } from "../../src/local-github/server.js";

let sim: Sim;
let gh: Octokit;
let repoId: number;

beforeAll(async () => {
  sim = await createSim();
  repoId = (await sim.control.createRepo({ owner: "acme", name: "r", files: { "a.txt": "a\n" } })).id;
  gh = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken("acme") });
  for (const title of ["one", "two", "three"]) await gh.rest.issues.create({ owner: "acme", repo: "r", title });
});
afterAll(() => sim.close());

describe("pagination links", () => {
  it("point at /repositories/{id}/…, which answers as the repository's route", async () => {
    const first = await gh.rest.issues.listForRepo({ owner: "acme", repo: "r", per_page: 1, state: "all" });
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.link ?? "")?.[1];
    expect(next).toBe(`${sim.apiUrl}/repositories/${repoId}/issues?per_page=1&state=all&page=2`);
    const second = await gh.request(`GET ${next!.slice(sim.apiUrl.length)}`);
    expect(second.status).toBe(200);
    expect((second.data as { title: string }[]).map((i) => i.title)).toHaveLength(1);
    expect((second.data as { title: string }[])[0]!.title).not.toBe(first.data[0]!.title);
    const all = await gh.paginate(gh.rest.issues.listForRepo, { owner: "acme", repo: "r", per_page: 1, state: "all" });
    expect(all.map((i) => i.title).sort()).toEqual(["one", "three", "two"]);
  });

  it("an unknown repository id answers 404", async () => {
    await expect(gh.request(`GET /repositories/${repoId + 999}/issues`)).rejects.toMatchObject({ status: 404 });
  });
});
