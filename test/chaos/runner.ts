/**
 * The chaos runner: a stand-in for the Forge Action inside the local GitHub's runner, like
 * test/app/scripted-runner.ts (work commit, PR, record commit with result.json and walkthrough),
 * with two differences chaos needs:
 *   - its Octokit retries what the Action's retries (5xx) and waits out secondary rate limits
 *     (`retry-after`), so API faults injected for the whole local GitHub hit the App, not the job;
 *   - a job can be *killed* mid-job: its work is committed and pushed and its PR opened, then the
 *     job ends (failure) without a record commit — a runner that died.
 * Every dispatch is logged, so a test can prove no (task, attempt) was dispatched twice.
 */
import { Octokit } from "@octokit/rest";
import { stringify } from "yaml";
import { resultPath, TRAILERS, walkthroughPath } from "../../src/core/layout.js";
import type { AgentResult } from "../../src/core/schemas/agent-result.js";
import type { DispatchedRun, DispatchHandler } from "../../src/local-github/workflows/index.js";
import { isAgentDispatch } from "../app/scripted-runner.js";

export interface ChaosRunnerOptions {
  /** Every run that is not a dispatch of the agent workflow (the repository's CI): left queued without it. */
  others?: DispatchHandler;
  /** Kill the job of these dispatches (0-based index in dispatch order) after its work commit and PR. */
  killAt?: ReadonlySet<number>;
  /** A job that failed on its own (not killed): the chaos harness reports it. */
  onError?: (attempt: string, error: Error) => void;
  /**
   * Whether this job's commits are unsigned, as the Action's are (it pushes with `git`; GitHub signs
   * only the commits it makes itself — through the API with no author or committer given): they carry
   * an author and committer of their own. Default: signed.
   */
  unsigned?: (taskId: string, attempt: number) => boolean;
}

