// The demo's person while the run goes, and the wait for its end: the Captain's overlay PRs reviewed
// and merged, budgets raised, one task's PR reviewed; the run watched until it is over.
import type { Octokit } from "@octokit/rest";
import { DemoAnswerer } from "./answer.js";
import { raiseBudgets } from "./budget.js";
import { secs } from "./live-view.js";
import { DEMO_OWNER, DEMO_REPO, FULL, PERSON } from "./project.js";
import { DemoReviewer } from "./review.js";
import type { DemoRun } from "./run.js";

/**
 * The demo answers the run's n-th Change Request with the plan folder's n-th overlay to come (after
 * those committed with the plan); past the last, a person must.
 */
export function captainHasAnswer(run: DemoRun, crId: string): boolean {
  const n = (run.journal?.changeRequests.findIndex((c) => c.id === crId) ?? -1) + 1 || 1;
  if (n <= run.stages.toCome.length) return true;
  run.stuck = `Change Request ${crId} needs a person: the plan folder has no overlay-${String(run.stages.committed + n).padStart(3, "0")} for the Captain to answer it with`;
  run.wake();
  return false;
}

/** The Captain's overlay PR, reviewed and merged by the person (see docs/executor.md#change-requests). */
export async function reviewOverlay(run: DemoRun, gh: Octokit, branch: string): Promise<void> {
  while (run.watching) {
    const { data } = await gh.rest.pulls.list({
      owner: DEMO_OWNER,
      repo: DEMO_REPO,
      head: `${DEMO_OWNER}:${branch}`,
      base: "main",
      state: "open",
    });
    const pr = data[0];
    if (pr) {
      run.view.aside(`${PERSON} reviews the Captain's overlay PR #${pr.number} (${pr.title}) and merges it`);
      const res = await run.services.sim!.control.merge(PERSON, FULL, pr.number);
      if (res.status >= 300)
        run.problems.push(`merging the overlay PR #${pr.number} failed: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
      run.overlayPrs.push({ number: pr.number, title: pr.title, head: branch, merged: res.status < 300 });
      return;
    }
    const failed = run.captainFailed.get(branch);
    if (failed !== undefined) {
      run.stuck = `the Captain's job on ${branch} ended ${failed} without an overlay PR (FORGE_DEMO_DEBUG=1 prints its log)`;
      run.wake();
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Until the run is over, its follow-ups settled and (for a completed run) its final PR open; the final PR's number. */
export async function waitForTheEnd(run: DemoRun, user: Octokit): Promise<number | undefined> {
  const { options } = run;
  const slower = options.latency === "github" ? 3 : 1;
  // Generous: a busy machine (the demo shares its cores with anything else running) takes minutes.
  const timeoutMs = options.timeoutMs ?? (run.agent === "scripted" ? 10 : 20) * 60_000 * slower;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const j = run.journal;
    const settled = j && j.status !== "running" && j.followups.every((f) => f.status === "merged" || f.status === "failed");
    if (j) await raiseBudgets(user, j, run.raised, (line) => run.view.aside(`${PERSON} ${line}`));
    if (j) {
      run.answerer ??= new DemoAnswerer(
        user,
        (id) => run.stages.taskText(id),
        (line) => run.view.aside(`${PERSON} ${line}`),
      );
      await run.answerer.onJournal(j).catch((e: unknown) => void run.problems.push(`the demo's answer: ${(e as Error).message}`));
    }
    if (j) {
      run.reviewer ??= new DemoReviewer(
        user,
        (line) => run.view.aside(`${PERSON} ${line}`),
        (line) => void run.problems.push(line),
      );
      await run.reviewer.onJournal(j).catch((e: unknown) => void run.problems.push(`the demo's review: ${(e as Error).message}`));
    }
    // A question the demo's person answers is not one the run is stuck on.
    const held = j?.tasks.filter(
      (t) => t.attempt?.hold === "exhausted" || t.attempt?.hold === "fatal" || (t.attempt?.hold === "human" && !run.answerer?.answering(t)),
    );
    if (run.stuck || held?.length) {
      run.problems.push(
        run.stuck ??
          `the run needs a person: ${held!.map((t) => `${t.id} (${t.attempt?.hold}: ${t.lastError ?? t.attempt?.question ?? ""})`).join(", ")}`,
      );
      return undefined;
    }
    if (settled && j.status === "completed") {
      const { data } = await user.rest.pulls.list({
        owner: DEMO_OWNER,
        repo: DEMO_REPO,
        head: `${DEMO_OWNER}:${j.integrationBranch}`,
        base: j.baseBranch,
        state: "all",
      });
      const finalPrNumber = data[0]?.number;
      if (finalPrNumber !== undefined) return finalPrNumber;
    } else if (settled) return undefined;
    if (Date.now() > deadline) {
      run.problems.push(
        `timed out after ${secs(timeoutMs)} (--timeout <seconds> gives it longer): ${j ? j.tasks.map((t) => `${t.id}=${t.status}${t.attempt?.hold ? `(${t.attempt.hold})` : ""}`).join(" ") : "no run started"}`,
      );
      return undefined;
    }
    await new Promise<void>((r) => {
      const timer = setTimeout(r, 200);
      run.changed.push(() => (clearTimeout(timer), r()));
    });
  }
}

/**
 * The agents' jobs end after the run may have: a revision's job replies in the review threads
 * after its push, and its task can merge meanwhile. The outcome is read once they have ended (at
 * most a minute).
 */
export async function agentJobsDone(run: DemoRun): Promise<void> {
  const executor = run.services.executor;
  for (const until = Date.now() + 60_000; executor && executor.active().length > 0 && Date.now() < until;)
    await new Promise((r) => setTimeout(r, 200));
}
