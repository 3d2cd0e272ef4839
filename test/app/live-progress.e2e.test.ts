/**
 * An attempt's heartbeats and progress reach the App and the tracker while its job runs
 * (docs/runner.md#live-progress): the job's live check run — the runner's own `LiveCheck`, with the
 * job's token on the local GitHub — carries them; check run updates send no webhook, so the App's
 * reconciler reads it on each sweep, records it on the attempt (a `task.progress` event when a new
 * stage is reached) and the tracker issue shows it, edited in place. A sweep that finds nothing new
 * writes nothing and redraws nothing.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createOctokitGitHub } from "../../action/src/github.js";
import type { LiveEntry } from "../../action/src/live-report.js";
import type { TaskAttempt } from "../../action/src/task/context.js";
import { LiveCheck } from "../../action/src/task/live-check.js";
import type { Journal } from "../../src/core/journal.js";
import { LABELS } from "../../src/core/layout.js";
import { planFiles } from "../helpers/plan-files.js";
import { AGENT_WORKFLOW, OWNER, REPO, startHarness, type Harness } from "./helpers.js";
import type { JobAtWork, Script } from "./scripted-runner.js";

let h: Harness | undefined;
let release: (() => void) | undefined;
afterEach(async () => {
  release?.();
  const done = h;
  h = undefined;
  await done?.close();
}, 60_000);

const task = (j: Journal, id: string) => j.tasks.find((t) => t.id === id)!;
const SWEEP_MS = 60_000;

/** The runner's live check run of a job, driven by the test: entries added as an agent's output would add them. */
function liveCheckOf(job: JobAtWork, now: () => number) {
  const entries: LiveEntry[] = [];
  const attempt = {
    ids: { runId: job.runId, taskId: job.taskId, attempt: job.attempt },
    live: { entries },
    spend: { spent: { usd: 0.12 } },
    github: createOctokitGitHub({ token: job.token, baseUrl: job.apiUrl, owner: job.owner, repo: job.repo, retries: 0 }),
    now,
    warnings: [] as string[],
    input: { serverUrl: "http://localhost", repository: `${job.owner}/${job.repo}` },
  } as unknown as TaskAttempt;
  // Interval 0: every change is sent (the runner's 30 s bound is LiveCheck's own test's).
  const check = new LiveCheck(() => attempt, 0);
  const add = (e: Omit<LiveEntry, "at" | "elapsed_s" | "layer" | "trace_id">) =>
    entries.push({ at: new Date(now()).toISOString(), elapsed_s: entries.length, layer: "stage", trace_id: "0011223344556677", ...e });
  return { check, add, attempt };
}

async function trackerBody(h: Harness): Promise<{ number: number; body: string; count: number }> {
  await h.app.forge.idle();
  const { data } = await h.user.rest.issues.listForRepo({ owner: OWNER, repo: REPO, state: "all", labels: LABELS.tracker });
  return { number: data[0]!.number, body: data[0]!.body ?? "", count: data.length };
}

describe("live progress reaches the App and the tracker", () => {
  it(
    "the reconciler reads the job's live check run: the stage reached and the last heartbeat shown on the tracker, in place; a sweep with nothing new redraws nothing",
    { timeout: 120_000 },
    async () => {
      const gate = new Promise<void>((r) => (release = r));
      // The App's reads of check runs and its edits of issues (the tracker), by route.
      const routes: string[] = [];
      let live!: ReturnType<typeof liveCheckOf>;
      let atWork!: () => void;
      const working = new Promise<void>((r) => (atWork = r));
      h = await startHarness(
        (id): Script =>
          id === "a"
            ? {
                kind: "success",
                gate,
                atWork: async (job) => {
                  live = liveCheckOf(job, () => h!.clock.now());
                  live.add({ stage: "implement", status: "start" });
                  live.add({ stage: "implement", status: "tool_use", tool: "Write", turn: 2 });
                  live.check.start(job.headSha);
                  atWork();
                },
              }
            : { kind: "success" },
        {
          reconcileEveryMs: SWEEP_MS,
          onRequest: (c) => routes.push(c.route),
          // As the workflow template grants it: the live check run needs `checks: write`.
          files: { ".github/workflows/forge-agent.yml": AGENT_WORKFLOW.replace("permissions:\n", "permissions:\n  checks: write\n") },
        },
      );
      await h.pushFiles(planFiles("mini", { a: [] }), "Add plan");
      await h.whileWaiting(working);
      const firstBeat = live.attempt.live.entries.at(-1)!.at;

      // The next sweep finds the job running and reads its live check run.
      let j = await h.waitFor((x) => task(x, "a").attempt?.revision.progress !== undefined);
      expect(task(j, "a").status).toBe("RUNNING");
      expect(task(j, "a").attempt!.revision.progress).toEqual({ stage: "implement", turns: 2, tool: "Write", beat: firstBeat });
      let t = await trackerBody(h);
      const hhmmss = (iso: string) => new Date(iso).toISOString().slice(11, 19);
      expect(t.body).toContain(`stage implement, 2 turns, last heartbeat ${hhmmss(firstBeat)} UTC`);
      const tracker = t.number;

      // Nothing new on the check run: the next sweep reads it (one GET) and redraws no tracker.
      const reads = () => routes.filter((r) => /^GET \/repos\/[^/]+\/[^/]+\/commits\/.+\/check-runs$/.test(r)).length;
      const edits = () => routes.filter((r) => /^PATCH \/repos\/[^/]+\/[^/]+\/issues\/\d+$/.test(r)).length;
      const [readsBefore, editsBefore, seen] = [reads(), edits(), h.decisions.length];
      await h.advance(SWEEP_MS);
      await h.app.forge.idle();
      expect(reads()).toBe(readsBefore + 1);
      expect(edits()).toBe(editsBefore);
      expect(h.decisions.slice(seen).some((d) => d.d.effects.some((e) => e.kind === "UpdateTracker"))).toBe(false);

      // The agent moves on to verify: the runner updates its check run in place, the next sweep carries it over.
      await h.advance(5_000);
      live.add({ stage: "implement", status: "end" });
      live.add({ stage: "verify", status: "start" });
      live.add({ stage: "verify", status: "tool_use", tool: "Bash", turn: 3 });
      live.check.tick(h.clock.now());
      const secondBeat = live.attempt.live.entries.at(-1)!.at;
      j = await h.waitFor((x) => task(x, "a").attempt?.revision.progress?.stage === "verify");
      expect(task(j, "a").attempt!.revision.progress).toEqual({ stage: "verify", turns: 3, tool: "Bash", beat: secondBeat });
      // The stage reached is in the run's log: a task.progress event.
      const events = h.decisions.filter((d) => d.runId === j.runId).flatMap((d) => d.d.events);
      expect(events.filter((e) => e.type === "task.progress").map((e) => (e.data as { message: string }).message)).toEqual([
        "stage implement reached",
        "stage verify reached",
      ]);
      t = await trackerBody(h);
      expect(t).toMatchObject({ number: tracker, count: 1 });
      expect(t.body).toContain(`stage verify, 3 turns, last heartbeat ${hhmmss(secondBeat)} UTC`);
      expect(t.body).not.toContain("stage implement,");

      // Done: the progress note leaves with the running state.
      release!();
      j = await h.waitFor((x) => x.status === "completed");
      t = await trackerBody(h);
      expect(t.body).not.toContain("last heartbeat");
    },
  );
});
