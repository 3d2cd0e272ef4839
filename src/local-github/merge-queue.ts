// The merge queue, one pull request at a time (docs.github.com/repositories/configuring-branches-and-merges-in-your-repository/configuring-pull-request-merges/managing-a-merge-queue,
// docs.github.com/webhooks/webhook-events-and-payloads#merge_group):
// - A branch needs it when an active ruleset on it holds a `merge_queue` rule; then only the queue
//   merges into it (merge-rules.ts refuses a direct merge).
// - A pull request enters it (GraphQL `enqueuePullRequest`, `dequeuePullRequest` removes it; an
//   asynchronous merge with `merge_action: merge_queue`; auto-merge) when it meets every other
//   requirement of the branch — approvals, required checks on its head — and `pull_request.enqueued` is sent.
// - The first entry gets a merge group: GitHub's merge of the pull request onto the base's tip (by
//   the rule's `merge_method`) on a branch `gh-readonly-queue/{base}/pr-{number}-{head sha}`
//   ("A temporary branch is created with the prefix gh-readonly-queue/{base_branch}"), then
//   `merge_group.checks_requested`: workflows with `on: merge_group` run on it (workflows/triggers.ts)
//   and a CI App posts its checks on its head sha.
// - When every required check (the rulesets' `required_status_checks`, branch protection's
//   contexts) succeeded on the group's head, the base fast-forwards to it: the pull request is merged,
//   the temporary branch deleted, `merge_group.destroyed` (reason `merged`) and `pull_request.dequeued`
//   (`MERGE`) sent. A failing required check drops it: `destroyed` (`dequeued`), `pull_request.dequeued`
//   (`CI_FAILURE`); a group that no longer merges, `MERGE_CONFLICT`. A base moved meanwhile
//   invalidates the group (`destroyed`, `invalidated`) and a new one is built.
// Not modelled: more than one pull request per group or building ahead, `check_response_timeout_minutes`,
// `jump`, and the timeline events GitHub shows on the pull request (the local GitHub has no timeline).
import { HttpError } from "./auth.js";
import { protectionOf } from "./branch-protection.js";
import { checkState } from "./branch-protection.js";
import type { ActContext, SimCore } from "./domain/index.js";
import * as git from "./git/index.js";
import { enforceMergeRequirements } from "./merge-rules.js";
import { mergeCommit } from "./merging.js";
import { rulesetsFor } from "./rulesets.js";
import type { Issue, Repo, User } from "./state.js";
import { now } from "./state.js";
import type { EmittedEvent } from "./webhooks.js";

export interface QueueEntry {
  repoId: number;
  number: number;
  baseRef: string;
  who: ActContext;
  enqueuedAt: string;
  state: "QUEUED" | "AWAITING_CHECKS" | "MERGEABLE" | "UNMERGEABLE" | "LOCKED";
  /** the merge group being tested, once built */
  group?: { ref: string; sha: string; baseSha: string };
}

type Removal = "MERGE" | "CI_FAILURE" | "MERGE_CONFLICT" | "MANUAL";

class MergeQueues {
  readonly entries: QueueEntry[] = [];
  constructor(readonly core: SimCore) {
    core.bus.onEvent((e) => this.onEvent(e));
  }

  /** A check or status on a group's head may decide it. */
  private onEvent(e: EmittedEvent): void {
    const sha =
      e.event === "check_run" && e.action === "completed"
        ? (e.payload.check_run as { head_sha: string }).head_sha
        : e.event === "status"
          ? (e.payload.sha as string)
          : undefined;
    if (!sha) return;
    const entry = this.entries.find((x) => x.group?.sha === sha);
    if (entry) this.core.background("merge-queue", () => this.decide(entry));
  }

  repoOf(entry: QueueEntry): Repo {
    return this.core.state.repos.get(entry.repoId)!;
  }
  issueOf(entry: QueueEntry): Issue {
    return this.core.state.issue(entry.repoId, entry.number)!;
  }

  /** The head of its base's queue gets a group; the group of each head is decided. */
  async advance(repo: Repo, baseRef: string): Promise<void> {
    const head = this.entries.find((x) => x.repoId === repo.id && x.baseRef === baseRef);
    if (!head) return;
    if (!head.group) await this.build(head);
    else await this.decide(head);
  }

