/**
 * The Forge App: Probot handlers that turn GitHub's webhooks into the executor's inputs. Every
 * handler follows one path — normalise the payload → decide → persist (compare-and-swap) → carry
 * out the effects — and reads state again instead of trusting the order webhooks arrive in.
 */
import type { Context, Probot } from "probot";
import type { Decision } from "../core/decide.js";
import type { LeafInput } from "../core/inputs.js";
import { LABELS, planDir, stateBranch } from "../core/layout.js";
import type { ForgeConfig } from "../core/schemas/config.js";
import { forgeConfigSchema } from "../core/schemas/config.js";
import { OctokitPort, type Octokit } from "../github/octokit-port.js";
import type { GitHubPort } from "../github/port.js";
import { HELP, parseCommand, WRITE_PERMISSIONS } from "./commands.js";
import { Engine, type Logger } from "./engine.js";
import { branchParser, endedJobInput, recordInput, touchedPlans, type AttemptRef } from "./normalize.js";
import { readConfig, readPlan } from "./plan-source.js";
import { parseMarker } from "./render.js";
import { reconcileRun } from "./reconciler.js";
import { overlayInput } from "./overlays.js";
import { checkPlanPullRequest } from "./plan-check.js";

export interface ForgeAppOptions {
  now?: () => number;
  /**
   * Answer each webhook at once and do the work after (default). GitHub gives a receiver 10 s, and
   * one webhook can lead to many API calls; what fails later is repaired by the reconciler, since
   * GitHub never redelivers by itself. Serverless installs set this to false so the work finishes
   * before the function returns.
   */
  background?: boolean;
  /** Period of the reconciler in a long-lived server; 0 turns the timer off (serverless: use `forge tick`). */
  reconcileEveryMs?: number;
  /**
   * This process's name among the App's replicas: the owner of the effects it decides (see Engine).
   * Give each replica a stable name of its own (a StatefulSet pod name, say) so that a restarted
   * replica carries on at once; by default a random one, whose effects another process takes over
   * once their lease (`leaseMs`, default 20 s) runs out.
   */
  replicaId?: string;
  leaseMs?: number;
  /** Every persisted decision, for tests and the demo's live view. */
  onDecision?: (repo: string, runId: string, d: Decision) => void;
  /** Instrumentation: every webhook as it arrives, and every API call with its start and end (performance.now()). */
  onWebhook?: (event: { name: string; action?: string; id: string; at: number }) => void;
  onRequest?: (call: { route: string; start: number; end: number; status?: number }) => void;
}

/** GitHub API calls the App made for a repository (measured by an Octokit request hook). */
export interface CallStats {
  reads: number;
  writes: number;
  /** Calls that create content (issues, comments, PRs, commits, reactions, check runs): GitHub limits these to ~80/min and ~500/h. */
  contentCreating: number;
  byRoute: Record<string, number>;
}

/** Requests GitHub counts against the content-creation limit ("secondary rate limits"). */
const CONTENT_CREATING = [
  /^POST \/repos\/[^/]+\/[^/]+\/issues$/,
  /^POST \/repos\/[^/]+\/[^/]+\/issues\/\d+\/comments$/,
  /^POST \/repos\/[^/]+\/[^/]+\/pulls$/,
  /^PUT \/repos\/[^/]+\/[^/]+\/contents\//,
  /^POST \/repos\/[^/]+\/[^/]+\/git\/commits$/,
  /^POST \/repos\/[^/]+\/[^/]+\/merges$/,
  /^PUT \/repos\/[^/]+\/[^/]+\/pulls\/\d+\/merge$/,
  /^POST \/repos\/[^/]+\/[^/]+\/check-runs$/,
  /reactions$/,
];

export function newCallStats(): CallStats {
  return { reads: 0, writes: 0, contentCreating: 0, byRoute: {} };
}

export interface RepoRuntime {
  stats: CallStats;
  port: GitHubPort;
  engine: Engine;
  installationId: number;
  /** runId → planId and status, learned as runs are seen. */
  runs: Map<string, { planId: string; status: string }>;
  config?: { value: ForgeConfig; at: number };
  runsLoaded: boolean;
  /** Run starts and plan changes of a repository are handled one at a time. */
  planChain: Promise<unknown>;
}

