// Events that trigger workflows: the filters of a workflow's `on:`, and the push and pull_request
// events that start the runs of the workflows asking for them.
import { actionsEnabled } from "../actions-permissions.js";
import type { SimCore } from "../domain/index.js";
import * as git from "../git/index.js";
import { now, type Repo, type User } from "../state.js";
import type { EmittedEvent } from "../webhooks.js";
import { displayTitle } from "./dispatch.js";
import type { WorkflowAt, WorkflowFiles } from "./files.js";
import type { RunSpec, WorkflowRuns } from "./runs.js";

/**
 * One filter pattern as a regular expression, per GitHub's "Filter pattern cheat sheet": `*` any
 * characters but `/`, `**` any characters, `?` zero or one of the preceding character, `+` one or
 * more of it, `[…]` a character class; everything else is literal.
 */
function patternRegExp(pattern: string): RegExp {
  let out = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "*") {
      if (pattern[i + 1] === "*") {
        out += ".*";
        i++;
      } else out += "[^/]*";
    } else if (c === "?" || c === "+") out += c;
    else if (c === "[") {
      const close = pattern.indexOf("]", i + 1);
      if (close < 0) out += "\\[";
      else {
        out += pattern.slice(i, close + 1);
        i = close;
      }
    } else out += c.replace(/[.^${}()|\\/]/g, "\\$&");
  }
  return new RegExp(`^${out}$`);
}

/**
 * Whether `name` passes a `branches`/`tags` list: patterns apply in order, a `!pattern` excluding
 * what earlier ones matched ("Using filters": "the order that you define patterns matters").
 */
export function filterMatches(patterns: unknown, name: string): boolean {
  const list = Array.isArray(patterns) ? patterns.map(String) : typeof patterns === "string" ? [patterns] : [];
  let matched = false;
  for (const p of list) {
    if (p.startsWith("!")) {
      if (patternRegExp(p.slice(1)).test(name)) matched = false;
    } else if (patternRegExp(p).test(name)) matched = true;
  }
  return matched;
}

/**
 * Whether a ref passes an event's `branches`/`branches-ignore` (and, for push, `tags`/`tags-ignore`)
 * filters. GitHub: with only branch filters a tag push runs nothing, and the reverse.
 */
export function refPasses(filters: unknown, kind: "branch" | "tag", name: string): boolean {
  if (!filters || typeof filters !== "object") return true;
  const f = filters as Record<string, unknown>;
  const [only, ignore, otherOnly, otherIgnore] =
    kind === "branch" ? ["branches", "branches-ignore", "tags", "tags-ignore"] : ["tags", "tags-ignore", "branches", "branches-ignore"];
  const own = f[only] !== undefined || f[ignore] !== undefined;
  if (!own) return f[otherOnly] === undefined && f[otherIgnore] === undefined;
  if (f[only] !== undefined) return filterMatches(f[only], name);
  return !filterMatches(f[ignore], name);
}

/** A pull_request workflow's activity types: opened, synchronize and reopened unless it names others. */
export function pullRequestTypes(filters: unknown): string[] {
  const types = filters && typeof filters === "object" ? (filters as { types?: unknown }).types : undefined;
  if (Array.isArray(types)) return types.map(String);
  if (typeof types === "string") return [types];
  return ["opened", "synchronize", "reopened"];
}

/** Turns the events that trigger workflows into runs, in the order they happened. */
export class WorkflowTriggers {
  /** Events being turned into runs, per repository, one after another in the order they happened. */
  private triggers = new Map<number, Promise<void>>();
  private pending = new Set<Promise<void>>();

  constructor(
    private readonly core: SimCore,
    private readonly files: WorkflowFiles,
    private readonly runs: WorkflowRuns,
  ) {
    core.bus.onEvent((e) => this.onEvent(e));
  }

