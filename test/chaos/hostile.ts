/**
 * Scenario (i) of the chaos suite, a hostile repository: what an organisation that guards its code
 * sets up, as GitHub enforces it, around the same 50-task plan.
 *
 *   - the organisation's ruleset on every branch of the repository: linear history and signed
 *     commits — the refineries' branches too, which Forge prepares by squashing each upstream;
 *   - a ruleset on the runs' integration branches requiring the check `ci/other`, which another App
 *     (a CircleCI-style service) reports on every pull request's head some seconds after it moves;
 *     Forge's config lists it in `required_checks`, so Forge waits for it;
 *   - branch protection on the default branch: up to date before merging (`strict`), the same
 *     required check, and one approving review — which only the run's final PR meets;
 *   - a tight secondary rate limit on the installation (20 content-creating requests a minute where
 *     GitHub allows 80), the App pacing itself as in production;
 *   - webhook delays as measured (the `github` latency profile's: median 2 s, p95 60 s, p99 2 min,
 *     at most 160 s), and GitHub's time for a job to start.
 *
 * The runner's commits are unsigned, as the Action's are (it pushes with git; GitHub signs only the
 * commits it makes itself), so the signature rule refuses every task's first push: each task says
 * so on the tracker, with the rule and what a person can do, and the run stands still. The
 * administrator (the test) then does what Forge says — lets GitHub Actions bypass the rule — and
 * comments `/forge retry <task>` for each. Forge's own commits (the journal, merges, squashes) are
 * GitHub's, signed — the squashes of a refinery's upstreams included (API commits naming no author).
 * At the end a person reviews the final PR: refused before an approval, merged after. It runs on a
 * test clock: minutes of webhook tails, rate-limit windows and standing still cost no real time.
 */
import { Octokit } from "@octokit/rest";
import type { Clock } from "../../src/core/clock.js";
import type { Journal } from "../../src/core/journal.js";
import { LABELS } from "../../src/core/layout.js";
import { GITHUB_PROFILE, LATENCY_CLASSES, type LatencyProfile, type LatencySettings } from "../../src/local-github/latency/profile.js";
import type { RateLimitConfig } from "../../src/local-github/rate-limits.js";
import { ACTIONS_APP_ID } from "../../src/local-github/domain/apps.js";
import type { Sim } from "../../src/local-github/server.js";
import type { Git } from "./observe.js";
import { prng } from "../helpers/gen-plan.js";

/** The check another App reports on every pull request, required on the integration branches and the default branch. */
export const OTHER_CHECK = "ci/other";
/** The person who reviews and merges the run's final PR (write access); `octocat` is the repository's administrator. */
export const REVIEWER = "reviewer";

/** Forge's config in the hostile repository: it waits for the other App's check before merging. */
export const HOSTILE_CONFIG_LINES = [`required_checks: ["${OTHER_CHECK}"]`];

/**
 * The local GitHub's latency in the hostile repository: webhook deliveries as measured (the `github`
 * profile's: p50 2 s, p95 60 s, p99 2 min, at most 160 s — src/local-github/latency/README.md) and
 * GitHub's job start; API answers at once unless `full` (`npm run chaos -- --latency github`): the
 * whole profile, every request waiting its time on the run's clock — a test clock skips a request
 * asleep at GitHub as any timer, but one by one, which costs real time.
 */
export function hostileLatency(seed: number, full = false): LatencySettings {
  if (full) return { profile: GITHUB_PROFILE, seed };
  const profile = Object.fromEntries(LATENCY_CLASSES.map((c) => [c, { medianMs: 0, p95Ms: 0 }])) as LatencyProfile;
  return { profile: { ...profile, webhook: GITHUB_PROFILE.webhook, runnerQueue: GITHUB_PROFILE.runnerQueue }, seed };
}

/** A tight secondary limit on every installation's content-creating requests (GitHub: 80 a minute, 500 an hour). */
export const HOSTILE_RATE_LIMITS: Partial<RateLimitConfig> = {
  enabled: true,
  creatingPerMinute: 20,
  appliesTo: ["installation"],
};

