/**
 * A stand-in for the Forge Action inside the local GitHub's runner: for each dispatched attempt it
 * does what the Action does on GitHub — with the job's own GITHUB_TOKEN, over the REST API — and
 * nothing more: a work commit, a draft PR, then the record commit (walkthrough + result.json) with
 * Forge's trailers. What each attempt does comes from a script, so App tests can drive every path.
 */
import { Octokit } from "@octokit/rest";
import { instrument, newCallStats, type RequestTiming } from "../../src/github/instrument.js";
import { stringify } from "yaml";
import { completeChangeRequest } from "../../src/agent/change-request.js";
import { attemptDir, executionReportPath, resultPath, TRAILERS, walkthroughPath } from "../../src/core/layout.js";
import type { AgentResult } from "../../src/core/schemas/agent-result.js";
import type { DispatchedRun, DispatchHandler } from "../../src/local-github/workflows/index.js";
import { pushStageCheckpoint, type StageCheckpoint } from "./scripted-checkpoint.js";

export type Script =
  | {
      kind: "success";
      /** The agent's work: a file's content, or `null` to delete it (a rename is a delete and an add). */
      files?: Record<string, string | null>;
      risks?: string[];
      followups?: string[];
      confidence?: number;
      gate?: Promise<void>;
      /**
       * A refinery's agent merges the upstream branches the App could not merge (the dispatch
       * context's `conflicts`) before its own work; `false` leaves them unmerged.
       */
      mergeConflicts?: boolean;
      /** The runner could not open the task's PR (its pushes and calls lost): the App must. */
      noPr?: boolean;
      /** Called once the job has started, before the gate: what the job does while its agent works (its live check run). */
      atWork?: (job: JobAtWork) => Promise<void>;
    }
  | {
      kind: "exit";
      code: 1 | 2 | 3 | 10 | 11 | 20 | 21;
      error?: string;
      question?: string;
      refinement?: string;
      /** Exit 11: the agent's Change Request document, completed and recorded as the Action does (action/src/task/reports.ts). */
      changeRequest?: string;
      /** Work pushed before it ended (a stage's progress push), on the PR it opened. */
      files?: Record<string, string>;
      /** The runner's checkpoint in result.json: the stages done and pending, the agent's session (head and ids filled in). */
      checkpoint?: { completed: string[]; pending: string[]; session?: string } | "forged";
    }
  /** The job's step fails and the job ends without a result (nothing pushed). */
  | { kind: "lost" }
  | { kind: "killed"; afterStage?: StageCheckpoint } // the runner dies mid-step (after a stage's push): its "Run Forge" step left unfinished
  | { kind: "rate_limited"; untilMs: number }
  | { kind: "never_start" }
  /** A Captain: commit files on its branch and open a PR to `base` (no record commit). */
  | { kind: "pr"; files: Record<string, string>; base: string; title: string };

/** A job at work, as `atWork` sees it: its token and API, and the attempt it runs. */
export interface JobAtWork {
  apiUrl: string;
  token: string;
  owner: string;
  repo: string;
  branch: string;
  headSha: string;
  runId: string;
  taskId: string;
  attempt: number;
}

export interface ScriptedRunner {
  handler: DispatchHandler;
  /** Every dispatch seen: `runId/taskId/attempt`. */
  dispatched: string[];
  /** The workflow run of each dispatch, by `runId/taskId/attempt`. */
  runIds: Map<string, number>;
  /** The inputs of each dispatch, by `runId/taskId/attempt`. */
  inputs: Map<string, Record<string, string>>;
  /** Every REST call the runner made, by `runId/taskId/attempt[+iteration]` (git over HTTP not included). */
  calls: Map<string, RequestTiming[]>;
  /** Wait for every started job to finish. */
  idle(): Promise<void>;
  /** Whether a job is at work (a job held at its `gate` is not: it waits for the test). */
  busy(): boolean;
}

/** A dispatch of the agent workflow: the runs the scripted runner stands in for. */
export const isAgentDispatch = (d: DispatchedRun) => d.event === "workflow_dispatch" && d.run.path === ".github/workflows/forge-agent.yml";

/**
 * The runner of agent jobs; every other run (the repository's CI, another workflow) goes to
 * `others` — the real sim executor in the harness — or, without it, stays queued.
 */
