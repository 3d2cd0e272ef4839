// The demo's result: the outcome read from GitHub and the App's stored run, checked against what the
// demo shows (every task merged, the final PR, the review answered, the CI fixed), the project's
// tests on the integration branch, and the report written.
import type { Octokit } from "@octokit/rest";
import type { Sim } from "../local-github/server.js";
import { ciFixInWords, ciRunsInWords, readCiRuns } from "./ci-runs.js";
import { modelRequests, readAgentChanges } from "./mixed.js";
import { loopExpected, loopInWords, loopProblems, machineIsolates, readLoop } from "./loop.js";
import { readOutcome, testIntegration, writeReport } from "./outcome.js";
import { ANTHROPIC_SECRET, FULL, PERSON } from "./project.js";
import { feedbackExpected, readFeedback, REVIEWED_TASK } from "./review.js";
import type { DemoRun } from "./run.js";
import type { DemoResult } from "./types.js";

/** The outcome from GitHub and the App's stored run, checked, with the project's tests and the report. */
export async function demoResult(run: DemoRun, sim: Sim, user: Octokit, finalPrNumber: number | undefined): Promise<DemoResult> {
  const { problems, notes, runId } = run;
  const loaded = runId ? await run.services.app!.forge.runtimes.get(FULL)?.engine.state(runId) : null;
  const j = loaded?.state.journal ?? run.journal;
  const durationMs = run.view.elapsed();
  const outcome = await readOutcome(user, j, loaded?.state.facts, run.stages, run.record, finalPrNumber);
  const testsOnIntegration = j
    ? await testIntegration(sim, sim.control.userToken(PERSON), j.integrationBranch, run.scratch, run.stages.testCommands)
    : undefined;

  if (!j) problems.push("no run started");
  else {
    if (j.status !== "completed") problems.push(`the run is ${j.status}, not completed`);
    const notMerged = j.tasks.filter((t) => t.status !== "MERGED").map((t) => `${t.id} (${t.status})`);
    if (notMerged.length) problems.push(`not merged: ${notMerged.join(", ")}`);
    if (outcome.finalPr === undefined) problems.push("no final PR");
  }
  const ciRuns = await readCiRuns(user);
  const expects = feedbackExpected(run.stages);
  const feedback = await readFeedback(user, j, run.reviewer?.review, expects.ciFix);
  if (j) {
    // The feedback loop the demo shows where the plan scripts it (textkit): a review answered on the
    // same PR, then approved; a red CI fixed.
    const { review, ciFix } = feedback;
    if (!expects.review) {
      // No task of this plan is the one the demo's person reviews.
    } else if (!review) problems.push(`${REVIEWED_TASK}'s PR was never reviewed by the demo's person`);
    else {
      if (review.iteration < 1) problems.push(`the review of ${REVIEWED_TASK} started no revision`);
      if (!review.reply)
        problems.push(
          `no reply in the review comment's thread on #${review.pr} (comment ${review.commentId}; the PR's review comments: ${review.thread || "none"})`,
        );
      if (review.approvalId === undefined) problems.push(`the demo's person did not approve ${REVIEWED_TASK}'s revision`);
    }
    if (expects.ciFix && !ciFix) problems.push(`${expects.ciFix}'s failing CI started no fix revision`);
    // An overlay the Captain was to write, for a Change Request that never came.
    const unused = run.stages.toCome.slice(j.changeRequests.length).map((o) => o.id);
    if (unused.length)
      notes.push(
        `${unused.join(", ")} went unused: the plan's tasks were scripted to raise ${run.stages.toCome.length} Change Request(s), the run raised ${j.changeRequests.length}`,
      );
  }
  const agentChanges = await readAgentChanges(run, user, j, outcome.tasks, outcome.trackerBody);
  const loop = await readLoop(user, sim, j, outcome.tasks, run.answerer?.comments ?? [], outcome.trackerIssue);
  // The question and the stall are the scripted agent's (the Claude Code script fails where a task asks, and never stalls).
  if (j) problems.push(...loopProblems(loop, run.agent === "scripted" ? loopExpected(run.stages) : {}, machineIsolates()));
  if (testsOnIntegration && !testsOnIntegration.ok)
    problems.push(
      `the plan's checks fail on the integration branch (${testsOnIntegration.commands.join("; ")}): ${testsOnIntegration.summary}`,
    );

  const result: DemoResult = {
    ok: problems.length === 0,
    problems,
    agent: run.agent,
    ...(runId ? { runId } : {}),
    planId: run.stages.planId,
    status: j?.status ?? "not started",
    durationMs,
    tasks: outcome.tasks,
    followups: outcome.followups,
    changeRequests: outcome.changeRequests,
    overlayPrs: run.overlayPrs,
    // Those committed with the plan (in its dag.json from the start), then those the run applied.
    overlays: [...run.stages.overlays.slice(0, run.stages.committed).map((o) => o.id), ...(j?.plan.overlays ?? [])],
    ...(outcome.finalPr ? { finalPr: outcome.finalPr } : {}),
    ...(outcome.trackerIssue !== undefined ? { trackerIssue: outcome.trackerIssue } : {}),
    ...(testsOnIntegration ? { testsOnIntegration } : {}),
    notes,
    jobs: run.jobs,
    ciRuns,
    feedback,
    loop,
    ...(agentChanges.length ? { agentChanges } : {}),
    ...(run.agent === "mixed" ? { modelServers: modelRequests(run) } : {}),
    // Copilot CLI's requests reach the scripted server only through each job's model proxy, which presents the job's key.
    ...(run.agent === "copilot" ? { modelServers: modelRequests(run, [ANTHROPIC_SECRET]) } : {}),
    ...(run.mixed?.usageLimited ? { usageLimit: { task: run.mixed.usageLimited, refused: run.mixed.usageLimits } } : {}),
    schemaViolations: sim.violations.length,
  };
  const facts = [...(feedback.ciFix ? [ciFixInWords(feedback.ciFix)] : []), ...loopInWords(loop), ciRunsInWords(ciRuns)];
  await writeReport(
    user,
    { outDir: run.outDir, agent: run.agent, stages: run.stages, journal: j, outcome, log: run.view.log, webUrl: sim.url, facts },
    result,
  );
  return result;
}