/** What the hostile repository did to the run, counted for the scenario's assertions. */
export interface HostileFacts {
  /** Task merges that reached the integration branch as commits with one parent (the linear history held). */
  linearMerges: number;
  /** Commits with two parents on the integration branch (the linear history rule forbids any). */
  mergeCommits: number;
  /** Upstreams the refineries' jobs squashed onto their branches, which the rule holds too (the harness fills it from the runner). */
  refinerySquashes: number;
  /** Requests of Forge's installation GitHub refused for its rate limit. */
  rateLimited: number;
  /** Check runs the other App reported, and how many pull requests Forge merged before its check was green. */
  otherChecks: number;
  mergedBeforeCheck: string[];
  /** The tasks the signature rule stopped (the runner's commits unsigned) and what each said, before the administrator's fix. */
  blockedBySignatures: { task: string; reason: string }[];
  /** Webhook delays drawn, and their mean (ms). */
  webhookDelays: { count: number; meanMs: number };
  /**
   * The run's final PR: whether the tracker says it waits for a person, what GitHub answered the
   * reviewer's merge before the approval, whether it merged after, and its commit's parents.
   */
  finalPr?: {
    number: number;
    trackerSays: boolean;
    refused: string;
    merged: boolean;
    mergeCommitParents: number;
    /** GitHub's answer to the merge after the approval, when it refused it. */
    mergeRefused?: string;
  };
}

export interface HostileRepository {
  otherAppId: number;
  /** The administrator's fix of the signature rule, once they make it, and what the rule stopped. */
  unblocking: Unblocking;
  /**
   * Whether the other App is reporting a check run (a test clock skips ahead only when none is at
   * work); with `atGitHubWaits`, its request at GitHub waits rather than works — it has no other work.
   */
  busy(atGitHubWaits?: boolean): boolean;
  readonly checksPosted: number;
  stop(): void;
}

type Rule = { type: string; parameters?: Record<string, unknown> };

/** The repository's administrator's client (octocat), and the reviewer's. */
function people(sim: Sim) {
  return {
    admin: new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken("octocat") }),
    reviewer: new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken(REVIEWER) }),
  };
}

/**
 * Sets the repository's rules and starts the other App, before the plan is pushed: the rules are
 * there when the run starts, as in a repository Forge is installed into.
 */
export async function hostileRepository(sim: Sim, owner: string, repo: string, clock: Clock, seed: number): Promise<HostileRepository> {
  const { admin } = people(sim);
  // The other App (the local GitHub's CI App: its own registration, installation and token), whose
  // reports go through the API as any App's. It reacts to the repository's pull request events as
  // its webhooks would bring them; its calls are its own (the control API's wait for deliveries would
  // hold the test clock).
  const other = sim.control.ciApp({ account: owner, slug: "other-ci", repositories: [`${owner}/${repo}`] });
  // The repository's administrators may bypass (they push the plan), as organisations allow.
  const bypass = [{ actor_id: 5, actor_type: "RepositoryRole", bypass_mode: "always" }];
  const ruleset = async (name: string, include: string[], rules: Rule[]) =>
    (
      await admin.request("POST /repos/{owner}/{repo}/rulesets", {
        owner,
        repo,
        name,
        target: "branch",
        enforcement: "active",
        bypass_actors: bypass as never,
        conditions: { ref_name: { include, exclude: [] } },
        rules: rules as never,
      })
    ).data.id;
  // The organisation's ruleset, set by its owner for this repository's every branch (Forge's own
  // included: the refineries' branches are prepared by squashes, the task PRs squashed). Its
  // administrators bypass it (they push the plan), as organisations allow.
  const orgBypass = [{ actor_id: null, actor_type: "OrganizationAdmin", bypass_mode: "always" }];
  const { data: everyBranch } = await admin.request("POST /orgs/{org}/rulesets", {
    org: owner,
    name: "every branch: linear and signed",
    target: "branch",
    enforcement: "active",
    bypass_actors: orgBypass as never,
    conditions: { ref_name: { include: ["~ALL"], exclude: [] }, repository_name: { include: [repo], exclude: [] } },
    rules: [{ type: "required_linear_history" }, { type: "required_signatures" }] as never,
  });
  await ruleset(
    "integration branches: the other App's check",
    ["refs/heads/forge/*/_integration"],
    [
      {
        type: "required_status_checks",
        parameters: {
          required_status_checks: [{ context: OTHER_CHECK, integration_id: other.id }],
          strict_required_status_checks_policy: false,
        },
      },
    ],
  );
  await admin.rest.repos.updateBranchProtection({
    owner,
    repo,
    branch: "main",
    // `checks` wins over the deprecated `contexts` (which GitHub still requires).
    required_status_checks: { strict: true, contexts: [], checks: [{ context: OTHER_CHECK, app_id: other.id }] },
    enforce_admins: false,
    required_pull_request_reviews: { required_approving_review_count: 1 },
    restrictions: null,
  });
  return {
    ...otherAppReporter(sim, owner, repo, other.id, other.token(), clock, seed),
    unblocking: { ruleset: { org: owner, id: everyBranch.id, bypass: orgBypass }, done: false, blocked: [] },
  };
}

