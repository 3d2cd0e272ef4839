/**
 * `forge demo --issues` (src/demo/issues.ts): the plan examples/plans/issue-tree filed as an issue
 * tree on the local GitHub — a parent, three sub-issues, "blocked by" — `/forge plan` on the parent,
 * the plan PR approved and merged through main's merge queue, the run to its end with the scripted
 * agent, the final PR approved, set to auto-merge by Forge and merged through the queue, every
 * issue closed. Each of these is asserted from the local GitHub's API before it closes, not only
 * from the demo's own result.
 */
import { Octokit } from "@octokit/rest";
import { describe, expect, it } from "vitest";
import { runIssueDemo, type IssueDemoResult } from "../../src/demo/issues.js";
import { DEMO_OWNER, DEMO_REPO, PERSON } from "../../src/demo/project.js";
import type { Sim } from "../../src/local-github/server.js";

const R = { owner: DEMO_OWNER, repo: DEMO_REPO };

interface Seen {
  parent: { state: string; summary: string };
  subs: { number: number; title: string; state: string; comment: string }[];
  blockedBy: Record<number, number[]>;
  planPr: { merged: boolean; base: string };
  finalPr: { number: number; merged: boolean; head: string; mergeSha: string | null };
  mainSha: string;
  indexOnMain: string;
  dequeued: { number: number; reason: string }[];
  autoMergeEnabled: number[];
  ruleTypes: string[];
}

/** What the local GitHub says at the end, read through its REST API as the person. */
async function readGitHub(sim: Sim, r: IssueDemoResult): Promise<Seen> {
  const user = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken(PERSON) });
  const parent = r.parent!.number;
  const bot = async (n: number) =>
    (await user.rest.issues.listComments({ ...R, issue_number: n })).data
      .filter((c) => c.user?.login === "forge[bot]")
      .map((c) => c.body ?? "")
      .join("\n");
  const { data: subIssues } = await user.request("GET /repos/{owner}/{repo}/issues/{issue_number}/sub_issues", {
    ...R,
    issue_number: parent,
  });
  const blockedBy: Record<number, number[]> = {};
  const subs: Seen["subs"] = [];
  for (const s of subIssues) {
    const { data } = await user.request("GET /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by", {
      ...R,
      issue_number: s.number,
    });
    blockedBy[s.number] = data.map((b) => b.number).sort();
    subs.push({ number: s.number, title: s.title, state: s.state, comment: await bot(s.number) });
  }
  const { data: finalPr } = await user.rest.pulls.get({ ...R, pull_number: r.finalPr!.number });
  const { data: planPr } = await user.rest.pulls.get({ ...R, pull_number: r.planPr!.number });
  const { data: main } = await user.rest.repos.getBranch({ ...R, branch: "main" });
  const { data: index } = await user.rest.repos.getContent({ ...R, path: "src/index.js", ref: "main" });
  const { data: rules } = await user.rest.repos.getBranchRules({ ...R, branch: "main" });
  const payloads = (action: string) =>
    sim.control.deliveries({ event: "pull_request", action }).map((d) => d.payload as { number: number; reason: string });
  return {
    parent: { state: (await user.rest.issues.get({ ...R, issue_number: parent })).data.state, summary: await bot(parent) },
    subs,
    blockedBy,
    planPr: { merged: planPr.merged, base: planPr.base.ref },
    finalPr: { number: finalPr.number, merged: finalPr.merged, head: finalPr.head.ref, mergeSha: finalPr.merge_commit_sha },
    mainSha: main.commit.sha,
    indexOnMain: Buffer.from((index as { content: string }).content, "base64").toString("utf8"),
    dequeued: payloads("dequeued").map((p) => ({ number: p.number, reason: p.reason })),
    autoMergeEnabled: payloads("auto_merge_enabled").map((p) => p.number),
    ruleTypes: rules.map((x) => x.type),
  };
}

describe("forge demo --issues", () => {
  it("runs the issue tree to its end: every sub-issue closed, the parent's summary, the final PR merged through the merge queue", async () => {
    let seen: Seen | undefined;
    const r = await runIssueDemo({
      write: () => undefined,
      timeoutMs: 400_000,
      inspect: async (sim, res) => void (seen = await readGitHub(sim, res)),
    });
    expect(r.problems).toEqual([]);
    expect(r.ok).toBe(true);
    const g = seen!;
    // The tree: three sub-issues; index is blocked by case and words.
    expect(g.subs.map((s) => s.title)).toEqual([
      "Case helpers: capitalize and kebabCase",
      "words and wordCount",
      "src/index.js re-exports the API",
    ]);
    const [kase, words, index] = g.subs.map((s) => s.number);
    expect(g.blockedBy).toEqual({ [kase!]: [], [words!]: [], [index!]: [kase, words].sort() });
    // main wants the merge queue; the plan PR merged through it.
    expect(g.ruleTypes).toEqual(expect.arrayContaining(["merge_queue", "pull_request", "required_status_checks"]));
    expect(g.planPr).toEqual({ merged: true, base: "main" });
    expect(g.dequeued).toContainEqual({ number: r.planPr!.number, reason: "MERGE" });
    // The final PR: Forge set it to auto-merge once approved, and the queue merged it into main.
    expect(g.finalPr).toMatchObject({ merged: true, head: `forge/${r.runId}/_integration` });
    expect(g.autoMergeEnabled).toContain(g.finalPr.number);
    expect(g.dequeued).toContainEqual({ number: g.finalPr.number, reason: "MERGE" });
    expect(g.mainSha).toBe(g.finalPr.mergeSha);
    expect(g.indexOnMain).toContain('export { wordCount, words } from "./words.js";');
    // Every sub-issue closed, saying its task merged with the final PR; the parent closed with the run's summary.
    for (const s of g.subs) {
      expect(s.state, `#${s.number}`).toBe("closed");
      expect(s.comment, `#${s.number}`).toContain(`merged into \`main\` with #${g.finalPr.number}`);
    }
    expect(g.parent.state).toBe("closed");
    expect(g.parent.summary).toContain("**completed**, 3/3 merged");
    // The demo's own result says the same.
    expect(r.subIssues.map((s) => [s.task, s.state, s.taskStatus])).toEqual([
      ["case", "closed", "MERGED"],
      ["words", "closed", "MERGED"],
      ["index", "closed", "MERGED"],
    ]);
    expect(r.finalPr).toEqual({ number: g.finalPr.number, merged: true, throughQueue: true, autoMerge: true, mergeCommitIsMain: true });
    expect(r.schemaViolations).toBe(0);
  }, 600_000);
});
