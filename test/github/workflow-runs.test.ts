/**
 * What the port makes of GitHub Enterprise Server's workflow runs, which may come without `path`
 * (GitHub's description makes it required): a run listed by its workflow's file is that file's.
 * Octokit is a stand-in here, since a mock that checks answers against GitHub's description fills the field in.
 */
import { describe, expect, it } from "vitest";
import { OctokitPort, type Octokit } from "../../src/github/octokit-port.js";

describe("OctokitPort.listWorkflowRuns", () => {
  it("listWorkflowRuns: a run GitHub Enterprise Server lists without its `path` is of the workflow it was listed by", async () => {
    const run = (id: number, path?: string) => ({
      id,
      ...(path ? { path } : {}),
      event: "workflow_dispatch",
      head_branch: "forge/r/a/1",
      status: "completed",
      conclusion: "success",
      created_at: "2026-11-22T09:00:00Z",
      head_repository: { id: 77 },
    });
    // GitHub's description makes `path` required (the mock fills it in): the Enterprise Server answer is handed over as it comes.
    const asked: unknown[] = [];
    const ghes = {
      rest: {
        actions: {
          listWorkflowRuns: async (params: unknown) => {
            asked.push(params);
            return { data: { total_count: 2, workflow_runs: [run(5001), run(5002, ".github/workflows/forge-agent.yml@refs/heads/main")] } };
          },
        },
      },
    };
    const runs = await new OctokitPort(ghes as unknown as Octokit, "acme", "widgets").listWorkflowRuns("forge-agent.yml", {});
    expect(asked).toEqual([{ owner: "acme", repo: "widgets", workflow_id: "forge-agent.yml", per_page: 100 }]);
    expect(runs.map((r) => [r.id, r.path])).toEqual([
      [5001, ".github/workflows/forge-agent.yml"],
      [5002, ".github/workflows/forge-agent.yml@refs/heads/main"],
    ]);
  });
});
