// The Forge action as users run it, on the local GitHub: the agent workflow from
// templates/workflows/forge-agent.yml is dispatched through the REST API, the sim runner checks the
// task branch out over HTTP and runs action/dist (node24 → the current Node) with a job token
// scoped by the template's `permissions`; the scripted agent does the work; a PR appears with the
// rendered walkthrough. Also measures the runner's overhead per job and the stall figures.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Git } from "../../action/src/git.js";
import { startRun } from "../../src/core/decide/index.js";
import type { Journal } from "../../src/core/journal.js";
import { attemptDir, stateBranch } from "../../src/core/layout.js";
import { agentResultSchema } from "../../src/core/schemas/agent-result.js";
import { forgeConfigSchema } from "../../src/core/schemas/config.js";
import { createSim, type Sim } from "../../src/local-github/server.js";
import { createSimExecutor, type SimExecutor } from "../../src/local-github/runner/sim-executor.js";
import { ruleRefusal } from "../../src/github/rule-refusals.js";
import { SCRIPTED_AGENT, taskFile, vendoredActionFiles } from "./world.js";

const OWNER = "acme";
const REPO = "demo";
const RUN = "r1";
const PLAN = "p1";
const INTEGRATION = `forge/${RUN}/_integration`;
// FORGE_E2E_JOBS=9 for a steadier median; 3 keep the suite short.
const TIMED = Array.from({ length: Number(process.env.FORGE_E2E_JOBS ?? 3) }, (_, i) => `t${i + 1}`);

let sim: Sim;
let gh: Octokit;
let local: Git;
let dir: string;
let executor: SimExecutor | undefined;

const scripted = (id: string, fate: string, file: string) =>
  taskFile({
    id,
    title: `Write ${file}`,
    body: `## Description\n\nWrite ${file}.\n\n## Context\n\nA demo.\n\n## Instructions\n\nWrite it.\n\n\`\`\`txt file=${file}\nhello from ${id}\n\`\`\`\n\n\`\`\`forge-scripted-agent\nattempts:\n  1: ${fate}\nprogress: ["reading the task", "writing ${file}"]\n\`\`\`\n`,
  });