/**
 * The other App: on every pull request opened, reopened or moved, it reports `ci/other` on the head
 * after 10–90 s of its clock (a CI service running its tests), green. A rate limit of its own is
 * waited out on the clock.
 */
function otherAppReporter(
  sim: Sim,
  owner: string,
  repo: string,
  appId: number,
  token: string,
  clock: Clock,
  seed: number,
): Omit<HostileRepository, "unblocking"> {
  const gh = new Octokit({ baseUrl: sim.apiUrl, auth: token, log: { debug() {}, info() {}, warn() {}, error() {} } });
  const random = prng(seed * 31 + 7);
  const reported = new Set<string>();
  let working = 0;
  let posted = 0;
  let stopped = false;
  const report = async (sha: string): Promise<void> => {
    if (stopped) return;
    working++;
    try {
      await gh.rest.checks.create({ owner, repo, name: OTHER_CHECK, head_sha: sha, status: "completed", conclusion: "success" });
      posted++;
    } catch (e) {
      const after = Number((e as { response?: { headers?: Record<string, string> } }).response?.headers?.["retry-after"]);
      if (!stopped) clock.setTimeout(() => void report(sha), Number.isFinite(after) ? after * 1000 + 1000 : 5_000);
    } finally {
      working--;
    }
  };
  const off = sim.onEvent((e) => {
    if (e.event !== "pull_request" || !["opened", "reopened", "synchronize"].includes(e.action ?? "")) return;
    const sha = (e.payload.pull_request as { head?: { sha?: string } } | undefined)?.head?.sha;
    if (!sha || reported.has(sha)) return;
    reported.add(sha);
    clock.setTimeout(() => void report(sha), 10_000 + Math.floor(random() * 80_000));
  });
  return {
    otherAppId: appId,
    busy: (atGitHubWaits = false) => working > 0 && !atGitHubWaits,
    get checksPosted() {
      return posted;
    },
    stop() {
      stopped = true;
      off();
    },
  };
}

/** The administrator's fix of the rule that stopped the runner's pushes (`bypassAndRetry`), and what it stopped. */
export interface Unblocking {
  /** The organisation's ruleset on every branch (its organisation and id), its bypass list as set. */
  ruleset: { org: string; id: number; bypass: Array<{ actor_id: number | null; actor_type: string; bypass_mode: string }> };
  done: boolean;
  /** The tasks the signature rule stopped (the runner's commits unsigned), with what each said when the administrator came. */
  blocked: { task: string; reason: string }[];
}

/**
 * The administrator, when the run stands still. The runner's commits are unsigned (the Action
 * pushes with git, and GitHub signs only the commits it makes), so the signature rule on every
 * branch refused each task's push, and each task says so and what a person can do. They do what it
 * says: add GitHub Actions (whose token the jobs push with) to the ruleset's bypass list, then ask
 * Forge to try each blocked task again (`/forge retry <task>` on the tracker). True when they did;
 * false when there is nothing left for them to do.
 */
export async function bypassAndRetry(sim: Sim, owner: string, repo: string, journal: Journal, fix: Unblocking): Promise<boolean> {
  if (fix.done) return false;
  // A task whose push a rule refused is held `blocked` (a hold not every version of Forge has: read as text).
  const blocked = journal.tasks.filter((t) => t.status === "FAILED" && (t.attempt?.hold as string | undefined) === "blocked");
  if (blocked.length === 0) return false;
  fix.blocked = blocked.map((t) => ({ task: t.id, reason: t.lastError ?? "" }));
  fix.done = true;
  const { admin } = people(sim);
  const bypass = [...fix.ruleset.bypass, { actor_id: ACTIONS_APP_ID, actor_type: "Integration", bypass_mode: "always" }];
  await admin.request("PUT /orgs/{org}/rulesets/{ruleset_id}", {
    org: fix.ruleset.org,
    ruleset_id: fix.ruleset.id,
    bypass_actors: bypass as never,
  });
  const { data: trackers } = await admin.rest.issues.listForRepo({ owner, repo, state: "all", labels: LABELS.tracker });
  for (const t of blocked)
    await admin.rest.issues.createComment({ owner, repo, issue_number: trackers[0]!.number, body: `/forge retry ${t.id}` });
  return true;
}

