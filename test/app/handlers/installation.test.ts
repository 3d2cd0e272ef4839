/**
 * The installation handler, through a real Probot instance with GitHub mocked by nock 14
 * (./fixtures.ts).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { delivery, GitHubMock, INSTALLATION_ID, startApp, user } from "./fixtures.js";

let gh: GitHubMock;
beforeEach(() => {
  gh = new GitHubMock();
});
afterEach(() => gh.close());

describe("installation", () => {
  it("created: noted in the log, without an API call", async () => {
    const app = await startApp();
    await app.receive(
      delivery("installation", {
        action: "created",
        installation: {
          id: INSTALLATION_ID,
          account: user("acme", "Organization"),
          app_id: 1001,
          app_slug: "forge",
          target_type: "Organization",
          repository_selection: "selected",
          events: ["push"],
          permissions: { contents: "write" },
        },
        repositories: [{ id: 77, node_id: "R_77", name: "widgets", full_name: "acme/widgets", private: false }],
        sender: user("octocat"),
      }),
    );
    expect(gh.calls).toEqual([]);
    gh.verify();
  });
});
