/**
 * An attempt the App's own clock finds silent, on the local GitHub over real HTTP
 * (docs/executor.md#liveness-at-the-app): its runner pushed its first stage's work and checkpoint,
 * then nothing more was heard of its job — no step ended, no `workflow_run` completed. Past
 * `timeouts.liveness_minutes` a tick makes it STALE; the App reads the checkpoint at its branch head
 * before deciding, and the retry resumes from it: same branch and PR, the stage the checkpoint left
 * pending, the agent's session. A forged one is refused: the retry starts fresh and says why on the PR.
 *
 * A sweep of the reconciler that lists the job in progress is a sign of life. The App's clock calls a
 * started job silent when no sweep sees it (a run off the first page GitHub lists, say): the tick is
 * given to the App's engine alone here, as such a sweep gives it, with the test clock moved past the
 * limit — no real minutes pass.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Journal } from "../../src/core/journal.js";
import { planFiles } from "../helpers/plan-files.js";
import { FULL, OWNER, REPO, startHarness, type Harness } from "./helpers.js";
import type { Script } from "./scripted-runner.js";
import type { StageCheckpoint } from "./scripted-checkpoint.js";

let h: Harness | undefined;
afterEach(async () => {
  const done = h;
  h = undefined;
  await done?.close();
}, 60_000);

const T = { timeout: 120_000 };
const NO_BACKOFF = "retry_backoff: { base_seconds: 0, max_seconds: 0 }\n";
const SESSION = "5a1f3c2e-0000-4000-8000-000000000001";
const task = (j: Journal, id: string) => j.tasks.find((t) => t.id === id)!;

/** Attempt 1 of `a` pushes its first stage's work and checkpoint, then goes silent; every other attempt succeeds. */
const silentAfterImplement =
  (checkpoint: StageCheckpoint["checkpoint"]) =>
  (id: string, attempt: number): Script =>
    id === "a" && attempt === 1
      ? { kind: "killed", afterStage: { files: { "src/a-part.ts": "export const part = 1;\n" }, checkpoint, thenSilent: true } }
      : { kind: "success" };

/** Runs `a` until its first job has gone silent after its push, then past the liveness limit, then ticks the App. */
async function silentThenTick(h: Harness): Promise<{ runId: string; head: string }> {
  await h.pushFiles(planFiles("mini", { a: [] }), "Add plan");
  const j = await h.waitFor((x) => task(x, "a").status === "RUNNING");
  // The job's start and its PR change the journal without an event (nothing is written for them alone): read the App's.
  const engine = h.app.forge.runtimes.get(FULL)!.engine;
  const known = async () => {
    const a = task((await engine.state(j.runId))!.state.journal, "a").attempt;
    return a?.revision.startedAt !== undefined && a.prNumber !== undefined && !h!.runner.busy();
  };
  await h.whileWaiting(
    (async () => {
      for (let k = 0; k < 400 && !(await known()); k++) await new Promise((r) => setTimeout(r, 25));
    })(),
  );
  expect(await known()).toBe(true);
  const branch = `forge/${j.runId}/a/1`;
  const { data: ref } = await h.user.rest.git.getRef({ owner: OWNER, repo: REPO, ref: `heads/${branch}` });
  // GitHub still shows the job in progress: nothing ended it.
  const { data: run } = await h.user.rest.actions.getWorkflowRun({
    owner: OWNER,
    repo: REPO,
    run_id: h.runner.runIds.get(`${j.runId}/a/1`)!,
  });
  expect(run.status).toBe("in_progress");
  await h.advance(11 * 60_000);
  expect(task(h.decisions.at(-1)!.d.journal, "a")).toMatchObject({ status: "RUNNING", attempts: 1 });
  await h.whileWaiting(engine.apply(j.runId, [{ kind: "tick" }]));
  return { runId: j.runId, head: ref.object.sha };
}