beforeAll(async () => {
  sim = await createSim();
  executor = createSimExecutor({ concurrency: 2, killGraceMs: 500 });
  sim.onWorkflowDispatch(executor.handler);
  // The template as users install it, pointing at the action vendored into the repository.
  const workflow = readFileSync("templates/workflows/forge-agent.yml", "utf8").replace(
    /uses: forge-dev\/forge\/action@v1/,
    "uses: ./.github/actions/forge",
  );
  expect(workflow).toContain("uses: ./.github/actions/forge");
  const tasks = [
    ...TIMED.map((id) => [id, scripted(id, "succeed", `src/${id}.txt`)]),
    ["stuck", scripted("stuck", "stall", "src/stuck.txt")],
    ["guarded", scripted("guarded", "succeed", "src/secret/guarded.txt")],
  ];
  await sim.control.createRepo({
    owner: OWNER,
    name: REPO,
    files: {
      "README.md": "# demo\n",
      "AGENTS.md": "Keep files short.\n",
      ".github/workflows/forge-agent.yml": workflow,
      // Heartbeats every second so the stall test takes seconds, not minutes.
      // FORGE_E2E_ISOLATION=none measures the jobs without the agent's own OS user (default auto).
      ".github/forge.yml": `heartbeat_interval_seconds: 1\nstale_threshold_seconds: 2\nagent:\n  adapter: command\n  isolation: ${process.env.FORGE_E2E_ISOLATION ?? "auto"}\n  command: ${JSON.stringify(`node ${SCRIPTED_AGENT}`)}\n`,
      // The scripted agent does everything in one session (src/agent's "single" stage).
      ".forge/stages.yml": '"1": [single]\n',
      [`.forge/plans/${PLAN}/plan.md`]: "# Plan\n\nWrite greetings.\n",
      ...Object.fromEntries(tasks.map(([id, text]) => [`.forge/plans/${PLAN}/tasks/${id}.md`, text!])),
      ...vendoredActionFiles(),
    },
    // As README.md's setup asks: the runner opens the task PR with the job's token.
    actionsMayCreatePullRequests: true,
  });
  const token = sim.control.userToken(OWNER);
  gh = new Octokit({ baseUrl: sim.apiUrl, auth: token });
  // The label the runner puts on task PRs, created with a description: a label GitHub creates on
  // the fly has none (null), which the local GitHub's strict response check refuses in pulls/list.
  await gh.rest.issues.createLabel({
    owner: OWNER,
    repo: REPO,
    name: "forge:task",
    color: "5319e7",
    description: "A Forge task pull request",
  });

  // What the App does when it starts the run: integration branch, journal, task branches.
  dir = mkdtempSync(path.join(tmpdir(), "forge-sim-e2e-"));
  local = new Git({
    dir,
    remote: `${sim.gitUrl}/${OWNER}/${REPO}.git`,
    token,
    identity: { name: "Forge App", email: "app@forge.invalid" },
  });
  await local.run(["init", "--quiet"]);
  await local.run(["remote", "add", "origin", `${sim.gitUrl}/${OWNER}/${REPO}.git`]);
  const planCommit = (await local.fetchBranch("main"))!;
  const journal = startRun(
    {
      runId: RUN,
      planId: PLAN,
      planCommit,
      dagHash: "0".repeat(64),
      integrationBranch: INTEGRATION,
      baseBranch: "main",
      nodes: tasks.map(([id]) => ({
        id: id!,
        kind: "task" as const,
        agentType: "1" as const,
        title: `Write src/${id}.txt`,
        dependencies: [],
      })),
    },
    Date.now(),
    forgeConfigSchema.parse({ max_parallel_agents: 10 }),
  ).journal;
  expect(journal.tasks.every((t) => t.status === "RUNNING" && t.attempts === 1)).toBe(true);
  const blob = (await local.run(["hash-object", "-w", "--stdin"], { input: JSON.stringify(journal) })).stdout.trim();
  const tree = (await local.run(["mktree"], { input: `100644 blob ${blob}\tjournal.json\n` })).stdout.trim();
  const stateCommit = (await local.run(["commit-tree", tree, "-m", "journal"])).stdout.trim();
  await local.run([
    "push",
    "--quiet",
    "origin",
    `${planCommit}:refs/heads/${INTEGRATION}`,
    `${stateCommit}:refs/heads/${stateBranch(RUN)}`,
    ...journal.tasks.map((t) => `${planCommit}:refs/heads/${t.attempt?.branch}`),
  ]);
}, 60_000);