  /** Resolves once every event so far has started the runs it starts. */
  async idle(): Promise<void> {
    while (this.pending.size) await Promise.allSettled([...this.pending]);
  }

  /** Whether events are still being turned into runs. */
  busy(): boolean {
    return this.pending.size > 0;
  }

  /**
   * Events that start workflows, as GitHub's "Events that trigger workflows" describes them: a
   * `push` runs the pushed commit's workflows that have `on: push` (branch and tag filters
   * applied); a pull request opened, synchronized or reopened (or another activity type a workflow
   * names) runs the `on: pull_request` workflows of its test merge commit (base filters applied).
   * Events caused by a workflow's GITHUB_TOKEN start nothing, and a fork runs no workflows of its
   * own (Actions is off in forks until their owner turns it on).
   */
  private onEvent(e: EmittedEvent): void {
    const repo = e.repo;
    if (!repo || !e.startsWorkflows || repo.forkOf !== undefined || this.core.closed) return;
    // A repository whose Actions permissions say disabled runs nothing.
    if (!actionsEnabled(repo)) return;
    const group = e.event === "merge_group" && e.action === "checks_requested";
    if (e.event !== "push" && !group && !(e.event === "pull_request" && e.action && e.action !== "closed")) return;
    // The triggering event's payload, as the job reads it at GITHUB_EVENT_PATH.
    const payload = e.payload;
    const prev = this.triggers.get(repo.id) ?? Promise.resolve();
    const work = prev
      .then(() =>
        e.event === "push"
          ? this.onPush(repo, payload)
          : group
            ? this.onMergeGroup(repo, payload)
            : this.onPullRequest(repo, e.action!, payload),
      )
      .catch((err: unknown) => {
        if (!this.core.closed)
          this.core.violation({
            kind: "response",
            id: `workflows/${e.event}`,
            status: 500,
            errors: `simulator error: ${(err as Error).message}`,
          });
      });
    this.triggers.set(repo.id, work);
    this.pending.add(work);
    void work.finally(() => {
      this.pending.delete(work);
      if (this.triggers.get(repo.id) === work) this.triggers.delete(repo.id);
    });
  }

  private actorOf(payload: Record<string, unknown>): User | undefined {
    const login = (payload.sender as { login?: string } | undefined)?.login;
    return login ? this.core.state.users.get(login) : undefined;
  }