describe("Forge App: an attempt its clock finds silent", () => {
  it(
    "goes STALE on the tick past liveness_minutes and is resumed from the checkpoint its branch head holds: same PR, stage 2, the agent's session",
    T,
    async () => {
      h = await startHarness(silentAfterImplement({ completed: ["implement"], pending: ["verify", "walkthrough"], session: SESSION }), {
        config: NO_BACKOFF,
      });
      const { runId, head } = await silentThenTick(h);
      const { data: cp } = await h.user.rest.git.getCommit({ owner: OWNER, repo: REPO, commit_sha: head });
      expect(cp.message).toMatch(/^forge\(a\): checkpoint after stage implement\n/);
      const events = () => h!.decisions.flatMap((d) => d.d.events).filter((e) => e.taskId === "a");
      expect(events().find((e) => e.type === "task.stale")?.data).toMatchObject({ attempt: 1, threshold: 600 });
      expect(events().find((e) => e.type === "task.retried")?.data).toMatchObject({
        branch: `forge/${runId}/a/1`,
        resumes: { fromAttempt: 1, stage: "verify" },
      });
      const j = await h.waitFor((x) => x.status === "completed");
      // The retry's dispatch: on attempt 1's branch, from its checkpoint commit, at the stage it left pending, with its session.
      const context = JSON.parse(h.runner.inputs.get(`${runId}/a/2`)!.context!) as Record<string, unknown>;
      expect(context.resume).toEqual({
        fromAttempt: 1,
        reason: "stale",
        head,
        stage: "verify",
        session: { adapter: "claude", id: SESSION, stage: "verify" },
        depthUsed: 0,
      });
      expect(h.runner.dispatched.filter((d) => d.includes("/a/"))).toEqual([`${runId}/a/1`, `${runId}/a/2`]);
      expect(task(j, "a")).toMatchObject({
        status: "MERGED",
        attempts: 2,
        retries: 1,
        attempt: { branch: `forge/${runId}/a/1`, resumed: { reason: "stale", fromAttempt: 1, head, stage: "verify" } },
      });
      // The silent job was cancelled; one PR holds both attempts' work.
      const { data: first } = await h.user.rest.actions.getWorkflowRun({
        owner: OWNER,
        repo: REPO,
        run_id: h.runner.runIds.get(`${runId}/a/1`)!,
      });
      expect(first.conclusion).toBe("cancelled");
      const { data: pulls } = await h.user.rest.pulls.list({ owner: OWNER, repo: REPO, state: "all", head: `${OWNER}:forge/${runId}/a/1` });
      expect(pulls).toHaveLength(1);
      expect(pulls[0]!.merged_at).toBeTruthy();
      const { data: files } = await h.user.rest.pulls.listFiles({ owner: OWNER, repo: REPO, pull_number: pulls[0]!.number });
      expect(files.map((f) => f.filename)).toEqual(expect.arrayContaining(["src/a-part.ts", "src/a.ts"]));
      expect(
        await h.user.rest.git.getRef({ owner: OWNER, repo: REPO, ref: `heads/forge/${runId}/a/2` }).then(
          () => true,
          () => false,
        ),
      ).toBe(false);
    },
  );

  it(
    "a checkpoint at the silent attempt's head that does not hold is refused: the retry starts fresh, saying why on the PR",
    T,
    async () => {
      // Schema-valid, but naming work the branch does not hold.
      const forged = JSON.stringify({
        checkpoint_version: 1,
        created_at: "2026-01-01T00:00:00Z",
        run_id: "placeholder",
        task_id: "a",
        attempt: 1,
        trace_id: "0123456789abcdef",
        completed_stages: [{ name: "implement", exit_code: 0 }],
        pending_stages: ["verify", "walkthrough"],
        depth_used: 0,
        depth_max: 3,
        head_sha: "f".repeat(40),
      });
      h = await startHarness(silentAfterImplement({ raw: forged }), { config: NO_BACKOFF });
      const { runId } = await silentThenTick(h);
      const j = await h.waitFor((x) => x.status === "completed");
      expect(task(j, "a")).toMatchObject({ status: "MERGED", attempts: 2, attempt: { branch: `forge/${runId}/a/2` } });
      expect(task(j, "a").attempt?.resumed).toBeUndefined();
      const retried = h.decisions.flatMap((d) => d.d.events).find((e) => e.taskId === "a" && e.type === "task.retried");
      const why = /^its checkpoint was refused: it names placeholder\/a\/1, not .*its head f{12} is not the attempt's pushed work/;
      expect((retried?.data as { fresh?: string }).fresh).toMatch(why);
      expect(JSON.parse(h.runner.inputs.get(`${runId}/a/2`)!.context || "{}").resume).toBeUndefined();
      const { data: pulls } = await h.user.rest.pulls.list({ owner: OWNER, repo: REPO, state: "all", head: `${OWNER}:forge/${runId}/a/1` });
      const { data: comments } = await h.user.rest.issues.listComments({ owner: OWNER, repo: REPO, issue_number: pulls[0]!.number });
      const said = comments
        .map((c) => c.body ?? "")
        .find((b) => b.startsWith("Forge did not resume `a` from the checkpoint attempt 1 left, which it refused: "));
      expect(said).toMatch(/it names placeholder\/a\/1, not .*its head f{12} is not the attempt's pushed work/);
    },
  );
});
