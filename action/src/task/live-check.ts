/**
 * The attempt's live check run, `forge · <taskId> · live` (docs/runner.md#live-progress): while the
 * agent works it shows the current stage, the last tool calls, the turns and the spend so far,
 * updated at most every 30 s and only when something changed. A check run's update is a PATCH of an
 * object the job created — not one of GitHub's content-creating requests (issues, comments, pull
 * requests, reviews), whose secondary limit is far lower — and it shows on the pull request's
 * checks without notifying anyone, where a comment would. The App's own check run (`forge · <taskId>`)
 * still gives the verdict. Needs `checks: write` in the workflow; without it the first call is
 * refused, one warning is written, and the job goes on without live progress.
 */
import { asData } from "../../../src/core/render/as-data.js";
import { executionReportPath } from "../../../src/core/layout.js";
import { exitMeaning, succeeded } from "../../../src/core/exit-codes.js";
import { liveProgressLine } from "../../../src/core/live-progress.js";
import type { LiveEntry } from "../live-report.js";
import type { TaskAttempt } from "./context.js";

/** The shortest time between two updates. */
export const LIVE_CHECK_INTERVAL_MS = 30_000;
/** Tool calls shown. */
const TOOLS_SHOWN = 5;

/** One line of agent text inside a Markdown code span: no backticks, no line breaks, cut. */
const code = (s: string, max = 80) =>
  `\`${asData(s.slice(0, max * 4))
    .replace(/[`\r\n]/g, " ")
    .slice(0, max)}\``;

export class LiveCheck {
  #id: number | undefined;
  /** The commit the current check run is on. */
  #head: string | undefined;
  #off = false;
  #lastSent = -Infinity;
  #lastText = "";
  #sending: Promise<void> = Promise.resolve();
  /** API calls made (the overhead figure). */
  calls = 0;

  /** `of` gives the attempt (the check is made while the attempt's state is put together). */
  constructor(
    private readonly of: () => TaskAttempt,
    private readonly intervalMs = LIVE_CHECK_INTERVAL_MS,
  ) {}

  private get a(): TaskAttempt {
    return this.of();
  }

  get name(): string {
    return `forge · ${this.a.ids.taskId} · live`;
  }

  /** What the check run says now. */
  render(): { title: string; summary: string } {
    const entries = this.a.live.entries;
    const started = [...entries].reverse().find((e) => e.layer === "stage" && e.status === "start");
    const ended =
      started && entries.some((e) => e.layer === "stage" && e.status === "end" && e.at >= started.at && e.stage === started.stage);
    const stage = started && !ended ? started.stage : undefined;
    const tools = entries.filter((e) => e.status === "tool_use").slice(-TOOLS_SHOWN);
    const turns = entries.reduce((n, e) => Math.max(n, e.turn ?? 0), 0);
    const spent = this.a.spend.spent;
    const elapsed = entries.at(-1)?.elapsed_s ?? 0;
    const spend =
      spent.usd !== undefined ? `$${spent.usd.toFixed(2)}` : spent.tokens !== undefined ? `${spent.tokens} tokens` : "not reported yet";
    const title = `Attempt ${this.a.ids.attempt}: ${stage ? `stage ${stage.slice(0, 40)}` : "between stages"} · ${turns} turns · ${spend}`;
    const lines = [
      `**Stage:** ${stage ? code(stage) : "—"} · **Turns:** ${turns} · **Spend so far:** ${spend} · **Elapsed:** ${Math.round(elapsed)} s`,
      "",
      tools.length ? "**Last tool calls**" : "No tool call yet.",
      ...tools.map(
        (e: LiveEntry) =>
          `- ${Math.round(e.elapsed_s)} s · ${code(e.stage, 30)} · ${code(e.tool ?? "?", 40)}${e.detail ? ` ${code(e.detail)}` : ""}`,
      ),
      "",
      `_Updated at most every ${Math.round(this.intervalMs / 1000)} s. The verdict is on the check run \`forge · ${this.a.ids.taskId}\`._`,
    ];
    // For the App (src/core/live-progress.ts): the same facts, hidden, read by its reconciler.
    const beat = entries.at(-1)?.at;
    if (beat) {
      // Agent text: no live @mention or Forge marker, even hidden.
      const tool = tools.at(-1)?.tool && asData(tools.at(-1)!.tool!);
      lines.push(
        "",
        liveProgressLine({
          ...(stage ? { stage: asData(stage).slice(0, 60) } : {}),
          turns,
          ...(tool ? { tool: tool.slice(0, 60) } : {}),
          beat,
        }),
      );
    }
    return { title, summary: lines.join("\n") };
  }