export interface ChaosRunner {
  handler: DispatchHandler;
  /** Every dispatch seen, in order: `runId/taskId/attempt`. */
  dispatched: string[];
  /** Dispatches whose job was killed. */
  killed: string[];
  /** Upstreams a refinery's job squashed onto its branch (`runId/taskId/upstream branch`): its branch keeps a linear history. */
  squashed: string[];
  /** API calls the jobs made (retries included), how many were retried, and how many are at GitHub now. */
  calls: { total: number; retried: number; atGitHub: number };
  idle(): Promise<void>;
  /**
   * Whether a job is under way; with `atGitHubWaits` (the local GitHub's latency waits on the
   * clock), one whose request is at GitHub is waiting, not working.
   */
  busy(atGitHubWaits?: boolean): boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An Octokit that retries 5xx and secondary rate limits, as a job on GitHub would. */
function retryingOctokit(baseUrl: string, token: string, calls: ChaosRunner["calls"]): Octokit {
  const gh = new Octokit({ baseUrl, auth: token, log: { debug() {}, info() {}, warn() {}, error() {} } });
  gh.hook.wrap("request", async (request, options) => {
    for (let attempt = 0; ; attempt++) {
      calls.total++;
      let failed: unknown;
      calls.atGitHub++;
      try {
        return await request(options);
      } catch (e) {
        failed = e;
      } finally {
        calls.atGitHub--;
      }
      const err = failed as { status?: number; response?: { headers?: Record<string, string> } };
      const status = err.status ?? 0;
      const retryAfter = Number(err.response?.headers?.["retry-after"]);
      const limited = (status === 403 || status === 429) && Number.isFinite(retryAfter);
      if (attempt >= 8 || !(status >= 500 || limited)) throw failed;
      calls.retried++;
      await sleep(limited ? retryAfter * 1000 : 20 * 2 ** attempt);
    }
  });
  return gh;
}

export function chaosRunner(options: ChaosRunnerOptions = {}): ChaosRunner {
  const dispatched: string[] = [];
  const killed: string[] = [];
  const squashed: string[] = [];
  const calls = { total: 0, retried: 0, atGitHub: 0 };
  const jobs = new Set<Promise<void>>();
  const handler: DispatchHandler = (d) => {
    if (!isAgentDispatch(d)) return options.others?.(d);
    const runId = d.inputs.run_id ?? "";
    const taskId = d.inputs.task_id ?? "";
    const attempt = Number(d.inputs.attempt ?? 1);
    const index = dispatched.length;
    dispatched.push(`${runId}/${taskId}/${attempt}`);
    const kill = options.killAt?.has(index) ?? false;
    if (kill) killed.push(`${runId}/${taskId}/${attempt}`);
    const unsigned = options.unsigned?.(taskId, attempt) ?? false;
    const job = runJob(d, { runId, taskId, attempt, kill, unsigned }, calls, squashed).catch((e: unknown) => {
      d.log("agent", `runner error: ${(e as Error).stack}`);
      options.onError?.(`${runId}/${taskId}/${attempt}`, e as Error);
      // A write a rule of the repository refused fails the job with GitHub's answer, as the Action's
      // refused push does (`core.setFailed` with git's `remote:` lines): the failed step's annotation.
      const said = (e as { response?: { data?: { message?: string } } }).response?.data?.message ?? "";
      const refused = /Repository rule violations found|Protected branch update failed/.test(said);
      if (refused) d.step("agent", 1, "completed", "failure");
      d.completeJob(
        "agent",
        "failure",
        refused ? [{ level: "error", message: `Forge could not push ${d.ref}: ${said}`, properties: {} }] : [],
      );
      d.complete();
    });
    jobs.add(job);
    void job.finally(() => jobs.delete(job));
  };
  return {
    handler,
    dispatched,
    killed,
    squashed,
    calls,
    async idle() {
      while (jobs.size) await Promise.all([...jobs]);
    },
    // Each job makes one request at a time.
    busy: (atGitHubWaits = false) => jobs.size > (atGitHubWaits ? calls.atGitHub : 0),
  };
}

async function runJob(
  d: DispatchedRun,
  job: { runId: string; taskId: string; attempt: number; kill: boolean; unsigned: boolean },
  calls: ChaosRunner["calls"],
  squashLog: string[],
): Promise<void> {
  const { runId, taskId, attempt, kill } = job;
  d.startJob("agent", ["Run Forge"]);
  const [owner, repo] = [d.repo.owner.login, d.repo.name];
  const gh = retryingOctokit(d.apiUrl, d.token("agent"), calls);
  const branch = d.ref.replace(/^refs\/heads\//, "");
  const started = new Date().toISOString();
  let head = d.sha;
  const commitFiles = async (files: Record<string, string>, message: string): Promise<string> => {
    const { data: parent } = await gh.rest.git.getCommit({ owner, repo, commit_sha: head });
    const { data: tree } = await gh.rest.git.createTree({
      owner,
      repo,
      base_tree: parent.tree.sha,
      tree: Object.entries(files).map(([path, content]) => ({ path, mode: "100644" as const, type: "blob" as const, content })),
    });
    // The Action's commits name their author and committer (git's), which GitHub does not sign.
    const who = { name: "forge-agent", email: "forge-agent@users.noreply.github.com" };
    const { data: commit } = await gh.rest.git.createCommit({
      owner,
      repo,
      message,
      tree: tree.sha,
      parents: [head],
      ...(job.unsigned ? { author: who, committer: who } : {}),
    });
    return commit.sha;
  };

  // A refinery on a branch that must keep a linear history: each upstream squashed first, as the
  // Action's runner does (chaos tasks write files of their own: the upstream's side is taken whole).
  const squashed: NonNullable<AgentResult["squashed"]> = [];
  for (const u of squashOf(d.inputs.context)) {
    const { data: cmp } = await gh.rest.repos.compareCommits({ owner, repo, base: head, head: u.head });
    const entries = (cmp.files ?? []).map((f) => ({
      path: f.filename,
      mode: "100644" as const,
      type: "blob" as const,
      sha: f.status === "removed" ? null : f.sha,
    }));
    const { data: parent } = await gh.rest.git.getCommit({ owner, repo, commit_sha: head });
    const { data: tree } = await gh.rest.git.createTree({ owner, repo, base_tree: parent.tree.sha, tree: entries });
    const message = `forge(${taskId}): squash ${u.branch}`;
    const { data: commit } = await gh.rest.git.createCommit({ owner, repo, message, tree: tree.sha, parents: [head] });
    head = commit.sha;
    squashed.push({ branch: u.branch, head_sha: u.head, commit_sha: head });
    squashLog.push(`${runId}/${taskId}/${u.branch}`);
  }
  if (squashed.length) await gh.rest.git.updateRef({ owner, repo, ref: `heads/${branch}`, sha: head });

  // The agent's work, pushed, and the draft PR the Action opens early.
  const files = { [`src/${taskId}.ts`]: `export const ${taskId.replace(/[^a-z0-9]/gi, "_")} = ${attempt};\n` };
  head = await commitFiles(files, `forge(${taskId}): work of attempt ${attempt}`);
  await gh.rest.git.updateRef({ owner, repo, ref: `heads/${branch}`, sha: head });
  const base = `forge/${runId}/_integration`;
  const open = async () => (await gh.rest.pulls.list({ owner, repo, head: `${owner}:${branch}`, state: "open" })).data[0];
  if (!(await open()))
    await gh.rest.pulls.create({
      owner,
      repo,
      head: branch,
      base,
      title: `forge(${taskId}): attempt ${attempt}`,
      body: "Work in progress",
    });
  if (kill) {
    // The runner dies here: no record commit, the job ends as failed.
    d.completeJob("agent", "failure");
    d.complete();
    return;
  }

  const fm = {
    task_id: taskId,
    run_id: runId,
    attempt,
    branch,
    base_ref: d.sha,
    head_sha: head,
    status: "completed" as const,
    confidence: 0.9,
    time_spent_minutes: 1,
    files_changed: Object.keys(files).map((path) => ({ path, reason: "chaos" })),
    tests: [{ name: "chaos", result: "pass" as const }],
    risks: [],
    followups: [],
    agent: "scripted",
  };
  const walkthrough = `---\n${stringify(fm)}---\n\n## Summary\n\nScripted.\n\n## Approach\n\nScripted.\n\n## Issues Encountered\n\nNone.\n\n## Testing\n\nScripted.\n`;
  const result: AgentResult = {
    version: 1,
    run_id: runId,
    task_id: taskId,
    attempt,
    exit_code: 0,
    branch,
    started_at: started,
    finished_at: new Date().toISOString(),
    agent: "scripted",
    walkthrough: fm,
    head_sha: head,
    walkthrough_path: walkthroughPath(runId, taskId, attempt),
    ...(squashed.length ? { squashed } : {}),
  };
  const trailers = `\n\n${TRAILERS.run}: ${runId}\n${TRAILERS.task}: ${taskId}\n${TRAILERS.attempt}: ${attempt}\n${TRAILERS.agent}: scripted\n${TRAILERS.exit}: 0`;
  head = await commitFiles(
    {
      [resultPath(runId, taskId, attempt)]: JSON.stringify(result, null, 2) + "\n",
      [walkthroughPath(runId, taskId, attempt)]: walkthrough,
    },
    `forge(${taskId}): record of attempt ${attempt}${trailers}`,
  );
  await gh.rest.git.updateRef({ owner, repo, ref: `heads/${branch}`, sha: head });
  const pr = await open();
  if (pr) await gh.rest.pulls.update({ owner, repo, pull_number: pr.number, body: walkthrough });
  d.completeJob("agent", "success");
  d.complete();
}

/** Upstreams a refinery's runner squashes (its branch must keep a linear history), from the dispatch's context. */
function squashOf(context: string | undefined): { branch: string; head: string }[] {
  try {
    const parsed = JSON.parse(context || "{}") as { squash?: unknown };
    return Array.isArray(parsed.squash) ? (parsed.squash as { branch: string; head: string }[]) : [];
  } catch {
    return [];
  }
}