  private async build(entry: QueueEntry): Promise<void> {
    const { core } = this;
    const repo = this.repoOf(entry);
    const issue = this.issueOf(entry);
    const base = await git.resolveRef(repo.gitDir, `refs/heads/${entry.baseRef}`);
    const rule = queueRuleFor(repo, entry.baseRef);
    let sha: string | undefined;
    try {
      if (base)
        sha = await mergeCommit(core, repo, issue, base, entry.who, {
          doc: DOC,
          method: String(rule?.merge_method ?? "MERGE").toLowerCase(),
        });
    } catch (e) {
      if (!(e instanceof HttpError)) throw e;
    }
    if (!base || !sha) return this.remove(entry, "MERGE_CONFLICT");
    const ref = `refs/heads/gh-readonly-queue/${entry.baseRef}/pr-${issue.number}-${issue.pull!.headSha}`;
    await git.updateRef(repo.gitDir, ref, sha, "");
    entry.group = { ref, sha, baseSha: base };
    entry.state = "AWAITING_CHECKS";
    await core.refsChanged(repo, [{ ref, before: null, after: sha }], entry.who);
    core.bus.emit("merge_group", "checks_requested", await this.groupPayload(entry), { repo });
    await this.decide(entry);
  }

  private async groupPayload(entry: QueueEntry, reason?: string): Promise<Record<string, unknown>> {
    const repo = this.repoOf(entry);
    const g = entry.group!;
    return {
      ...(reason ? { reason } : {}),
      merge_group: {
        head_sha: g.sha,
        head_ref: g.ref,
        base_sha: g.baseSha,
        base_ref: `refs/heads/${entry.baseRef}`,
        head_commit: await this.core.headCommit(repo, g.sha),
      },
      repository: this.core.model.repo(repo),
      sender: this.core.model.user(entry.who.actor),
    };
  }

  /** Merges the group when its required checks passed, drops it when one failed, else waits. */
  private async decide(entry: QueueEntry): Promise<void> {
    if (!this.entries.includes(entry) || !entry.group) return;
    const { core } = this;
    const repo = this.repoOf(entry);
    const g = entry.group;
    const states = requiredChecks(repo, entry.baseRef).map((c) => checkState(core, repo, g.sha, c.context, c.appId));
    if (states.includes("failing")) return this.remove(entry, "CI_FAILURE");
    if (states.includes("expected")) return;
    const baseRef = `refs/heads/${entry.baseRef}`;
    entry.state = "MERGEABLE";
    if (!(await git.updateRef(repo.gitDir, baseRef, g.sha, g.baseSha))) {
      // The base moved: this group is stale; a new one is built on the new tip.
      await this.destroyGroup(entry, "invalidated");
      entry.state = "QUEUED";
      return this.build(entry);
    }
    const issue = this.issueOf(entry);
    const p = issue.pull!;
    p.mergeCommitSha = g.sha;
    await core.refsChanged(repo, [{ ref: baseRef, before: g.baseSha, after: g.sha }], entry.who);
    if (!p.merged) await core.markMerged(repo, issue, entry.who, g.sha);
    else p.mergeCommitSha = g.sha;
    await this.remove(entry, "MERGE");
  }

  private async destroyGroup(entry: QueueEntry, reason: "merged" | "invalidated" | "dequeued"): Promise<void> {
    const g = entry.group;
    if (!g) return;
    const repo = this.repoOf(entry);
    if (await git.deleteRef(repo.gitDir, g.ref, g.sha))
      await this.core.refsChanged(repo, [{ ref: g.ref, before: g.sha, after: null }], entry.who);
    this.core.bus.emit("merge_group", "destroyed", await this.groupPayload(entry, reason), { repo });
    delete entry.group;
  }

  /** Takes `entry` out of the queue for `reason` and moves the queue on. */
  async remove(entry: QueueEntry, reason: Removal, by?: User): Promise<void> {
    const i = this.entries.indexOf(entry);
    if (i < 0) return;
    this.entries.splice(i, 1);
    await this.destroyGroup(entry, reason === "MERGE" ? "merged" : "dequeued");
    const repo = this.repoOf(entry);
    const issue = this.issueOf(entry);
    this.core.bus.emit(
      "pull_request",
      "dequeued",
      {
        number: issue.number,
        reason,
        pull_request: await this.core.pullPayload(repo, issue),
        repository: this.core.model.repo(repo),
        sender: this.core.model.user(by ?? entry.who.actor),
      },
      { repo },
    );
    await this.advance(repo, entry.baseRef);
  }
}

