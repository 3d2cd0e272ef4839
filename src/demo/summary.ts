// The summary `forge demo` prints once the run is over: a row per task, a line per follow-up,
// Change Request, overlay PR, the person's review and the CI fix, the final PR, the plan's checks,
// the jobs, and OK or FAILED with the problems. README.md's sample output is this text (test/demo).
import { ciFixInWords, ciRunsInWords } from "./ci-runs.js";
import { loopInWords } from "./loop.js";
import type { DemoResult, DemoTask } from "./types.js";

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

/** A task's agents in order, a repeat folded: `claude → codex`. */
function agentsInWords(agents: DemoTask["agents"]): string {
  const order: string[] = [];
  for (const a of agents ?? []) if (order.at(-1) !== a.agent) order.push(a.agent);
  return order.join(" → ");
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
  // A run on several agents names each task's agents: each attempt's, a repeat folded (`claude → codex`).
  const byAgent = r.tasks.some((t) => t.agents?.some((a) => a.agent !== r.tasks[0]?.agents?.[0]?.agent));
  const headers = ["Task", "Kind", "Status", "Attempts", "PR", "Time", ...(byAgent ? ["Agent"] : []), ""];
  if (byAgent) rows.forEach((row, i) => row.splice(6, 0, agentsInWords(r.tasks[i]!.agents)));
  const out = ["", table(headers, rows), ""];
  for (const f of r.followups)
    out.push(`Follow-up ${f.id} (from ${f.sourceTaskId}): ${f.status}${f.pr !== undefined ? `, PR #${f.pr}` : ""} — ${f.text}`);
  for (const c of r.changeRequests)
    out.push(
      `Change Request ${c.id} (from ${c.emittedBy}, issue #${c.issue ?? "?"}): ${c.status}${c.overlayId ? ` as ${c.overlayId}` : ""} — ${c.title}`,
    );
  for (const c of r.agentChanges ?? [])
    out.push(
      `Agent: ${c.task}'s attempt ${c.attempt} ran on ${c.to}, not ${c.from} — ${c.why}${c.pr !== undefined ? ` (PR #${c.pr}${c.prSection ? " says so under ## Agent" : ""})` : ""}`,
    );
  for (const p of r.overlayPrs)
    out.push(`Captain's overlay PR #${p.number}: ${p.title} (${p.head} → main)${p.merged ? ", merged by the person" : ""}`);
  const { review, ciFix } = r.feedback;
  if (review)
    out.push(
      `Review: octocat asked for changes on #${review.pr} (${review.task}); the agent answered in revision ${review.iteration}${review.reply ? " and replied in the comment's thread" : ""}; ${review.approvalId !== undefined ? `approved at ${review.approvedHead?.slice(0, 7) ?? "?"}` : "not approved"}; ${review.status}`,
    );
  if (ciFix) out.push(ciFixInWords(ciFix));
  out.push(...loopInWords(r.loop));
  if (r.finalPr) out.push(`Final PR #${r.finalPr.number}: ${r.finalPr.title} (${r.finalPr.head} → ${r.finalPr.base})`);
  if (r.trackerIssue !== undefined) out.push(`Run tracker: issue #${r.trackerIssue}`);
  if (r.testsOnIntegration)
    out.push(`The plan's checks on the integration branch (${r.testsOnIntegration.commands.join("; ")}): ${r.testsOnIntegration.summary}`);
  out.push(
    `Jobs: ${r.jobs.action} ran the real Forge action (${r.jobs.captain} of them ${r.jobs.captain === 1 ? "a Captain" : "Captains"}).`,
  );
  if (r.modelServers)
    out.push(
      `Scripted model servers: ${Object.entries(r.modelServers)
        .map(
          ([server, n]) =>
            `${server} ${n.requests} requests${n.throughProxy === n.requests ? "" : ` (${n.requests - n.throughProxy} not through a job's proxy)`}`,
        )
        .join("; ")}; each through its job's model proxy.`,
    );
  if (r.ciRuns) out.push(ciRunsInWords(r.ciRuns));
  for (const n of r.notes) out.push(`Note: ${n}`);
  out.push(`${r.ok ? "OK" : "FAILED"}: run ${r.runId ?? "(none)"} ${r.status} in ${secs(r.durationMs)}.`);
  for (const p of r.problems) out.push(`  - ${p}`);
  if (r.reportPath) out.push(`Report: ${r.reportPath}`);
  return `${out.join("\n")}\n`;
}