export function scriptedRunner(
  script: (taskId: string, attempt: number, iteration: number) => Script,
  others?: DispatchHandler,
  /**
   * A token the runner writes with instead of the job's GITHUB_TOKEN: pushes made with the job's
   * token start no workflow, so the repository's CI would never see the agent's commits (GitHub's rule).
   */
  token?: () => string,
  /** The time the agents tell (a usage limit's reset): the world's clock. */
  now: () => number = () => Date.now(),
): ScriptedRunner {
  const dispatched: string[] = [];
  const runIds = new Map<string, number>();
  const inputs = new Map<string, Record<string, string>>();
  const jobs = new Set<Promise<void>>();
  const calls = new Map<string, RequestTiming[]>();
  const held = { jobs: 0 };
  const handler: DispatchHandler = (d) => {
    if (!isAgentDispatch(d)) return others?.(d);
    const runId = d.inputs.run_id ?? "";
    const taskId = d.inputs.task_id ?? "";
    const attempt = Number(d.inputs.attempt ?? 1);
    const iteration = iterationOf(d.inputs.context);
    // A revision of an attempt is `runId/taskId/attempt+iteration`.
    const key = `${runId}/${taskId}/${attempt}${iteration ? `+${iteration}` : ""}`;
    dispatched.push(key);
    runIds.set(key, d.run.id);
    inputs.set(key, { ...d.inputs });
    const mine: RequestTiming[] = [];
    calls.set(key, mine);
    const job = runJob(d, runId, taskId, attempt, iteration, script(taskId, attempt, iteration), {
      ...(token ? { token } : {}),
      onRequest: (c) => mine.push(c),
      now,
      held,
    }).catch((e: unknown) => {
      d.log("agent", `runner error: ${(e as Error).stack}`);
      // A write a rule of the repository refused fails the job with GitHub's answer, as the action's
      // refused push does (`core.setFailed` with git's `remote:` lines): an annotation of the job.
      const said = (e as { status?: number; response?: { data?: { message?: string } } }).response?.data?.message ?? "";
      const refused = /Repository rule violations found|Protected branch update failed/.test(said);
      // The action's step ends (failed), as a step that calls `core.setFailed` does.
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
    runIds,
    inputs,
    calls,
    async idle() {
      while (jobs.size) await Promise.all([...jobs]);
    },
    busy: () => jobs.size > held.jobs,
  };
}

async function runJob(
  d: DispatchedRun,
  runId: string,
  taskId: string,
  attempt: number,
  iteration: number,
  script: Script,
  {
    token,
    onRequest,
    now,
    held,
  }: { token?: () => string; onRequest?: (c: RequestTiming) => void; now: () => number; held: { jobs: number } },
): Promise<void> {
  if (script.kind === "never_start") return;
  d.startJob("agent", ["Run Forge"]);
  const [owner, repo, branch] = [d.repo.owner.login, d.repo.name, d.ref.replace(/^refs\/heads\//, "")];
  const jobToken = token?.() ?? d.token("agent");
  const gh = new Octokit({ baseUrl: d.apiUrl, auth: jobToken });
  if (onRequest) instrument(gh as never, newCallStats(), onRequest);
  if (await endsEarly(d, gh, owner, repo, branch, script)) return;
  const started = new Date().toISOString();
  let head = d.sha;
  const commitFiles = async (files: Record<string, string | null>, message: string): Promise<string> => {
    const { data: parent } = await gh.rest.git.getCommit({ owner, repo, commit_sha: head });
    const { data: tree } = await gh.rest.git.createTree({
      owner,
      repo,
      base_tree: parent.tree.sha,
      tree: Object.entries(files).map(([path, content]) =>
        content === null
          ? { path, mode: "100644" as const, type: "blob" as const, sha: null }
          : { path, mode: "100644" as const, type: "blob" as const, content },
      ),
    });
    const { data: commit } = await gh.rest.git.createCommit({ owner, repo, message, tree: tree.sha, parents: [head] });
    return commit.sha;
  };
  const trailers = (exit: number) =>
    `\n\n${TRAILERS.run}: ${runId}\n${TRAILERS.task}: ${taskId}\n${TRAILERS.attempt}: ${attempt}\n${TRAILERS.agent}: scripted\n${TRAILERS.exit}: ${exit}` +
    (iteration ? `\n${TRAILERS.iteration}: ${iteration}` : "");
  let exitCode = 0;
  const result: Partial<AgentResult> = {};
  let walkthrough: string | undefined;
  let crDocument: [path: string, text: string] | undefined;
  if (script.kind === "success") {
    if (script.atWork)
      await script.atWork({ apiUrl: d.apiUrl, token: jobToken, owner, repo, branch, headSha: head, runId, taskId, attempt });
    // A test may hold the agent at work until it has done something else.
    if (script.gate) {
      held.jobs++;
      await script.gate.finally(() => held.jobs--);
    }
    if (script.mergeConflicts !== false) {
      for (const upstream of conflictsOf(d.inputs.context)) head = await mergeResolving(gh, owner, repo, branch, head, upstream);
      // A branch that must keep a linear history: each upstream squashed, one commit each, recorded.
      for (const upstream of squashOf(d.inputs.context)) {
        head = await mergeResolving(gh, owner, repo, branch, head, upstream.branch, upstream.head);
        (result.squashed ??= []).push({ branch: upstream.branch, head_sha: upstream.head, commit_sha: head });
      }
    }
    const name = taskId.replace(/[^a-z0-9]/gi, "_");
    const files = script.files ?? {
      [`src/${taskId}.ts`]: `export const ${name} = ${attempt};\n${iteration ? `export const ${name}_revision = ${iteration};\n` : ""}`,
    };
    const feedback = feedbackOf(d.inputs.context);
    head = await commitFiles(files, `forge(${taskId}): work of attempt ${attempt}${iteration ? `, revision ${iteration}` : ""}`);
    await gh.rest.git.updateRef({ owner, repo, ref: `heads/${branch}`, sha: head });
    const fm = {
      task_id: taskId,
      run_id: runId,
      attempt,
      branch,
      base_ref: d.sha,
      head_sha: head,
      status: "completed" as const,
      confidence: script.confidence ?? 0.9,
      time_spent_minutes: 1,
      files_changed: Object.keys(files).map((path) => ({ path, reason: "scripted" })),
      tests: [{ name: "scripted", result: "pass" as const }],
      risks: script.risks ?? [],
      followups: script.followups ?? [],
      agent: "scripted",
    };
    result.walkthrough = fm;
    result.head_sha = head;
    result.walkthrough_path = walkthroughPath(runId, taskId, attempt);
    walkthrough = `---\n${stringify(fm)}---\n\n## Summary\n\nScripted.\n\n## Approach\n\nScripted.\n\n## Issues Encountered\n\nNone.\n\n## Testing\n\nScripted.\n`;
    if (iteration)
      walkthrough += `\n## Revision ${iteration}\n\n**Asked:** ${feedback.map((f) => f.message ?? f.source).join("; ")}\n\n**Changed:** src/${taskId}.ts\n`;
  } else if (script.kind === "exit") {
    exitCode = script.code;
    if (script.files) {
      head = await commitFiles(
        script.files,
        `forge(${taskId}): work after stage ${script.checkpoint === "forged" ? "?" : (script.checkpoint?.completed.at(-1) ?? "?")}`,
      );
      await gh.rest.git.updateRef({ owner, repo, ref: `heads/${branch}`, sha: head });
    }
    if (script.checkpoint) result.checkpoint = checkpointOf(runId, taskId, attempt, head, script.checkpoint);
    if (script.error) result.error = script.error;
    if (script.question) result.question = script.question;
    if (script.refinement) result.refinement = script.refinement;
    if (script.changeRequest !== undefined) {
      const cr = completeChangeRequest(script.changeRequest, {
        id: `cr-${taskId}-${attempt}`,
        run_id: runId,
        emitted_by: taskId,
        emitted_at: new Date().toISOString(),
      });
      if (!cr.ok) throw new Error(`the script's Change Request is invalid: ${cr.problems.join("; ")}`);
      const path = `${attemptDir(runId, taskId, attempt)}/change-request.md`;
      crDocument = [path, cr.markdown];
      result.change_request = cr.frontmatter;
      result.change_request_path = path;
    }
  } else if (script.kind === "rate_limited") {
    exitCode = 1;
    result.rate_limited_until = new Date(now() + script.untilMs).toISOString();
  }
  // The draft PR, opened as the Action does (it needs a commit to compare, so only with work).
  if ((script.kind === "success" && !script.noPr) || (script.kind === "exit" && script.files))
    await openDraft(gh, owner, repo, branch, runId, taskId, attempt);
  const full: AgentResult = {
    version: 1,
    run_id: runId,
    task_id: taskId,
    attempt,
    exit_code: exitCode as AgentResult["exit_code"],
    branch,
    started_at: started,
    finished_at: new Date().toISOString(),
    agent: "scripted",
    ...result,
  };
  const record: Record<string, string> = { [resultPath(runId, taskId, attempt)]: JSON.stringify(full, null, 2) + "\n" };
  if (walkthrough) record[walkthroughPath(runId, taskId, attempt)] = walkthrough;
  if (crDocument) record[crDocument[0]] = crDocument[1];
  // The Action commits the attempt's execution report with its record (the check run links to it).
  record[executionReportPath(runId, taskId, attempt)] = `# Execution report\n\nScripted attempt ${attempt} of \`${taskId}\`.\n`;
  head = await commitFiles(record, `forge(${taskId}): record of attempt ${attempt}${trailers(exitCode)}`);
  await gh.rest.git.updateRef({ owner, repo, ref: `heads/${branch}`, sha: head });
  if (script.kind === "success") {
    const pr = (await gh.rest.pulls.list({ owner, repo, head: `${owner}:${branch}`, state: "open" })).data[0];
    if (pr) await gh.rest.pulls.update({ owner, repo, pull_number: pr.number, body: walkthrough ?? "" });
  }
  d.completeJob("agent", exitCode === 0 ? "success" : "failure");
  d.complete();
}

/** The scripts whose job ends without a result of the agent's: a failed step, a runner killed mid-step, a PR alone. */
async function endsEarly(d: DispatchedRun, gh: Octokit, owner: string, repo: string, branch: string, script: Script): Promise<boolean> {
  if (script.kind === "lost") {
    // The step ran and failed before the agent's result was pushed (a step of the workflow, the action's set-up).
    d.step("agent", 1, "in_progress");
    d.log("agent", "##[error]the scripted runner's step failed before any result\n");
    d.step("agent", 1, "completed", "failure");
    d.completeJob("agent", "failure");
    d.complete();
    return true;
  }
  if (script.kind === "killed") {
    d.step("agent", 1, "in_progress");
    if (script.afterStage && (await pushStageCheckpoint(gh, d, script.afterStage)) === "silent") return true;
    d.completeJob("agent", "failure");
    d.complete();
    return true;
  }
  if (script.kind === "pr") {
    await openPullRequest(gh, owner, repo, d.sha, branch, script);
    d.completeJob("agent", "success");
    d.complete();
    return true;
  }
  return false;
}

/** The revision a dispatch asks for (0: the attempt's first run), from its context. */
function iterationOf(context: string | undefined): number {
  const parsed = contextOf(context);
  return typeof parsed.iteration === "number" ? parsed.iteration : 0;
}

/** The feedback a revision answers, from its context. */
function feedbackOf(context: string | undefined): { source: string; message?: string; reviewId?: number }[] {
  const parsed = contextOf(context);
  return Array.isArray(parsed.feedback) ? (parsed.feedback as { source: string; message?: string; reviewId?: number }[]) : [];
}

/** A dispatch's context input as JSON; a test may send anything (then it is no context). */
function contextOf(context: string | undefined): Record<string, unknown> {
  try {
    const parsed: unknown = context ? JSON.parse(context) : {};
    return parsed && typeof parsed === "object" ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** Upstream branches the App could not merge into a refinery's branch, from the dispatch's context. */
function conflictsOf(context: string | undefined): string[] {
  if (!context) return [];
  const parsed = JSON.parse(context) as { conflicts?: unknown };
  return Array.isArray(parsed.conflicts) ? parsed.conflicts.filter((c): c is string => typeof c === "string") : [];
}

/** Upstreams a refinery's runner squashes (its branch must keep a linear history), from the dispatch's context. */
function squashOf(context: string | undefined): { branch: string; head: string }[] {
  const parsed = contextOf(context);
  return Array.isArray(parsed.squash) ? (parsed.squash as { branch: string; head: string }[]) : [];
}

/**
 * Merges `upstream` into `branch` (at `head`) as a refinery's agent resolves a conflict: a merge
 * commit with both heads as parents, whose tree takes each file the upstream changed since the
 * merge base, and where both sides changed a file, keeps both: this side's lines, then the
 * upstream's lines this side lacks. Returns the merge commit, which `branch` then points at. Given
 * the upstream's verified head (`squashHead`), it is squashed instead, as the runner does on a
 * branch that must keep a linear history: the same tree, one parent.
 */
async function mergeResolving(
  gh: Octokit,
  owner: string,
  repo: string,
  branch: string,
  head: string,
  upstream: string,
  squashHead?: string,
): Promise<string> {
  const theirsSha = squashHead ?? (await gh.rest.git.getRef({ owner, repo, ref: `heads/${upstream}` })).data.object.sha;
  const { data: cmp } = await gh.rest.repos.compareCommits({ owner, repo, base: head, head: theirsSha });
  const { data: mine } = await gh.rest.repos.compareCommits({ owner, repo, base: cmp.merge_base_commit.sha, head });
  const ours = new Map((mine.files ?? []).map((f) => [f.filename, f]));
  const read = async (path: string, at: string): Promise<string> => {
    const { data } = await gh.rest.repos.getContent({ owner, repo, path, ref: at });
    if (Array.isArray(data) || data.type !== "file") throw new Error(`${path} is not a file at ${at}`);
    return Buffer.from(data.content, "base64").toString("utf8");
  };
  const entries: { path: string; mode: "100644"; type: "blob"; content?: string; sha?: string | null }[] = [];
  for (const f of cmp.files ?? []) {
    const o = ours.get(f.filename);
    if (f.status === "removed") entries.push({ path: f.filename, mode: "100644", type: "blob", sha: null });
    else if (!o || o.status === "removed" || o.sha === f.sha) entries.push({ path: f.filename, mode: "100644", type: "blob", sha: f.sha });
    else {
      // Both sides changed the file: keep both.
      const lines = (await read(f.filename, head)).replace(/\n$/, "").split("\n");
      const extra = (await read(f.filename, theirsSha))
        .replace(/\n$/, "")
        .split("\n")
        .filter((l) => !lines.includes(l));
      entries.push({ path: f.filename, mode: "100644", type: "blob", content: [...lines, ...extra].join("\n") + "\n" });
    }
  }
  const { data: parent } = await gh.rest.git.getCommit({ owner, repo, commit_sha: head });
  const { data: tree } = await gh.rest.git.createTree({ owner, repo, base_tree: parent.tree.sha, tree: entries });
  const { data: merge } = await gh.rest.git.createCommit({
    owner,
    repo,
    message: squashHead
      ? `forge: squash ${upstream} at ${squashHead}`
      : `Merge ${upstream} into ${branch}\n\nConflicts resolved by keeping both sides.`,
    tree: tree.sha,
    parents: squashHead ? [head] : [head, theirsSha],
  });
  await gh.rest.git.updateRef({ owner, repo, ref: `heads/${branch}`, sha: merge.sha });
  return merge.sha;
}

/** A `pr` script: one commit of `script.files` on the branch, and a pull request of it (as the Captain opens its overlay). */
async function openPullRequest(
  gh: Octokit,
  owner: string,
  repo: string,
  sha: string,
  branch: string,
  script: Extract<Script, { kind: "pr" }>,
): Promise<void> {
  const { data: parent } = await gh.rest.git.getCommit({ owner, repo, commit_sha: sha });
  const { data: tree } = await gh.rest.git.createTree({
    owner,
    repo,
    base_tree: parent.tree.sha,
    tree: Object.entries(script.files).map(([path, content]) => ({ path, mode: "100644" as const, type: "blob" as const, content })),
  });
  const { data: commit } = await gh.rest.git.createCommit({ owner, repo, message: script.title, tree: tree.sha, parents: [sha] });
  await gh.rest.git.updateRef({ owner, repo, ref: `heads/${branch}`, sha: commit.sha });
  await gh.rest.pulls.create({
    owner,
    repo,
    head: branch,
    base: script.base,
    title: script.title,
    body: "Overlay written by the Captain.",
  });
}

/**
 * The task's PR, opened as the Action opens its draft. Refused (GitHub Actions may not open pull
 * requests here), the Action warns and goes on (action/src/task/pull.ts): the App opens the PR once
 * the work is verified.
 */
async function openDraft(gh: Octokit, owner: string, repo: string, branch: string, runId: string, taskId: string, attempt: number) {
  const existing = await gh.rest.pulls.list({ owner, repo, head: `${owner}:${branch}`, state: "open" });
  if (existing.data[0]) return;
  await gh.rest.pulls
    .create({
      owner,
      repo,
      head: branch,
      base: `forge/${runId}/_integration`,
      title: `forge(${taskId}): attempt ${attempt}`,
      body: "Work in progress",
    })
    .catch((e: unknown) => {
      if ((e as { status?: number }).status !== 403) throw e;
    });
}

/** A runner's checkpoint of the attempt at `head`; a forged one names another head. */
function checkpointOf(
  runId: string,
  taskId: string,
  attempt: number,
  head: string,
  cp: NonNullable<Extract<Script, { kind: "exit" }>["checkpoint"]>,
): NonNullable<AgentResult["checkpoint"]> {
  const { completed, pending, session } = cp === "forged" ? { completed: ["implement"], pending: ["verify"], session: undefined } : cp;
  return {
    checkpoint_version: 1,
    created_at: new Date().toISOString(),
    run_id: runId,
    task_id: taskId,
    attempt,
    trace_id: "0123456789abcdef",
    completed_stages: completed.map((name) => ({ name, exit_code: 0 })),
    pending_stages: pending,
    depth_used: 1,
    depth_max: 3,
    ...(session ? { agent_session: { adapter: "claude" as const, id: session, stage: pending[0] ?? completed.at(-1)! } } : {}),
    head_sha: cp === "forged" ? "f".repeat(40) : head,
  };
}
