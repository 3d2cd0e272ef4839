/** `issue_comment`: `/forge` commands from people with write access, on a task PR, a tracker or a CR issue. */
import type { Context } from "probot";
import { bounded, FEEDBACK_LIMITS } from "../../core/feedback.js";
import { planCaptainDispatch } from "../../core/decide/plan-captain.js";
import type { Decision } from "../../core/decide/index.js";
import type { LeafInput } from "../../core/inputs.js";
import { roundRetryReply } from "../../core/render/run-messages.js";
import { HELP, parseCommand, WRITE_PERMISSIONS } from "../commands.js";
import { logOf, type AppContext } from "../context.js";
import { issuePlanReply, planFromIssue } from "../issue-plan.js";
import { isAppAuthor, parseMarker } from "../render.js";
import { startPlanRun } from "../start-run.js";
import { handSteeringToJob } from "../steering.js";

export async function onIssueComment(ctx: AppContext, context: Context<"issue_comment">): Promise<void> {
  const { payload } = context;
  if (payload.action !== "created") return;
  const parsed = parseCommand(payload.comment.body);
  if (!parsed) return;
  // Never obey bots — Forge's own comments included.
  if (payload.sender.type === "Bot" || payload.comment.user?.type === "Bot") return;
  const rt = await ctx.rtOf(context);
  const issue = payload.issue.number;
  const reply = (body: string) => rt.port.createComment(issue, body);
  // A reaction acknowledges the command; it is not the command. Refused — GitHub's secondary limit
  // on creating content, which a reaction counts against — the command still goes on: GitHub does
  // not deliver the comment again, and a person who asked for a retry would wait for nothing.
  const react = (content: "eyes" | "+1" | "-1") =>
    rt.port.addReaction({ commentId: payload.comment.id }, content).catch((err: unknown) => {
      logOf(context).warn({ err: (err as Error).message, content }, "could not react to the command; it goes on");
    });
  // Someone without write access gets a 👎 on the comment and nothing more: a reply per comment
  // would let anyone spend the installation's budget for creating content (GitHub's secondary limits).
  const permission = await rt.port.permission(payload.sender.login);
  if (!WRITE_PERMISSIONS.has(permission)) return void (await react("-1"));
  // Acknowledge within seconds, before any slower work.
  await react("eyes");
  if (parsed.name === "unknown") return void (await reply(`Unknown command \`${parsed.word}\`.\n\n${HELP}`));
  if (parsed.name === "help") return void (await reply(HELP));

  // Which run (and task or CR) the comment is about: a task PR's branch, or the marker in a tracker or CR issue.
  let target: { runId: string; taskId?: string; crId?: string } | undefined;
  if (payload.issue.pull_request) {
    const pr = await rt.port.getPullRequest(issue);
    // A fork's PR is no task's, whatever its branch is called.
    const ref = pr.fromFork ? undefined : await ctx.attemptOf(rt, pr.headRef);
    if (ref) target = { runId: ref.runId, taskId: ref.taskId };
  } else if (isAppAuthor(payload.issue.user, ctx.slug)) {
    // Only a tracker or CR issue the App opened names a run: a marker in anyone else's issue is text.
    target = parseMarker(payload.issue.body ?? "");
  }

  if (parsed.name === "run") {
    const planId = parsed.args[0];
    if (!planId) return void (await reply("Say which plan: `/forge run <planId>`."));
    const sha = await rt.port.branchHead(await rt.port.defaultBranch());
    const started = await startPlanRun(ctx, rt, planId, sha!, logOf(context));
    await reply(
      started.runId
        ? `Started run \`${started.runId}\` of plan \`${planId}\`.`
        : `Plan \`${planId}\` was not started:\n\n${started.problems!.map((p) => `- ${p}`).join("\n")}`,
    );
    return;
  }
  if (parsed.name === "plan") {
    // The issue as the writer saw it when they commented: an edit after the command (anyone who
    // opened the issue may edit it, write access or not) would put text the writer never read in
    // the Captain's prompt. Refused, and said so: the writer reads it again and repeats the command.
    const now = await rt.port.issueAsEdited(issue);
    const edited = now.lastEditedAt !== null && Date.parse(now.lastEditedAt) > Date.parse(payload.comment.created_at);
    const same = (a: string, b: string) => a.replace(/\r\n/g, "\n") === b.replace(/\r\n/g, "\n");
    if (edited || !same(now.title, payload.issue.title) || !same(now.body, payload.issue.body ?? ""))
      return void (await reply(
        "The issue was edited after this `/forge plan`: no plan is written from text you may not have read. Read the issue again and repeat the command.",
      ));
    // An issue with sub-issues is a plan already: built from its tree, with no agent (issue-plan.ts).
    // A pull request has no sub-issues (GitHub answers 404 for them).
    const subIssues = payload.issue.pull_request
      ? 0
      : (payload.issue as { sub_issues_summary?: { total?: number } }).sub_issues_summary?.total;
    const fromTree = await planFromIssue(rt.port, { number: issue, title: now.title, body: now.body, subIssues }, ctx.now());
    if (fromTree.kind !== "no-tree") return void (await reply(issuePlanReply(fromTree, issue)));
    const { branch, inputs } = planCaptainDispatch({ issue, title: now.title, body: now.body });
    const workflow = (await ctx.configOf(rt)).workflow;
    // The same command again (or its redelivery) while the Captain works starts no second one.
    if ((await rt.port.listWorkflowRuns(workflow, { branch })).some((r) => r.status !== "completed"))
      return void (await reply(`A Captain is already writing a plan from this issue on \`${branch}\`.`));
    await reply("A Captain agent will write a plan from this issue as a pull request.");
    const head = await rt.port.branchHead(await rt.port.defaultBranch());
    await rt.port.createBranch(branch, head!);
    await rt.port.dispatchWorkflow(workflow, branch, inputs);
    return;
  }
  if (!target)
    return void (await reply(
      "This is not a Forge task PR, run tracker or Change Request: say which run it is about here, or comment on the run's tracker issue.",
    ));
  const loaded = await rt.engine.state(target.runId);
  if (!loaded) return void (await reply(`Run \`${target.runId}\` was not found.`));
  if (parsed.name === "status") {
    const j = loaded.state.journal;
    const lines = j.tasks.map((t) => `| \`${t.id}\` | ${t.status}${t.attempt?.hold ? ` (${t.attempt.hold})` : ""} | ${t.attempts} |`);
    await reply(
      [
        `Run \`${j.runId}\`: **${j.status}**, ${j.merged}/${j.tasks.length} merged.`,
        "",
        "| Task | Status | Attempt |",
        "|---|---|---:|",
        ...lines,
      ].join("\n"),
    );
    return;
  }
  // `retry`, `steer` and `budget` may name their task first (on the tracker); on a task PR `retry` and
  // `steer` are the PR's, while `/forge budget +5` there raises the run's budget.
  const naming = parsed.name === "retry" || parsed.name === "steer" || parsed.name === "budget";
  const named = naming && parsed.args[0] && loaded.state.journal.tasks.some((t) => t.id === parsed.args[0]) ? parsed.args[0] : undefined;
  // `/forge retry failed` on the tracker (no task of that name): the run's round of failed tasks.
  const round = parsed.name === "retry" && !named && !target.taskId && parsed.args[0]?.toLowerCase() === ROUND_WORD;
  const taskId = parsed.name === "budget" ? named : (named ?? target.taskId);
  const rest =
    named !== undefined ? parsed.rest.slice(named.length).trim() : round ? parsed.rest.slice(ROUND_WORD.length).trim() : parsed.rest;
  const amountUsd = parsed.name === "budget" ? budgetAmount(parsed.args.at(-1)) : undefined;
  const message =
    parsed.name === "retry" ? rest : parsed.name === "fix" || parsed.name === "steer" ? bounded(rest, FEEDBACK_LIMITS.message) : undefined;
  const input: LeafInput = {
    kind: "command",
    command: parsed.name,
    actor: payload.sender.login,
    ...(taskId ? { taskId } : {}),
    ...(round ? { which: ROUND_WORD } : {}),
    ...(target.crId ? { crId: target.crId } : {}),
    ...(message ? { message } : {}),
    ...(amountUsd !== undefined ? { amountUsd } : {}),
    // The journal remembers the comment: it is acted on once, whichever delivery brings it.
    commentId: payload.comment.id,
  };
  const result = await ctx.apply(rt, target.runId, [input]);
  if (result.rejections.length) return void (await reply(result.rejections.map((r) => `- ${r.reason}`).join("\n")));
  if (round) return void (await reply(roundRetried(result.decisions)));
  // Steering reaches the job as the App's own comment on the task's PR, never through the journal.
  const undelivered =
    parsed.name === "steer" && taskId && result.decisions.some((d) => d.events.some((e) => e.type === "task.steered"))
      ? await handSteeringToJob(rt, target.runId, taskId, payload.issue.pull_request ? issue : undefined)
      : undefined;
  if (undelivered) await reply(undelivered);
  else await react("+1");
}

/** The word of `/forge retry failed`. */
const ROUND_WORD = "failed";

/** The reply to `/forge retry failed`: the tasks it retried, and those left waiting for a command of their own. */
function roundRetried(decisions: readonly Decision[]): string {
  const retried = decisions.flatMap((d) => d.events.filter((e) => e.type === "task.retried" && e.taskId).map((e) => e.taskId!));
  const journal = decisions.at(-1)?.journal;
  const left = (journal?.tasks ?? []).flatMap((t) =>
    t.status === "FAILED" && t.attempt?.hold ? [{ id: t.id, hold: t.attempt.hold }] : [],
  );
  return roundRetryReply(retried, left);
}

/** `+5`, `+2.50` or `+$5` as dollars; anything else is no amount (the command is refused with how to say it). */
export function budgetAmount(word: string | undefined): number | undefined {
  const m = word && word.length <= 20 ? /^\+\$?(\d{1,6}(?:\.\d{1,2})?)$/.exec(word) : null;
  const n = m ? Number(m[1]) : NaN;
  return n > 0 ? n : undefined;
}