afterAll(async () => {
  await sim?.close();
  executor?.dispose();
  local?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Rewrites the run's journal as the App would: a new commit on the state branch. */
async function writeJournal(change: (j: Journal) => void): Promise<void> {
  const state = stateBranch(RUN);
  const tip = (await local.fetchBranch(state))!;
  const j = JSON.parse((await local.run(["show", `${tip}:journal.json`])).stdout) as Journal;
  change(j);
  const blob = (await local.run(["hash-object", "-w", "--stdin"], { input: JSON.stringify(j) })).stdout.trim();
  const tree = (await local.run(["mktree"], { input: `100644 blob ${blob}\tjournal.json\n` })).stdout.trim();
  const commit = (await local.run(["commit-tree", tree, "-p", tip, "-m", "journal"])).stdout.trim();
  await local.run(["push", "--quiet", "origin", `${commit}:refs/heads/${state}`]);
}

async function dispatch(taskId: string, attempt = 1): Promise<number> {
  const res = await gh.request("POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches", {
    owner: OWNER,
    repo: REPO,
    workflow_id: "forge-agent.yml",
    ref: `forge/${RUN}/${taskId}/${attempt}`,
    inputs: { run_id: RUN, task_id: taskId, attempt: String(attempt), context: "" },
    return_run_details: true,
  });
  return (res.data as unknown as { workflow_run_id: number }).workflow_run_id;
}

async function waitForRun(runId: number, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { data } = await gh.rest.actions.getWorkflowRun({ owner: OWNER, repo: REPO, run_id: runId });
    if (data.status === "completed") return data;
    if (Date.now() > deadline) throw new Error(`run ${runId} still ${data.status}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const logOf = (runId: number) =>
  sim.core.state.runs
    .get(runId)!
    .jobs.map((j) => j.log)
    .join("");

function timingsOf(runId: number): {
  beforeAgentMs: number;
  agentMs: number;
  afterAgentMs: number;
  stallDetectedAfterMs?: number;
  partialPushedAfterMs?: number;
} {
  const m = /Forge timings \(ms\): (\{.*\})/.exec(logOf(runId));
  if (!m) throw new Error(`no timings in the job log:\n${logOf(runId)}`);
  return JSON.parse(m[1]!);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

describe("the Forge action on the local GitHub", () => {
  it("dispatch → checkout → agent → push → PR with the rendered walkthrough; runner overhead measured", async () => {
    const overhead: number[] = [];
    const actionOnly: number[] = [];
    for (const taskId of TIMED) {
      const t0 = performance.now();
      const runId = await dispatch(taskId);
      const run = await waitForRun(runId);
      const wall = performance.now() - t0;
      expect(run.conclusion, logOf(runId)).toBe("success");
      const t = timingsOf(runId);
      if (process.env.FORGE_E2E_DEBUG) console.log(logOf(runId), JSON.stringify(sim.violations.slice(-5)));
      overhead.push(wall - t.agentMs);
      actionOnly.push(t.beforeAgentMs + t.afterAgentMs);

      const branch = `forge/${RUN}/${taskId}/1`;
      const { data: pulls } = await gh.rest.pulls.list({ owner: OWNER, repo: REPO, head: `${OWNER}:${branch}`, state: "open" });
      expect(pulls).toHaveLength(1);
      const pr = pulls[0]!;
      expect(pr.title).toBe(`forge(${taskId}): Write src/${taskId}.txt`);
      expect(pr.base.ref).toBe(INTEGRATION);
      expect(pr.labels.map((l) => l.name)).toEqual(["forge:task"]);
      expect(pr.body).toContain(`<!-- forge:walkthrough run=${RUN} task=${taskId} attempt=1 -->`);
      expect(pr.body).toContain("### Files changed (1)");
      expect(pr.body).toContain(`| \`src/${taskId}.txt\` |`);
      // "Ready for review" is GraphQL only: where the local GitHub answers it the PR is ready; where it
      // answers 501, the PR stays a draft and the job says why.
      if (pr.draft)
        expect(logOf(runId)).toMatch(/could not mark the pull request ready: marking pull request #\d+ ready for review failed/);
      else expect(logOf(runId)).not.toContain("could not mark the pull request ready");

      const { data: head } = await gh.rest.repos.getBranch({ owner: OWNER, repo: REPO, branch });
      const { data: file } = await gh.rest.repos.getContent({
        owner: OWNER,
        repo: REPO,
        path: `${attemptDir(RUN, taskId, 1)}/result.json`,
        ref: branch,
      });
      const result = agentResultSchema.parse(JSON.parse(Buffer.from((file as { content: string }).content, "base64").toString()));
      expect(result).toMatchObject({
        exit_code: 0,
        task_id: taskId,
        branch,
        walkthrough: { head_sha: result.head_sha, files_changed: [{ path: `src/${taskId}.txt` }] },
      });
      expect(head.commit.parents[0]!.sha).toBe(result.head_sha);
      expect(head.commit.commit.message).toContain("Forge-Exit: 0");
      // The job token never shows in the log.
      expect(logOf(runId)).not.toMatch(/ghs_[A-Za-z0-9]{20,}/);
    }
    console.log(
      `runner overhead per job, excluding the agent (dispatch → checkout → push → PR → run completed): median ${median(overhead).toFixed(0)} ms over ${overhead.length} jobs [${overhead.map((x) => x.toFixed(0)).join(", ")}]`,
    );
    console.log(
      `  of which inside the action (journal, branch, context, draft PR; commits, push, PR body): median ${median(actionOnly).toFixed(0)} ms [${actionOnly.join(", ")}]`,
    );
  }, 300_000);

  it("a revision answers the review on the same PR and branch: a reply in each thread, a walkthrough section, review asked again", async () => {
    const branch = `forge/${RUN}/t1/1`;
    const { data: pulls } = await gh.rest.pulls.list({ owner: OWNER, repo: REPO, head: `${OWNER}:${branch}`, state: "open" });
    const pr = pulls[0]!;
    const before = (await gh.rest.repos.getBranch({ owner: OWNER, repo: REPO, branch })).data.commit.sha;
    const { data: review } = await gh.rest.pulls.createReview({
      owner: OWNER,
      repo: REPO,
      pull_number: pr.number,
      event: "REQUEST_CHANGES",
      body: "Say more. <!-- forge:walkthrough run=x --> @everyone",
      comments: [{ path: "src/t1.txt", line: 1, body: "Revise this line." }],
    });
    // What the App does on the review: the journal's task at revision 1, RUNNING; then the dispatch.
    await writeJournal((j) => {
      const t = j.tasks.find((x) => x.id === "t1")!;
      Object.assign(t, { status: "RUNNING", attempt: { ...t.attempt!, revision: { ...t.attempt!.revision, iteration: 1 } } });
    });
    const feedback = [{ source: "review", reviewId: review.id, actor: OWNER, message: "Say more." }];
    const res = await gh.request("POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches", {
      owner: OWNER,
      repo: REPO,
      workflow_id: "forge-agent.yml",
      ref: branch,
      inputs: { run_id: RUN, task_id: "t1", attempt: "1", context: JSON.stringify({ iteration: 1, feedback, prNumber: pr.number }) },
      return_run_details: true,
    });
    const id = (res.data as unknown as { workflow_run_id: number }).workflow_run_id;
    const run = await waitForRun(id);
    if (process.env.FORGE_E2E_DEBUG) (await import("node:fs")).writeFileSync("/tmp/rev.log", logOf(id));
    expect(run.conclusion, logOf(id)).toBe("success");
    const { data: head } = await gh.rest.repos.getBranch({ owner: OWNER, repo: REPO, branch });
    expect(head.commit.commit.message).toContain("Forge-Iteration: 1");
    expect(head.commit.commit.message).toContain("Forge-Exit: 0");
    expect(head.commit.sha).not.toBe(before);
    const { data: file } = await gh.rest.repos.getContent({ owner: OWNER, repo: REPO, path: "src/t1.txt", ref: branch });
    expect(Buffer.from((file as { content: string }).content, "base64").toString()).toBe("hello from t1\nrevised 1\n");
    const { data: after } = await gh.rest.pulls.get({ owner: OWNER, repo: REPO, pull_number: pr.number });
    expect(after.head.sha).toBe(head.commit.sha);
    expect(after.body).toContain("## Revision 1");
    expect(after.body).toContain("Revise this line.");
    expect(after.body).not.toContain("@everyone");
    expect(after.requested_reviewers?.map((u) => u.login)).toEqual([OWNER]);
    const { data: comments } = await gh.rest.pulls.listReviewComments({ owner: OWNER, repo: REPO, pull_number: pr.number });
    const reply = comments.find((c) => c.in_reply_to_id !== undefined)!;
    expect(reply.body).toContain("Done in revision 1.");
    expect(reply.body).toContain(`Revision 1 (${head.commit.sha.slice(0, 7)}) changed \`src/t1.txt\``);
    // The same dispatch again finds its revision's record at the head: it ends neutral.
    const again = await gh.request("POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches", {
      owner: OWNER,
      repo: REPO,
      workflow_id: "forge-agent.yml",
      ref: branch,
      inputs: { run_id: RUN, task_id: "t1", attempt: "1", context: JSON.stringify({ iteration: 1, feedback, prNumber: pr.number }) },
      return_run_details: true,
    });
    const id2 = (again.data as unknown as { workflow_run_id: number }).workflow_run_id;
    expect((await waitForRun(id2)).conclusion).toBe("success");
    expect(logOf(id2)).toContain("already ended");
    expect((await gh.rest.repos.getBranch({ owner: OWNER, repo: REPO, branch })).data.commit.sha).toBe(head.commit.sha);
  }, 120_000);
});