export interface ForgeApp {
  (app: Probot): void;
  runtimes: Map<string, RepoRuntime>;
  /** Reconcile every run of every repository seen (the timer's work, and `forge tick`'s). */
  tick(): Promise<void>;
  tickRepository(owner: string, repo: string): Promise<void>;
  /** Resolves when no webhook is being handled in the background. */
  idle(): Promise<void>;
  stop(): void;
}

const DELIVERY_MEMORY = 10_000;
/** Events about the agent jobs the App dispatched: handled even when the App is their sender. */
const JOB_EVENTS = new Set(["workflow_run", "workflow_job"]);
const CONFIG_TTL_MS = 60_000;

export function createForgeApp(options: ForgeAppOptions = {}): ForgeApp {
  const runtimes = new Map<string, RepoRuntime>();
  const deliveries = new Set<string>();
  const now = options.now ?? Date.now;
  let timer: NodeJS.Timeout | undefined;
  let probot: Probot | undefined;
  let slug: string | undefined;
  const inFlight = new Set<Promise<void>>();

  const seen = (id: string | undefined): boolean => {
    if (!id) return false;
    // A redelivery (by hand or through the API) reuses X-GitHub-Delivery: handled once is enough.
    if (deliveries.has(id)) return true;
    deliveries.add(id);
    if (deliveries.size > DELIVERY_MEMORY) deliveries.delete(deliveries.values().next().value!);
    return false;
  };

  async function runtimeFor(owner: string, repo: string, installationId: number, log: Logger): Promise<RepoRuntime> {
    const key = `${owner}/${repo}`;
    let rt = runtimes.get(key);
    // Installed again (a new installation id): the old installation's tokens are gone with it.
    if (rt && installationId && rt.installationId !== installationId) {
      rt.engine.stop();
      runtimes.delete(key);
      rt = undefined;
    }
    if (!rt) {
      // The installation Octokit refreshes its token by itself; it carries throttling and retry.
      const octokit = (await probot!.auth(installationId)) as unknown as Octokit;
      const stats = newCallStats();
      if (options.onRequest) {
        const onRequest = options.onRequest;
        octokit.hook.wrap("request", async (request, o) => {
          const parsed = octokit.request.endpoint.parse(o as never) as { url: string; method: string };
          const route = `${parsed.method.toUpperCase()} ${parsed.url.replace(/^https?:\/\/[^/]+/, "").replace(/^\/api\/v3/, "").split("?")[0]}`;
          const start = performance.now();
          let status: number | undefined;
          try {
            const res = await request(o);
            status = res.status;
            return res;
          } catch (e) {
            status = (e as { status?: number }).status;
            throw e;
          } finally {
            onRequest({ route, start, end: performance.now(), ...(status !== undefined ? { status } : {}) });
          }
        });
      }
      octokit.hook.before("request", (o) => {
        const parsed = octokit.request.endpoint.parse(o as never) as { url: string; method: string };
        const path = parsed.url.replace(/^https?:\/\/[^/]+/, "").replace(/^\/api\/v3/, "").split("?")[0]!;
        const method = parsed.method.toUpperCase();
        const route = `${method} ${path}`;
        if (method === "GET") stats.reads++;
        else stats.writes++;
        if (CONTENT_CREATING.some((re) => re.test(route))) stats.contentCreating++;
        const template = `${method} ${typeof o.url === "string" && o.url.includes("{") ? o.url : path}`;
        stats.byRoute[template] = (stats.byRoute[template] ?? 0) + 1;
      });
      const port = new OctokitPort(octokit, owner, repo);
      const engine = new Engine({
        port,
        log,
        now,
        ...(options.replicaId !== undefined ? { replicaId: options.replicaId } : {}),
        ...(options.leaseMs !== undefined ? { leaseMs: options.leaseMs } : {}),
        onDecision: (runId, d) => options.onDecision?.(key, runId, d),
        onRestored: async (runId, loaded, actor) => {
          const issue = loaded.state.facts.trackerIssue;
          if (issue === undefined) return;
          const by = actor ? ` by @${actor}` : "";
          await port.createComment(
            issue,
            `The state branch \`${stateBranch(runId)}\` of this run was deleted${by}. Forge keeps the run's journal there, so it put the branch back at its last commit (\`${loaded.commitSha?.slice(0, 7)}\`) and the run goes on. To stop the run, comment \`/forge cancel\`.`,
          );
        },
      });
      rt = { stats, port, engine, installationId, runs: new Map(), runsLoaded: false, planChain: Promise.resolve() };
      runtimes.set(key, rt);
    }
    return rt;
  }

  /** The runtime of the repository a webhook is about. */
  function rtOf(context: Context): Promise<RepoRuntime> {
    const payload = context.payload as { repository?: { owner?: { login?: string } | null; name?: string }; installation?: { id: number } };
    const owner = payload.repository?.owner?.login ?? "";
    const repo = payload.repository?.name ?? "";
    return runtimeFor(owner, repo, payload.installation?.id ?? 0, context.log as unknown as Logger);
  }

  async function configOf(rt: RepoRuntime): Promise<ForgeConfig> {
    if (rt.config && now() - rt.config.at < CONFIG_TTL_MS) return rt.config.value;
    const read = await readConfig(rt.port, await rt.port.defaultBranch());
    const value = read.ok ? read.config : forgeConfigSchema.parse({});
    rt.config = { value, at: now() };
    return value;
  }

  async function knownRuns(rt: RepoRuntime): Promise<RepoRuntime["runs"]> {
    if (!rt.runsLoaded) {
      for (const runId of await rt.engine.listRuns()) {
        if (rt.runs.has(runId)) continue;
        const loaded = await rt.engine.state(runId);
        if (loaded) rt.runs.set(runId, { planId: loaded.state.journal.planId, status: loaded.state.journal.status });
      }
      rt.runsLoaded = true;
    }
    return rt.runs;
  }

  /** Apply inputs to a run and keep the run index fresh. */
  async function apply(rt: RepoRuntime, runId: string, inputs: LeafInput[]) {
    const result = await rt.engine.apply(runId, inputs);
    const last = result.decisions[result.decisions.length - 1];
    if (last) rt.runs.set(runId, { planId: last.journal.planId, status: last.journal.status });
    // A model usage limit belongs to the installation's key, not to one run: pause its other runs too.
    const limited = result.decisions.flatMap((d) => d.events).find((e) => e.type === "run.paused" && (e.data as { reason: string }).reason === "usage_limit");
    const until = limited ? (limited.data as { until?: string }).until : undefined;
    if (until) {
      for (const other of runtimes.values()) {
        if (other.installationId !== rt.installationId) continue;
        for (const [otherRun, r] of other.runs) {
          if ((other === rt && otherRun === runId) || r.status !== "running") continue;
          await other.engine.apply(otherRun, [{ kind: "usage.limited", until }]);
        }
      }
    }
    return result;
  }

  async function attemptOf(rt: RepoRuntime, branch: string): Promise<AttemptRef | undefined> {
    const ref = branchParser(await configOf(rt))(branch);
    if (ref) return ref;
    // Follow-ups: forge/<runId>/_followup-<n>/1 whatever the template.
    const m = /^forge\/([^/]+)\/(_followup-\d+)\/(\d+)$/.exec(branch);
    return m ? { runId: m[1]!, taskId: m[2]!, attempt: Number(m[3]) } : undefined;
  }

  /**
   * The record commit of an attempt, if its branch ends in one: ingest the runner's result. From a
   * push webhook, the message and the parent come with the payload (the head commit's parent is the
   * previous commit of the push, or `before` when it was pushed alone); otherwise one read.
   */
  async function startRun(rt: RepoRuntime, planId: string, sha: string, log: Logger): Promise<{ runId?: string; problems?: string[] }> {
    const runs = await knownRuns(rt);
    for (const [runId, r] of runs) if (r.planId === planId && r.status === "running") return { problems: [`run ${runId} of plan ${planId} is still running`] };
    const read = await readConfig(rt.port, sha);
    if (!read.ok) return { problems: read.problems.map((p) => `${p.file}${p.line ? `:${p.line}` : ""} ${p.field ?? ""} — ${p.message}`) };
    const config = read.config;
    const plan = await readPlan(rt.port, planId, sha);
    if (plan.problems.length) {
      return { problems: plan.problems.map((p) => `${planDir(planId)}/${p.file}${p.line ? `:${p.line}` : ""} ${p.field ?? ""} — ${p.message}`) };
    }
    // One run per plan commit: a repeated webhook finds the run already there.
    const runId = `${planId}-${sha.slice(0, 7)}`;
    const base = config.base_branch ?? (await rt.port.defaultBranch());
    const integrationBranch = config.integration_branch_template.replaceAll("{runId}", runId);
    rt.runs.set(runId, { planId, status: "running" });
    await rt.port.createBranch(integrationBranch, sha);
    await rt.engine.start(
      { runId, planId, planCommit: sha, dagHash: plan.dagHash, nodes: plan.nodes, integrationBranch, baseBranch: base },
      config,
      { planSha: sha },
      sha,
    );
    rt.runs.set(runId, { planId, status: "running" });
    log.info({ runId, planId }, "run started");
    return { runId };
  }

  async function onPush(context: Context<"push">): Promise<void> {
    const { payload } = context;
    if (!payload.ref.startsWith("refs/heads/")) return;
    const branch = payload.ref.slice("refs/heads/".length);
    if (payload.deleted) {
      // A run's state branch deleted by hand (Forge never deletes one): GitHub keeps its commits, so
      // a run that is not over is put back where it was. `/forge cancel` is how a run is stopped.
      const state = /^forge\/([^/]+)\/_state$/.exec(branch);
      if (state && /^[0-9a-f]{40}$/.test(payload.before) && !/^0+$/.test(payload.before)) {
        const rt = await rtOf(context);
        await rt.engine.restore(state[1]!, payload.before, payload.sender?.login);
      }
      return;
    }
    // The journal's own writes come back as pushes: nothing to learn from them.
    if (/^forge\/[^/]+\/_state$/.test(branch) || /^forge\/[^/]+\/_integration$/.test(branch)) return;
    const rt = await rtOf(context);
    if (branch === payload.repository.default_branch) {
      // Serialised per repository: a second push must see the run the first one started.
      const next = rt.planChain.then(() => onDefaultBranchPush(rt, context));
      rt.planChain = next.catch(() => undefined);
      return next;
    }
    const ref = await attemptOf(rt, branch);
    if (!ref || !payload.head_commit) return;
    // The payload lists at most 20 commits; trust it only when it ends with the head commit.
    const commits = payload.commits;
    const listed = commits[commits.length - 1]?.id === payload.after;
    const parent = !listed ? undefined : commits.length >= 2 ? commits[commits.length - 2]!.id : payload.before;
    const input = await recordInput(rt.port, ref, payload.after, parent ? { message: payload.head_commit.message, parents: [parent] } : undefined);
    if (input) await apply(rt, ref.runId, [input]);
  }

  async function onDefaultBranchPush(rt: RepoRuntime, context: Context<"push">): Promise<void> {
    const { payload } = context;
    const plans = touchedPlans(payload.commits);
    if (plans.size === 0) return;
    const runs = await knownRuns(rt);
    const config = await configOf(rt);
    for (const [planId, files] of plans) {
      const active = [...runs].filter(([, r]) => r.planId === planId && r.status === "running").map(([id]) => id);
      if (active.length === 0) {
        if (!config.autostart || !files.has("dag.json")) continue;
        const started = await startRun(rt, planId, payload.after, context.log as unknown as Logger);
        if (started.problems) context.log.warn({ planId, problems: started.problems }, "plan not started");
        continue;
      }
      for (const runId of active) {
        const overlayFiles = [...files].filter((f) => /^overlays\/overlay-\d{3,}\.md$/.test(f));
        const inputs: LeafInput[] = [];
        for (const f of overlayFiles) {
          const res = await overlayInput(rt.port, rt.engine, runId, planId, f, payload.after);
          if (res.input) inputs.push(res.input);
          else if (res.problem) context.log.warn({ runId, overlay: f, problem: res.problem }, "overlay refused");
        }
        if (inputs.length === 0) inputs.push({ kind: "plan.changed", commit: payload.after });
        await apply(rt, runId, inputs);
      }
    }
  }

  async function onPullRequest(context: Context<"pull_request">): Promise<void> {
    const { payload } = context;
    const rt = await rtOf(context);
    const ref = await attemptOf(rt, payload.pull_request.head.ref);
    const pr = payload.pull_request;
    if (!ref) {
      // A PR into the default branch that changes a plan or the config is checked before it merges.
      if (["opened", "reopened", "synchronize"].includes(payload.action) && pr.base.ref === payload.repository.default_branch) {
        await checkPlanPullRequest(rt.port, rt.engine, await knownRuns(rt), { number: pr.number, headSha: pr.head.sha });
      }
      return;
    }
    if (payload.action === "closed") {
      if (pr.merged && pr.merge_commit_sha) await apply(rt, ref.runId, [{ kind: "pr.merged", taskId: ref.taskId, attempt: ref.attempt, number: pr.number, mergeSha: pr.merge_commit_sha }]);
      return;
    }
    if (["opened", "reopened", "ready_for_review", "synchronize", "edited"].includes(payload.action)) {
      await apply(rt, ref.runId, [{ kind: "pr.opened", taskId: ref.taskId, attempt: ref.attempt, number: pr.number }]);
    }
  }

  async function onWorkflowRun(context: Context<"workflow_run">): Promise<void> {
    const { payload } = context;
    const run = payload.workflow_run;
    const rt = await rtOf(context);
    const ref = run.head_branch ? await attemptOf(rt, run.head_branch) : undefined;
    if (!ref) return;
    if (payload.action === "in_progress" || payload.action === "requested") {
      await apply(rt, ref.runId, [{ kind: payload.action === "in_progress" ? "agent.started" : "agent.heartbeat", taskId: ref.taskId, attempt: ref.attempt, ...(payload.action === "in_progress" ? { workflowRunId: run.id } : {}) }]);
      return;
    }
    if (payload.action !== "completed") return;
    // The job ended. Its result normally arrived first (as a push), but order is not guaranteed:
    // when the attempt is still RUNNING, look at the branch for a record commit before calling it lost.
    const loaded = await rt.engine.state(ref.runId);
    const task = loaded?.state.journal.tasks.find((x) => x.id === ref.taskId);
    const followup = loaded?.state.journal.followups.find((f) => f.id === ref.taskId);
    const stillRunning = task ? task.status === "RUNNING" && task.attempt === ref.attempt : followup?.status === "running";
    if (!stillRunning) return;
    await apply(rt, ref.runId, [await endedJobInput(rt.port, ref, run.head_branch!, run)]);
  }

  async function onWorkflowJob(context: Context<"workflow_job">): Promise<void> {
    const { payload } = context;
    if (payload.action !== "in_progress") return;
    const rt = await rtOf(context);
    const branch = payload.workflow_job.head_branch;
    const ref = branch ? await attemptOf(rt, branch) : undefined;
    if (ref) await apply(rt, ref.runId, [{ kind: "agent.started", taskId: ref.taskId, attempt: ref.attempt, workflowRunId: payload.workflow_job.run_id }]);
  }

  async function onCheckRun(context: Context<"check_run">): Promise<void> {
    const { payload } = context;
    if (payload.action !== "rerequested" && payload.action !== "requested_action") return;
    if (payload.sender.type === "Bot") return;
    const m = /^([^/]+)\/([^/]+)\/(\d+)$/.exec(payload.check_run.external_id ?? "");
    if (!m) return;
    const rt = await rtOf(context);
    if (!WRITE_PERMISSIONS.has(await rt.port.permission(payload.sender.login))) return;
    const identifier = payload.action === "requested_action" ? (payload as { requested_action?: { identifier: string } }).requested_action?.identifier : "retry";
    const command = identifier === "approve" ? "approve" : "retry";
    await apply(rt, m[1]!, [{ kind: "command", command, actor: payload.sender.login, taskId: m[2]! }]);
  }

  async function onIssueComment(context: Context<"issue_comment">): Promise<void> {
    const { payload } = context;
    if (payload.action !== "created") return;
    const parsed = parseCommand(payload.comment.body);
    if (!parsed) return;
    // Never obey bots — Forge's own comments included.
    if (payload.sender.type === "Bot" || payload.comment.user?.type === "Bot") return;
    const rt = await rtOf(context);
    const issue = payload.issue.number;
    const reply = (body: string) => rt.port.createComment(issue, body);
    // Acknowledge within seconds, before any slower work.
    await rt.port.addReaction({ commentId: payload.comment.id }, "eyes");
    const permission = await rt.port.permission(payload.sender.login);
    if (!WRITE_PERMISSIONS.has(permission)) {
      await reply(`@${payload.sender.login} sorry — Forge commands need write access to this repository (you have \`${permission}\`).`);
      return;
    }
    if (parsed.name === "unknown") return void (await reply(`Unknown command \`${parsed.word}\`.\n\n${HELP}`));
    if (parsed.name === "help") return void (await reply(HELP));

    // Which run (and task or CR) the comment is about: a task PR's branch, or the marker in a tracker or CR issue.
    let target: { runId: string; taskId?: string; crId?: string } | undefined;
    if (payload.issue.pull_request) {
      const pr = await rt.port.getPullRequest(issue);
      const ref = await attemptOf(rt, pr.headRef);
      if (ref) target = { runId: ref.runId, taskId: ref.taskId };
    } else {
      target = parseMarker(payload.issue.body ?? "");
    }

    if (parsed.name === "run") {
      const planId = parsed.args[0];
      if (!planId) return void (await reply("Say which plan: `/forge run <planId>`."));
      const sha = await rt.port.branchHead(await rt.port.defaultBranch());
      const started = await startRun(rt, planId, sha!, context.log as unknown as Logger);
      await reply(started.runId ? `Started run \`${started.runId}\` of plan \`${planId}\`.` : `Plan \`${planId}\` was not started:\n\n${started.problems!.map((p) => `- ${p}`).join("\n")}`);
      return;
    }
    if (parsed.name === "plan") {
      await rt.port.createComment(issue, "A Captain agent will write a plan from this issue as a pull request.");
      const base = await rt.port.defaultBranch();
      const head = await rt.port.branchHead(base);
      const branch = `forge/_plan-${issue}`;
      await rt.port.createBranch(branch, head!);
      await rt.port.dispatchWorkflow((await configOf(rt)).workflow, branch, { run_id: `_plan-${issue}`, task_id: `_captain-plan-${issue}`, attempt: "1", context: JSON.stringify({ issue, title: payload.issue.title, body: (payload.issue.body ?? "").slice(0, 20_000) }) });
      return;
    }
    if (!target) return void (await reply("This is not a Forge task PR, run tracker or Change Request: say which run it is about here, or comment on the run's tracker issue."));
    const loaded = await rt.engine.state(target.runId);
    if (!loaded) return void (await reply(`Run \`${target.runId}\` was not found.`));
    if (parsed.name === "status") {
      const j = loaded.state.journal;
      const lines = j.tasks.map((t) => `| \`${t.id}\` | ${t.status}${t.hold ? ` (${t.hold})` : ""} | ${t.attempt} |`);
      await reply([`Run \`${j.runId}\`: **${j.status}**, ${j.merged}/${j.tasks.length} merged.`, "", "| Task | Status | Attempt |", "|---|---|---:|", ...lines].join("\n"));
      return;
    }
    const taskId = parsed.name === "retry" ? (parsed.args[0] && loaded.state.journal.tasks.some((t) => t.id === parsed.args[0]) ? parsed.args[0] : target.taskId) : target.taskId;
    const message = parsed.name === "retry" ? (taskId === parsed.args[0] ? parsed.rest.slice(taskId!.length).trim() : parsed.rest) : undefined;
    const input: LeafInput = {
      kind: "command",
      command: parsed.name,
      actor: payload.sender.login,
      ...(taskId ? { taskId } : {}),
      ...(target.crId ? { crId: target.crId } : {}),
      ...(message ? { message } : {}),
    };
    const result = await apply(rt, target.runId, [input]);
    if (result.rejections.length) await reply(result.rejections.map((r) => `- ${r.reason}`).join("\n"));
    else await rt.port.addReaction({ commentId: payload.comment.id }, "+1");
  }

  async function onIssues(context: Context<"issues">): Promise<void> {
    const { payload } = context;
    if (payload.action !== "closed") return;
    if (!payload.issue.labels?.some((l) => (typeof l === "string" ? l : l.name) === LABELS.changeRequest)) return;
    const marker = parseMarker(payload.issue.body ?? "");
    if (!marker?.crId) return;
    const rt = await rtOf(context);
    await apply(rt, marker.runId, [{ kind: "cr.closed", crId: marker.crId }]);
  }

  /** Required checks or statuses finished: merges that were waiting may go through now. */
  async function onChecksDone(context: Context<"check_suite"> | Context<"status">): Promise<void> {
    if (context.name === "check_suite" && (context.payload as { action: string }).action !== "completed") return;
    const rt = await rtOf(context);
    for (const [runId, r] of await knownRuns(rt)) {
      if (r.status !== "running") continue;
      const loaded = await rt.engine.state(runId);
      if (loaded?.state.journal.outbox.some((e) => e.kind === "MergePullRequest")) await rt.engine.flush(runId);
    }
  }

  async function tickRuntime(rt: RepoRuntime): Promise<void> {
    // Runs started by another replica (or while this process was down) are found on every pass.
    rt.runsLoaded = false;
    for (const [runId, r] of await knownRuns(rt)) {
      if (r.status !== "running") continue;
      const inputs = await reconcileRun(rt.port, rt.engine, runId, now());
      await apply(rt, runId, inputs.length ? inputs : [{ kind: "tick" }]);
    }
    await rt.engine.persistDirty();
  }

  /**
   * Where the App is installed, asked of GitHub on every reconcile pass (and at start): a restarted
   * App, a new replica or a serverless instance knows no repository until then, and the webhooks
   * sent while it was down are lost. Repositories no installation holds any more are forgotten.
   */
  async function discoverRepositories(): Promise<void> {
    if (!probot) return;
    const asApp = (await probot.auth()) as unknown as Octokit;
    const installations = await asApp.paginate(asApp.rest.apps.listInstallations, { per_page: 100 });
    const seen = new Set<string>();
    for (const installation of installations) {
      const octokit = (await probot.auth(installation.id)) as unknown as Octokit;
      const repos = await octokit.paginate(octokit.rest.apps.listReposAccessibleToInstallation, { per_page: 100 });
      for (const r of repos) {
        seen.add(`${r.owner.login}/${r.name}`);
        await runtimeFor(r.owner.login, r.name, installation.id, probot.log as unknown as Logger);
      }
    }
    for (const key of [...runtimes.keys()]) if (!seen.has(key)) forgetRepository(key);
  }

  function forgetRepository(key: string): void {
    runtimes.get(key)?.engine.stop();
    runtimes.delete(key);
  }

  /** `installation` and `installation_repositories`: the App's view changes at once, no restart needed. */
  async function onInstallation(context: Context<"installation"> | Context<"installation_repositories">): Promise<void> {
    const payload = context.payload as {
      action: string;
      installation: { id: number; account?: { login?: string } | null };
      repositories?: { full_name: string }[];
      repositories_added?: { full_name: string }[];
      repositories_removed?: { full_name: string }[];
    };
    const id = payload.installation.id;
    const log = context.log as unknown as Logger;
    const gone = payload.action === "deleted" || payload.action === "suspend";
    if (gone) {
      for (const [key, rt] of [...runtimes]) if (rt.installationId === id) forgetRepository(key);
      return;
    }
    for (const r of payload.repositories_removed ?? []) if (runtimes.get(r.full_name)?.installationId === id) forgetRepository(r.full_name);
    for (const r of [...(payload.repositories ?? []), ...(payload.repositories_added ?? [])]) {
      const [owner, repo] = r.full_name.split("/");
      if (owner && repo) await runtimeFor(owner, repo, id, log);
    }
  }

  async function tick(): Promise<void> {
    await discoverRepositories().catch((e: unknown) => probot?.log.warn({ err: (e as Error).message }, "could not list the installations' repositories; sweeping the repositories known"));
    for (const rt of runtimes.values()) await tickRuntime(rt);
  }

  /** Reconcile one repository from scratch (`forge tick` in a scheduled workflow). */
  async function tickRepository(owner: string, repo: string): Promise<void> {
    const asApp = (await probot!.auth()) as unknown as Octokit;
    const { data } = await asApp.rest.apps.getRepoInstallation({ owner, repo });
    const rt = await runtimeFor(owner, repo, data.id, probot!.log as unknown as Logger);
    rt.runsLoaded = false;
    await tickRuntime(rt);
  }

  const forgeApp = ((app: Probot) => {
    probot = app;
    const guard =
      <C extends Context>(fn: (c: C) => Promise<void>) =>
      async (context: C) => {
        options.onWebhook?.({ name: context.name, action: (context.payload as { action?: string }).action, id: context.id, at: performance.now() });
        if (seen(context.id)) return;
        slug ??= await app
          .auth()
          .then((o) => (o as unknown as Octokit).rest.apps.getAuthenticated())
          .then((r) => r.data?.slug)
          .catch(() => undefined);
        // Ignore the App's own events: it learns its own actions from the calls' answers. Not the
        // jobs it dispatched, though: a workflow_dispatch made with the App's token runs with the App
        // as its actor, so GitHub names the App as the sender of the run's workflow_run and
        // workflow_job events, and no answer of the dispatch call tells how the job goes.
        const sender = (context.payload as { sender?: { login?: string } }).sender?.login;
        if (slug && sender === `${slug}[bot]` && !JOB_EVENTS.has(context.name)) return;
        // A delivery whose handling failed is forgotten, so that its redelivery (the usual remedy for a
        // failed delivery, by hand or through the API) is handled rather than taken for a repeat.
        const handle = () =>
          fn(context).catch((e: unknown) => {
            deliveries.delete(context.id);
            throw e;
          });
        if (options.background === false) return handle();
        const work = handle().catch((e: unknown) => context.log.error({ err: (e as Error).stack, event: context.name, deliveryId: context.id }, "webhook handling failed"));
        inFlight.add(work);
        void work.finally(() => inFlight.delete(work));
      };
    app.on("push", guard(onPush));
    app.on("pull_request", guard(onPullRequest));
    app.on("workflow_run", guard(onWorkflowRun));
    app.on("workflow_job", guard(onWorkflowJob));
    app.on("check_run", guard(onCheckRun));
    app.on("issue_comment", guard(onIssueComment));
    app.on("issues", guard(onIssues));
    app.on("check_suite", guard(onChecksDone));
    app.on("status", guard(onChecksDone));
    app.on("installation", onInstallation);
    app.on("installation_repositories", onInstallation);
    if (options.reconcileEveryMs) {
      // One sweep at a time: a sweep slower than the period (a slow or rate-limiting GitHub) is not
      // joined by another one doing the same reads.
      let sweeping = false;
      const sweep = () => {
        if (sweeping) return;
        sweeping = true;
        void tick()
          .catch((e: unknown) => app.log.error({ err: (e as Error).message }, "reconciler failed"))
          .finally(() => (sweeping = false));
      };
      timer = setInterval(sweep, options.reconcileEveryMs);
      timer.unref();
      // At start, too: a restarted App has work it learns of only by asking.
      setImmediate(sweep);
    }
  }) as ForgeApp;
  forgeApp.runtimes = runtimes;
  forgeApp.tick = tick;
  forgeApp.tickRepository = tickRepository;
  forgeApp.stop = () => {
    if (timer) clearInterval(timer);
    for (const rt of runtimes.values()) rt.engine.stop();
  };
  forgeApp.idle = async () => {
    while (inFlight.size) await Promise.all([...inFlight]);
  };
  return forgeApp;
}