const DOC = "https://docs.github.com/graphql/reference/mutations#enqueuepullrequest";
const queues = new WeakMap<SimCore, MergeQueues>();

function queuesOf(core: SimCore): MergeQueues {
  let q = queues.get(core);
  if (!q) queues.set(core, (q = new MergeQueues(core)));
  return q;
}

/** The parameters of the `merge_queue` rule an active ruleset on `baseRef` holds, if any. */
export function queueRuleFor(repo: Repo, baseRef: string): Record<string, unknown> | undefined {
  for (const set of rulesetsFor(repo, `refs/heads/${baseRef}`)) {
    const rule = set.rules.find((r) => r.type === "merge_queue");
    if (rule) return (rule.parameters ?? {}) as Record<string, unknown>;
  }
  return undefined;
}

/** Every check the base requires: its rulesets' and its protection's. */
function requiredChecks(repo: Repo, baseRef: string): Array<{ context: string; appId: number | null }> {
  const out: Array<{ context: string; appId: number | null }> = [];
  for (const set of rulesetsFor(repo, `refs/heads/${baseRef}`))
    for (const rule of set.rules)
      if (rule.type === "required_status_checks")
        for (const c of ((rule.parameters ?? {}).required_status_checks as
          Array<{ context: string; integration_id?: number }> | undefined) ?? [])
          out.push({ context: c.context, appId: c.integration_id ?? null });
  for (const c of protectionOf(repo, `refs/heads/${baseRef}`)?.requiredStatusChecks?.checks ?? []) out.push(c);
  return out;
}

export function queueEntry(core: SimCore, repo: Repo, issue: Issue): QueueEntry | undefined {
  return queuesOf(core).entries.find((x) => x.repoId === repo.id && x.number === issue.number);
}

/** The entries queued for `baseRef`, first to merge first. */
export function queueFor(core: SimCore, repo: Repo, baseRef: string): QueueEntry[] {
  return queuesOf(core).entries.filter((x) => x.repoId === repo.id && x.baseRef === baseRef);
}

/** Adds a pull request to its base's queue (422 when it cannot enter); the queue moves on in the background. */
export async function enqueue(
  core: SimCore,
  repo: Repo,
  issue: Issue,
  who: ActContext,
  o: { doc: string; expectedHeadOid?: string },
): Promise<QueueEntry> {
  const p = issue.pull!;
  const q = queuesOf(core);
  const existing = queueEntry(core, repo, issue);
  if (existing) return existing;
  if (!queueRuleFor(repo, p.baseRef)) throw new HttpError(422, `Merge queue is not enabled for the ${p.baseRef} branch.`, o.doc);
  if (p.merged || issue.state !== "open") throw new HttpError(422, "Pull request is not open.", o.doc);
  if (p.draft) throw new HttpError(422, "Pull request is still a draft.", o.doc);
  if (o.expectedHeadOid && o.expectedHeadOid !== p.headSha)
    throw new HttpError(422, "Head branch was modified. Review and try the merge again.", o.doc);
  const base = await git.resolveRef(repo.gitDir, `refs/heads/${p.baseRef}`);
  if (!base) throw new HttpError(422, "Pull request is not mergeable.", o.doc);
  // Every requirement of the branch but the queue's own (approvals, checks on the head).
  await enforceMergeRequirements(
    core,
    repo,
    issue,
    base,
    who,
    o.doc,
    String(queueRuleFor(repo, p.baseRef)!.merge_method ?? "MERGE").toLowerCase(),
    true,
  );
  const entry: QueueEntry = { repoId: repo.id, number: issue.number, baseRef: p.baseRef, who, enqueuedAt: now(), state: "QUEUED" };
  q.entries.push(entry);
  core.bus.emit(
    "pull_request",
    "enqueued",
    {
      number: issue.number,
      pull_request: await core.pullPayload(repo, issue),
      repository: core.model.repo(repo),
      sender: core.model.user(who.actor),
    },
    { repo },
  );
  core.background("merge-queue", () => q.advance(repo, p.baseRef));
  return entry;
}

/** Takes a pull request out of its queue by hand (`MANUAL`). */
export async function dequeue(core: SimCore, repo: Repo, issue: Issue, who: ActContext, doc: string): Promise<QueueEntry> {
  const entry = queueEntry(core, repo, issue);
  if (!entry) throw new HttpError(422, "Pull request is not in the merge queue.", doc);
  await queuesOf(core).remove(entry, "MANUAL", who.actor);
  return entry;
}
