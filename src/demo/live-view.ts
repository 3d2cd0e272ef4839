// What `forge demo` prints while the run goes: a line per event and state change the App decided,
// with the time and a progress bar of merged nodes (redrawn at the bottom on a terminal).
import type { Decision } from "../core/decide/index.js";
import type { Journal } from "../core/journal.js";

function bar(done: number, total: number, width = 16): string {
  const full = total ? Math.round((done / total) * width) : 0;
  return `▕${"█".repeat(full)}${"░".repeat(width - full)}▏ ${String(done).padStart(2)}/${total}`;
}

export const secs = (ms: number) => `${(ms / 1000).toFixed(1)}s`;

/** A task whose dependents are all refineries waits MERGE_READY for them to merge it (see docs/executor.md#refineries). */
function refineryMerged(j: Journal, taskId: string): boolean {
  const dependents = j.plan.nodes.filter((n) => n.dependencies.includes(taskId));
  return dependents.length > 0 && dependents.every((n) => n.kind === "refinery");
}

export class LiveView {
  /** Every line printed, for the report. */
  readonly log: string[] = [];
  private readonly t0 = performance.now();
  private barShown = "";

  constructor(
    private readonly write: (text: string) => void,
    /** Colour and a redrawn progress bar (a terminal). */
    private readonly tty: boolean,
  ) {}

  elapsed(): number {
    return performance.now() - this.t0;
  }

  color(code: string, s: string): string {
    return this.tty ? `\x1b[${code}m${s}\x1b[0m` : s;
  }

  line(text: string): void {
    this.log.push(text);
    if (this.tty && this.barShown) this.write("\r\x1b[2K");
    this.write(`${text}\n`);
    if (this.tty && this.barShown) this.write(this.barShown);
  }

  /** A line of the person or the Captain, aligned with the run's lines. */
  aside(text: string): void {
    this.line(`${secs(this.elapsed()).padStart(7)} ${" ".repeat(22)}  ${text}`);
  }

  /** The bar goes when the run is over. */
  endBar(): void {
    this.barShown = "";
    if (this.tty) this.write("\r\x1b[2K");
  }

  /** The events and transitions of one decision of the App about run `id`. */
  decision(id: string, d: Decision): void {
    const total = d.journal.tasks.length;
    const color = (code: string, s: string) => this.color(code, s);
    this.barShown = this.tty ? `${color("2", secs(this.elapsed()).padStart(7))} ${bar(d.journal.merged, total)} merged` : "";
    const prefix = () => `${secs(this.elapsed()).padStart(7)} ${bar(d.journal.merged, total)}`;
    for (const e of d.events) {
      if (e.type === "run.started")
        this.line(`${prefix()}  run ${color("1", id)} started: ${total} nodes, integration branch ${d.journal.integrationBranch}`);
      else if (e.type === "followup.spawned")
        this.line(
          `${prefix()}  ${color("35", "follow-up")} ${String((e.data as { followupId?: string }).followupId)} spawned from ${e.taskId}: ${String((e.data as { reason?: string }).reason)}`,
        );
      else if (e.type === "followup.completed")
        this.line(
          `${prefix()}  ${color("35", "follow-up")} ${String((e.data as { followupId?: string }).followupId)} ${String((e.data as { status?: string }).status)}`,
        );
      else if (e.type === "cr.emitted") {
        // The emitter's own title (its reason when the journal has none).
        const crId = String((e.data as { crId?: string }).crId);
        const title = d.journal.changeRequests.find((c) => c.id === crId)?.title ?? String((e.data as { reason?: string }).reason);
        this.line(`${prefix()}  ${color("33", "Change Request")} ${crId} from ${e.taskId}: ${title}`);
      } else if (e.type === "run.paused")
        this.line(
          `${prefix()}  run paused (${String((e.data as { reason?: string }).reason)}): in-flight work finishes, nothing new starts`,
        );
      else if (e.type === "cr.resolved") {
        const data = e.data as { crId?: string; resolution?: string; overlayId?: string };
        this.line(
          `${prefix()}  ${color("33", "Change Request")} ${String(data.crId)} ${String(data.resolution)}${data.overlayId ? ` as ${data.overlayId}: the plan now has ${total} nodes` : ""}`,
        );
      } else if (e.type === "run.resumed") this.line(`${prefix()}  run resumed`);
      else if (e.type === "run.completed")
        this.line(`${prefix()}  run ${color("32", "completed")}: every task merged; opening the final PR`);
    }
    for (const tr of d.transitions) {
      const t = d.journal.tasks.find((x) => x.id === tr.taskId);
      const byRefinery = tr.to === "MERGE_READY" && refineryMerged(d.journal, tr.taskId);
      const resumed = tr.to === "RUNNING" && tr.from === "PENDING" ? t?.attempt?.resumed : undefined;
      const why =
        tr.to === "FAILED" || tr.to === "STALE"
          ? `  ${color("31", (t?.lastError ?? "").slice(0, 90))}`
          : byRefinery
            ? "  (its refinery merges it)"
            : resumed
              ? `  resumes attempt ${resumed.fromAttempt}${t?.attempt?.prNumber !== undefined ? ` on #${t.attempt.prNumber}` : ""}${resumed.stage ? ` from stage ${resumed.stage}` : ""}`
              : "";
      const tint = tr.to === "MERGED" ? "32" : tr.to === "FAILED" || tr.to === "STALE" ? "31" : tr.to === "RUNNING" ? "36" : "0";
      this.line(
        `${prefix()}  ${tr.taskId.padEnd(12)} ${tr.from.padEnd(11)} → ${color(tint, tr.to.padEnd(11))} attempt ${tr.attempt}${why}`,
      );
    }
  }
}
