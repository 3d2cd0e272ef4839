/**
 * A MERGE_READY task's PR branch brought up to date with the integration branch by Forge itself
 * (GitHub's update-branch), because the branch's rules want its head to contain the base's tip
 * before a merge (docs/executor.md#merging-under-the-repositorys-rules). The new head — the
 * integration branch merged into the PR's head, by the App — is Forge's own: no attempt or
 * revision starts, the PR's head (`prHead`) moves to it, and what was decided of the head it was
 * made over carries over (the task's own changes are the same; what came in was merged already).
 */
import { ownHead, prHead } from "../task-rules.js";
import type { InputOf, Step } from "./step.js";

/** GitHub accepted the update from `from` (202): the merge waits for the new head instead of asking again. */
export function branchUpdateRequested(s: Step, input: InputOf<"branch.update_requested">): void {
  const i = s.current(input);
  if (i === undefined) return;
  const t = s.task(i);
  // The new head came first (its push), or the head moved otherwise: nothing waits.
  if (t.status !== "MERGE_READY" || prHead(t) !== input.from) return;
  const own = ownHead(t)!;
  const a = s.editAttempt(i);
  a.branchUpdate = { ...(a.branchUpdate?.over === own ? a.branchUpdate : {}), over: own, requested: input.from, requestedAt: s.iso(s.now) };
}

const CARRIED = ["approvedHead", "checkedHead", "reviewApprovedHead"] as const;

/** The update landed: the PR's head is `head` now. */
export function branchUpdated(s: Step, input: InputOf<"branch.updated">): void {
  const i = s.current(input);
  if (i === undefined) return;
  const t = s.task(i);
  if (t.status !== "MERGE_READY") return s.reject(input.kind, `${t.id} is ${t.status}: its branch is not Forge's to update`, t.id);
  const from = prHead(t);
  if (input.head === from) return; // seen already (a merge tried again before its outcome was decided)
  if (input.from !== from)
    return s.reject(input.kind, `the update was made over ${input.from.slice(0, 7)}, not the PR's head ${from?.slice(0, 7) ?? "?"}`, t.id);
  s.editAttempt(i).branchUpdate = { over: ownHead(t)!, head: input.head };
  const r = s.revision(i);
  if (CARRIED.some((k) => r[k] === from)) {
    const e = s.editRevision(i);
    for (const k of CARRIED) if (e[k] === from) e[k] = input.head;
  }
  s.emit("task.branch_updated", t.id, { attempt: t.attempts, from: input.from, headSha: input.head });
}