  private async onPush(repo: Repo, payload: Record<string, unknown>): Promise<void> {
    const ref = String(payload.ref);
    const after = String(payload.after);
    const actor = this.actorOf(payload);
    if (payload.deleted === true || !actor) return;
    const kind = ref.startsWith("refs/heads/") ? "branch" : ref.startsWith("refs/tags/") ? "tag" : undefined;
    if (!kind) return;
    const name = ref.replace(/^refs\/(heads|tags)\//, "");
    const head = (payload.head_commit as { message?: string } | null)?.message ?? "";
    for (const wf of await this.files.workflowsAt(repo, after)) {
      if (!("push" in wf.triggers) || !refPasses(wf.triggers.push, kind, name)) continue;
      await this.startTriggered(repo, wf, {
        event: "push",
        ref,
        sha: after,
        headBranch: name,
        headSha: after,
        headRepoId: repo.id,
        actor,
        inputs: {},
        // GitHub titles a push run with its head commit's message (unless run-name says otherwise).
        displayTitle: head.split("\n")[0] || wf.path,
        eventPayload: payload,
      });
    }
  }

  private async onPullRequest(repo: Repo, action: string, payload: Record<string, unknown>): Promise<void> {
    const issue = this.core.state.issue(repo.id, Number(payload.number));
    const p = issue?.pull;
    const actor = this.actorOf(payload);
    if (!issue || !p || !actor) return;
    const wants = (list: WorkflowAt[]) =>
      list.some((w) => "pull_request" in w.triggers && pullRequestTypes(w.triggers.pull_request).includes(action));
    const base = await git.resolveRef(repo.gitDir, `refs/heads/${p.baseRef}`);
    if (!base) return;
    // Nothing to do unless some workflow, in the base or in the head, asks for this activity.
    if (!wants(await this.files.workflowsAt(repo, base)) && !wants(await this.files.workflowsAt(repo, p.headSha))) return;
    // GITHUB_REF is refs/pull/<n>/merge and GITHUB_SHA its test merge commit; "workflows will not
    // run on pull_request activity if the pull request has a merge conflict".
    const tree = await git.mergeTrees(repo.gitDir, base, p.headSha);
    if (!tree) return;
    const who = { name: "GitHub", email: "noreply@github.com", date: now() };
    const merge = await git.commitTree(repo.gitDir, tree, [base, p.headSha], `Merge ${p.headSha} into ${base}\n`, who, who);
    const ref = `refs/pull/${issue.number}/merge`;
    await git.updateRef(repo.gitDir, ref, merge, "");
    for (const wf of await this.files.workflowsAt(repo, merge)) {
      if (!("pull_request" in wf.triggers) || !pullRequestTypes(wf.triggers.pull_request).includes(action)) continue;
      if (!refPasses(wf.triggers.pull_request, "branch", p.baseRef)) continue;
      await this.startTriggered(repo, wf, {
        event: "pull_request",
        ref,
        sha: merge,
        headBranch: p.headRef,
        headSha: p.headSha,
        headRepoId: p.headRepoId ?? repo.id,
        actor,
        inputs: {},
        displayTitle: issue.title,
        eventPayload: payload,
      });
    }
  }

  /**
   * A merge group's checks requested: the group's workflows that have `on: merge_group` run on its
   * head (GITHUB_REF the `gh-readonly-queue/…` branch, GITHUB_SHA its head), as "Events that trigger
   * workflows" describes `merge_group` (activity type `checks_requested`; `branches` filters the base).
   */
  private async onMergeGroup(repo: Repo, payload: Record<string, unknown>): Promise<void> {
    const g = payload.merge_group as { head_sha: string; head_ref: string; base_ref: string; head_commit: { message?: string } };
    const actor = this.actorOf(payload);
    if (!actor) return;
    const base = g.base_ref.replace(/^refs\/heads\//, "");
    for (const wf of await this.files.workflowsAt(repo, g.head_sha)) {
      if (!("merge_group" in wf.triggers) || !refPasses(wf.triggers.merge_group, "branch", base)) continue;
      await this.startTriggered(repo, wf, {
        event: "merge_group",
        ref: g.head_ref,
        sha: g.head_sha,
        headBranch: g.head_ref.replace(/^refs\/heads\//, ""),
        headSha: g.head_sha,
        headRepoId: repo.id,
        actor,
        inputs: {},
        displayTitle: (g.head_commit.message ?? "").split("\n")[0] || wf.path,
        eventPayload: payload,
      });
    }
  }

  /** A run of the workflow for the event; a file GitHub refuses gets a run that fails at once, without jobs. */
  private async startTriggered(repo: Repo, at: WorkflowAt, spec: RunSpec): Promise<void> {
    if (this.core.closed) return;
    if (at.error) {
      const wf = this.files.register(repo, at.path, null);
      await this.runs.failInvalid(repo, this.runs.newRun(repo, wf, {}, at.yaml, spec), at.error);
      return;
    }
    const wf = this.files.register(repo, at.path, at.doc);
    const title =
      at.doc["run-name"] !== undefined
        ? displayTitle(at.doc, at.path, {}, spec.actor.login, spec.ref, {
            name: spec.event,
            ...(spec.eventPayload ? { payload: spec.eventPayload } : {}),
          })
        : spec.displayTitle;
    const run = this.runs.newRun(repo, wf, at.doc, at.yaml, { ...spec, displayTitle: title });
    await this.runs.start(repo, run, at.doc);
  }
}