  /** Creates the check run on `headSha` (the attempt's pushed start). */
  start(headSha: string): void {
    const gh = this.a.github;
    if (!gh.createCheckRun || !gh.updateCheckRun) return void (this.#off = true);
    const { runId, taskId, attempt } = this.a.ids;
    const { title, summary } = this.render();
    this.#send(async () => {
      this.#id = await gh.createCheckRun!({ name: this.name, headSha, title, summary, externalId: `${runId}/${taskId}/${attempt}/live` });
      this.#head = headSha;
      this.#lastText = summary;
    });
  }

  /**
   * The branch's head moved (the work pushed after a stage, the record commit): GitHub shows a pull
   * request the check runs of its head commit only, so the check run follows — the one left behind
   * is completed (neutral, naming the commit it continues on) and a new one is made on `headSha`.
   */
  moveTo(headSha: string): void {
    if (this.#off) return;
    const gh = this.a.github;
    const { runId, taskId, attempt } = this.a.ids;
    this.#send(async () => {
      if (this.#id === undefined || this.#head === headSha) return;
      const { title, summary } = this.render();
      await gh.updateCheckRun!(this.#id, {
        title: `Continued on ${headSha.slice(0, 12)}`,
        summary: `The branch moved to ${headSha}: this attempt's live progress continues on that commit's check run.`,
        conclusion: "neutral",
      });
      this.#id = await gh.createCheckRun!({ name: this.name, headSha, title, summary, externalId: `${runId}/${taskId}/${attempt}/live` });
      this.#head = headSha;
      this.#lastText = summary;
    });
  }

  /** Updates the check run when the interval has passed and its text changed. */
  tick(now: number): void {
    if (this.#off || this.#id === undefined || now - this.#lastSent < this.intervalMs) return;
    const { title, summary } = this.render();
    if (summary === this.#lastText) return;
    this.#send(async () => {
      await this.a.github.updateCheckRun!(this.#id!, { title, summary });
      this.#lastText = summary;
    });
  }

  /** Completes the check run with the attempt's exit code and a link to its execution report. */
  async finish(exitCode: number, recordSha: string): Promise<void> {
    await this.#sending;
    if (this.#off || this.#id === undefined) return;
    const { runId, taskId, attempt } = this.a.ids;
    // The verdict goes on the record commit, the pull request's head.
    this.moveTo(recordSha);
    const { summary } = this.render();
    const link = `${this.a.input.serverUrl}/${this.a.input.repository}/blob/${recordSha}/${executionReportPath(runId, taskId, attempt)}`;
    this.#send(async () => {
      await this.a.github.updateCheckRun!(this.#id!, {
        title: `Attempt ${attempt} ended: exit ${exitCode} (${exitMeaning(exitCode)})`,
        summary: `${summary}\n\nExecution report: [execution-report.md](${link})`,
        conclusion: succeeded(exitCode) ? "success" : "neutral",
      });
    });
    await this.#sending;
  }

  /** One call at a time, never blocking the agent; a refusal turns live progress off with one warning. */
  #send(call: () => Promise<void>): void {
    this.#lastSent = this.a.now();
    this.#sending = this.#sending.then(async () => {
      if (this.#off) return;
      this.calls++;
      try {
        await call();
      } catch (err) {
        this.#off = true;
        this.a.warnings.push(`live progress is off: ${(err as Error).message} (the workflow needs \`checks: write\`)`);
      }
    });
  }
}