describe("the Forge action on the local GitHub: a merged PR, a stale dispatch, a stalled agent", () => {
  it("a revision whose PR was merged meanwhile opens no second PR: its work stays on the branch, its answer in the merged PR's thread", async () => {
    const branch = `forge/${RUN}/t1/1`;
    const { data: pulls } = await gh.rest.pulls.list({ owner: OWNER, repo: REPO, head: `${OWNER}:${branch}`, state: "open" });
    const pr = pulls[0]!;
    const { data: review } = await gh.rest.pulls.createReview({
      owner: OWNER,
      repo: REPO,
      pull_number: pr.number,
      event: "REQUEST_CHANGES",
      body: "Once more.",
      comments: [{ path: "src/t1.txt", line: 1, body: "And this line again." }],
    });
    // The merge the App decided before this review reached it goes through on GitHub.
    await gh.rest.pulls.merge({ owner: OWNER, repo: REPO, pull_number: pr.number });
    await writeJournal((j) => {
      const t = j.tasks.find((x) => x.id === "t1")!;
      Object.assign(t, { status: "RUNNING", attempt: { ...t.attempt!, revision: { ...t.attempt!.revision, iteration: 2 } } });
    });
    const feedback = [{ source: "review", reviewId: review.id, actor: OWNER, message: "Once more." }];
    const res = await gh.request("POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches", {
      owner: OWNER,
      repo: REPO,
      workflow_id: "forge-agent.yml",
      ref: branch,
      inputs: { run_id: RUN, task_id: "t1", attempt: "1", context: JSON.stringify({ iteration: 2, feedback, prNumber: pr.number }) },
      return_run_details: true,
    });
    const id = (res.data as unknown as { workflow_run_id: number }).workflow_run_id;
    const run = await waitForRun(id);
    expect(run.conclusion, logOf(id)).toBe("success");
    expect(logOf(id)).toContain(
      `this revision's pull request #${pr.number} is not open (merged or closed): no second pull request is opened`,
    );
    const { data: all } = await gh.rest.pulls.list({ owner: OWNER, repo: REPO, head: `${OWNER}:${branch}`, state: "all" });
    expect(all.map((p) => p.number)).toEqual([pr.number]);
    const { data: head } = await gh.rest.repos.getBranch({ owner: OWNER, repo: REPO, branch });
    expect(head.commit.commit.message).toContain("Forge-Iteration: 2");
    const { data: comments } = await gh.rest.pulls.listReviewComments({ owner: OWNER, repo: REPO, pull_number: pr.number });
    const thread = comments.find((c) => c.body === "And this line again.")!;
    expect(comments.some((c) => c.in_reply_to_id === thread.id && c.body.includes("Revision 2"))).toBe(true);
  }, 120_000);

  it("a dispatch that is no longer current does nothing and succeeds", async () => {
    // The journal says attempt 1 of "stuck" is the current one: attempt 2's dispatch is stale.
    const branch = `forge/${RUN}/stuck/1`;
    const before = (await gh.rest.repos.getBranch({ owner: OWNER, repo: REPO, branch })).data.commit.sha;
    const res = await gh.request("POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches", {
      owner: OWNER,
      repo: REPO,
      workflow_id: "forge-agent.yml",
      ref: branch,
      inputs: { run_id: RUN, task_id: "stuck", attempt: "2", context: "" },
      return_run_details: true,
    });
    const id = (res.data as unknown as { workflow_run_id: number }).workflow_run_id;
    const run = await waitForRun(id);
    expect(run.conclusion, logOf(id)).toBe("success");
    expect(logOf(id)).toContain("Forge: nothing to do — task stuck is at attempt 1, not 2.");
    expect((await gh.rest.repos.getBranch({ owner: OWNER, repo: REPO, branch })).data.commit.sha).toBe(before);
    expect((await gh.rest.pulls.list({ owner: OWNER, repo: REPO, head: `${OWNER}:${branch}` })).data).toEqual([]);
  }, 60_000);

  it("a stalled agent is killed after two missed heartbeats and its partial work is pushed (exit 21)", async () => {
    const t0 = performance.now();
    const runId = await dispatch("stuck");
    const run = await waitForRun(runId);
    const wall = performance.now() - t0;
    expect(run.conclusion).toBe("failure");
    expect(logOf(runId)).toMatch(/ended with exit 21 \(timed out \/ stalled\): the agent was stopped: no progress/);
    const t = timingsOf(runId);
    const branch = `forge/${RUN}/stuck/1`;
    const { data: file } = await gh.rest.repos.getContent({ owner: OWNER, repo: REPO, path: "src/stuck.txt", ref: branch });
    expect(Buffer.from((file as { content: string }).content, "base64").toString()).toBe("hello from stuck\n");
    const { data: head } = await gh.rest.repos.getBranch({ owner: OWNER, repo: REPO, branch });
    expect(head.commit.commit.message).toContain("Forge-Exit: 21");
    const { data: pulls } = await gh.rest.pulls.list({ owner: OWNER, repo: REPO, head: `${OWNER}:${branch}` });
    expect(pulls[0]!.draft).toBe(true);
    expect(pulls[0]!.body).toContain("exit 21: timed out / stalled");
    console.log(
      `stall on the local GitHub (heartbeat 1 s, 2 missed beats): detected after ${t.stallDetectedAfterMs} ms of silence, partial work pushed after ${t.partialPushedAfterMs} ms; whole job ${wall.toFixed(0)} ms`,
    );
  }, 60_000);

  // docs/executor.md#when-a-rule-refuses-a-push: the job's push meets GitHub's GH013, and the job's
  // failure carries it (an annotation of the job's check run, where the App reads it).
  it("a push a rule refuses fails the job with GitHub's GH013 — the rule, the branch, the files found — in its failure annotation", async () => {
    const { data: set } = await gh.request("POST /repos/{owner}/{repo}/rulesets", {
      owner: OWNER,
      repo: REPO,
      name: "no secrets on task branches",
      target: "branch",
      enforcement: "active",
      conditions: { ref_name: { include: ["refs/heads/forge/**"], exclude: [] } },
      rules: [{ type: "file_path_restriction", parameters: { restricted_file_paths: ["src/secret/**"] } }] as never,
    });
    try {
      const runId = await dispatch("guarded");
      const run = await waitForRun(runId);
      expect(run.conclusion, logOf(runId)).toBe("failure");
      const { data: jobs } = await gh.rest.actions.listJobsForWorkflowRun({ owner: OWNER, repo: REPO, run_id: runId });
      const checkRun = Number(/\/check-runs\/(\d+)$/.exec(jobs.jobs[0]!.check_run_url)![1]);
      const { data: annotations } = await gh.rest.checks.listAnnotations({ owner: OWNER, repo: REPO, check_run_id: checkRun });
      const failure = annotations.filter((a) => a.annotation_level === "failure").map((a) => a.message ?? "");
      expect(failure.join("\n"), logOf(runId)).toContain("GH013: Repository rule violations found for refs/heads/forge/r1/guarded/1.");
      expect(failure.map(ruleRefusal).find(Boolean)).toMatchObject({
        code: "GH013",
        ref: "refs/heads/forge/r1/guarded/1",
        messages: ["Changes to restricted file paths are not allowed."],
        found: ["src/secret/guarded.txt"],
      });
      // Nothing of the work reached the branch.
      await expect(
        gh.rest.repos.getContent({ owner: OWNER, repo: REPO, path: "src/secret/guarded.txt", ref: "forge/r1/guarded/1" }),
      ).rejects.toMatchObject({
        status: 404,
      });
    } finally {
      await gh.rest.repos.deleteRepoRuleset({ owner: OWNER, repo: REPO, ruleset_id: set.id });
    }
  }, 120_000);
});
