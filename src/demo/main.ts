/**
 * The process `forge demo` starts (through tsx, like `forge sim`): parses the options, runs the
 * demo with its live view, prints the summary table, and exits 0 only when every task is MERGED
 * and the final PR exists.
 *   --agent scripted|claude   --plan <dir>   --out <dir>   --runners <n>   --timeout <seconds>   --json
 *   --latency none|github     the local GitHub at once (default) or at GitHub's speed (../latency/README.md)
 */
import path from "node:path";
import { parseArgs } from "node:util";
import { isLatencyProfileName, LATENCY_PROFILE_NAMES } from "../local-github/latency/profile.js";
import { DemoPlanError } from "./plan-stages.js";
import { runDemo, type DemoAgent, type DemoResult } from "./run.js";

const secs = (ms: number | undefined) => (ms === undefined ? "" : `${(ms / 1000).toFixed(1)} s`);

function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const fmt = (r: string[]) =>
    r
      .map((c, i) => c.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  return [fmt(headers), widths.map((w) => "─".repeat(w)).join("  "), ...rows.map(fmt)].join("\n");
}

export function summary(r: DemoResult): string {
  const rows = r.tasks.map((t) => [
    t.id,
    t.kind,
    t.status,
    String(t.attempts),
    t.pr !== undefined ? `#${t.pr}` : "",
    secs(t.timeMs),
    [
      t.addedBy ? `added by ${t.addedBy}` : t.retries ? `${t.retries} retry` : "",
      t.reviewIterations ? `${t.reviewIterations} review revision` : "",
      t.ciFixes ? `${t.ciFixes} CI fix` : "",
    ]
      .filter(Boolean)
      .join(", "),
  ]);
  const out = ["", table(["Task", "Kind", "Status", "Attempts", "PR", "Time", ""], rows), ""];
  for (const f of r.followups)
    out.push(`Follow-up ${f.id} (from ${f.sourceTaskId}): ${f.status}${f.pr !== undefined ? `, PR #${f.pr}` : ""} — ${f.text}`);
  for (const c of r.changeRequests)
    out.push(
      `Change Request ${c.id} (from ${c.emittedBy}, issue #${c.issue ?? "?"}): ${c.status}${c.overlayId ? ` as ${c.overlayId}` : ""}`,
    );
  for (const p of r.overlayPrs)
    out.push(`Captain's overlay PR #${p.number}: ${p.title} (${p.head} → main)${p.merged ? ", merged by the person" : ""}`);
  const { review, ciFix } = r.feedback;
  if (review)
    out.push(
      `Review: octocat asked for changes on #${review.pr} (${review.task}); the agent answered in revision ${review.iteration}${review.reply ? " and replied in the comment's thread" : ""}; ${review.approvalId !== undefined ? `approved at ${review.approvedHead?.slice(0, 7) ?? "?"}` : "not approved"}; ${review.status}`,
    );
  if (ciFix)
    out.push(
      `CI fix: the required check \`${ciFix.failedCheck}\` failed on ${ciFix.task}'s first head; fix revision ${ciFix.iteration} on the same PR${ciFix.pr !== undefined ? ` #${ciFix.pr}` : ""}; ${ciFix.status} (${ciFix.conclusions.join(", ")})`,
    );
  if (r.finalPr) out.push(`Final PR #${r.finalPr.number}: ${r.finalPr.title} (${r.finalPr.head} → ${r.finalPr.base})`);
  if (r.trackerIssue !== undefined) out.push(`Run tracker: issue #${r.trackerIssue}`);
  if (r.testsOnIntegration) out.push(`Tests on the integration branch (node --test): ${r.testsOnIntegration.summary}`);
  out.push(
    `Jobs: ${r.jobs.action} ran the real Forge action (${r.jobs.captain} of them ${r.jobs.captain === 1 ? "a Captain" : "Captains"}); the project's CI ran ${r.jobs.ci} times beside them.`,
  );
  for (const n of r.notes) out.push(`Note: ${n}`);
  out.push(`${r.ok ? "OK" : "FAILED"}: run ${r.runId ?? "(none)"} ${r.status} in ${secs(r.durationMs)}.`);
  for (const p of r.problems) out.push(`  - ${p}`);
  if (r.reportPath) out.push(`Report: ${r.reportPath}`);
  return `${out.join("\n")}\n`;
}

async function cli(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      agent: { type: "string", default: "scripted" },
      plan: { type: "string" },
      out: { type: "string" },
      runners: { type: "string" },
      timeout: { type: "string" },
      latency: { type: "string", default: "none" },
      json: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(
      "Usage: forge demo [--agent scripted|claude] [--plan <dir>] [--out <dir>] [--runners <n>] [--timeout <seconds>] [--latency none|github] [--json]\n",
    );
    return 0;
  }
  if (values.agent !== "scripted" && values.agent !== "claude") {
    process.stderr.write(`forge demo: --agent must be scripted or claude, not ${values.agent}\n`);
    return 2;
  }
  if (!isLatencyProfileName(values.latency)) {
    process.stderr.write(`forge demo: --latency must be ${LATENCY_PROFILE_NAMES.join(" or ")}, not ${values.latency}\n`);
    return 2;
  }
  const cwd = process.env.FORGE_DEMO_CWD ?? process.cwd();
  const json = values.json;
  try {
    const result = await runDemo({
      agent: values.agent as DemoAgent,
      ...(values.plan ? { planDir: path.resolve(cwd, values.plan) } : {}),
      ...(values.out ? { outDir: path.resolve(cwd, values.out) } : {}),
      ...(values.runners ? { runners: Number(values.runners) } : {}),
      ...(values.timeout ? { timeoutMs: Number(values.timeout) * 1000 } : {}),
      latency: values.latency,
      // With --json the live view goes to stderr and stdout carries one JSON document.
      write: (t) => void (json ? process.stderr : process.stdout).write(t),
      tty: !json && (process.stdout.isTTY === true || process.env.FORGE_DEMO_TTY === "1"),
    });
    if (json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    else process.stdout.write(summary(result));
    return result.ok ? 0 : 1;
  } catch (e) {
    if (e instanceof DemoPlanError) {
      process.stderr.write(`forge demo: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
}

process.exitCode = await cli(process.argv.slice(2));