/**
 * The person's part at the end of a completed run: the reviewer tries to merge the final PR before
 * anyone approved it (GitHub refuses: the review the default branch requires), approves it — another
 * person's approval, as GitHub wants — and merges it with a squash (the linear history rule).
 */
export async function reviewFinalPr(sim: Sim, owner: string, repo: string, journal: Journal): Promise<HostileFacts["finalPr"]> {
  const { admin, reviewer } = people(sim);
  const { data: open } = await reviewer.rest.pulls.list({ owner, repo, head: `${owner}:${journal.integrationBranch}`, state: "open" });
  const pr = open[0];
  if (!pr) return undefined;
  const { data: trackers } = await reviewer.rest.issues.listForRepo({ owner, repo, state: "all", labels: LABELS.tracker });
  const says = `**Final PR:** #${pr.number}, waiting for a person to review and merge it`;
  const refused = await sim.control.merge(REVIEWER, `${owner}/${repo}`, pr.number, { merge_method: "squash" });
  await admin.rest.pulls.createReview({ owner, repo, pull_number: pr.number, event: "APPROVE" });
  const merged = await sim.control.merge(REVIEWER, `${owner}/${repo}`, pr.number, { merge_method: "squash" });
  const sha = (merged.body as { sha?: string } | undefined)?.sha;
  const commit = sha ? (await reviewer.rest.git.getCommit({ owner, repo, commit_sha: sha })).data : undefined;
  return {
    number: pr.number,
    trackerSays: trackers.some((t) => t.body?.includes(says)),
    refused: `${refused.status} ${(refused.body as { message?: string } | undefined)?.message ?? ""}`,
    merged: merged.status === 200,
    mergeCommitParents: commit?.parents.length ?? 0,
    ...(merged.status === 200 ? {} : { mergeRefused: `${merged.status} ${JSON.stringify(merged.body).slice(0, 500)}` }),
  };
}

/**
 * What the rules did: the integration branch's history (commits with one parent, merge commits),
 * Forge's requests refused for the rate limit, the other App's checks and whether every task PR
 * merged only once its check was green, the webhook delays drawn.
 */
export async function hostileFacts(
  sim: Sim,
  git: Git,
  repoId: number,
  journal: Journal | undefined,
  forgeAppId: number,
  other: HostileRepository,
): Promise<Omit<HostileFacts, "refinerySquashes">> {
  const base = (await git("rev-parse", "refs/heads/main").catch(() => "")).trim();
  const history = journal
    ? (await git("log", "--format=%P", `refs/heads/${journal.integrationBranch}`, ...(base ? [`^${base}`] : [])).catch(() => ""))
        .split("\n")
        .filter(Boolean)
        .map((parents) => parents.split(" ").length)
    : [];
  const forgeInstallation = [...sim.core.state.installations.values()].find((i) => i.appId === forgeAppId)?.id;
  const checks = [...sim.core.state.checkRuns.values()].filter((c) => c.appId === other.otherAppId && c.conclusion === "success");
  const greenAt = new Set(checks.map((c) => c.headSha));
  const mergedBeforeCheck = sim.core.state
    .issuesOf(repoId)
    .filter((i) => i.pull?.merged && i.pull.baseRef === journal?.integrationBranch && !greenAt.has(i.pull.headSha))
    .map((i) => `#${i.number}`);
  const drawn = sim.core.latency.drawn.webhook;
  return {
    linearMerges: history.filter((n) => n === 1).length,
    mergeCommits: history.filter((n) => n > 1).length,
    rateLimited: sim.core.rateLimits.refused.filter((r) => r.key === `installation:${forgeInstallation}`).length,
    otherChecks: checks.length,
    mergedBeforeCheck,
    blockedBySignatures: other.unblocking.blocked,
    webhookDelays: { count: drawn.count, meanMs: drawn.count ? Math.round(drawn.totalMs / drawn.count) : 0 },
  };
}
