/**
 * Resuming on the local GitHub (docs/executor.md#resuming), over real HTTP with signed webhooks and
 * the scripted runner: an attempt that stalls after its first stage is retried on the same branch and
 * PR, from the stage its checkpoint left pending, with its agent session; a forged checkpoint is
 * refused and the retry starts fresh on a new branch; a failure of the work starts fresh. A runner killed
 * between stages leaves its checkpoint commit at the branch head: the retry resumes from it, or — forged,
 * oversized, malformed — starts fresh and says why on the PR.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Journal } from "../../src/core/journal.js";
import { planFiles } from "../helpers/plan-files.js";
import { OWNER, REPO, startHarness, type Harness } from "./helpers.js";
import type { Script } from "./scripted-runner.js";

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

/** Attempt 1 of `a` pushes its first stage's work, then stalls (exit 21), with a checkpoint (or a forged one). */
function stallsThenSucceeds(checkpoint: "valid" | "forged") {
  return (id: string, attempt: number): Script =>
    id === "a" && attempt === 1
      ? {
          kind: "exit",
          code: 21,
          error: "the agent was stopped: no progress for 60 s",
          files: { "src/a-part.ts": "export const part = 1;\n" },
          checkpoint:
            checkpoint === "forged" ? "forged" : { completed: ["implement"], pending: ["verify", "walkthrough"], session: SESSION },
        }
      : { kind: "success" };
}

async function pullsOf(h: Harness, branch: string) {
  const { data } = await h.user.rest.pulls.list({ owner: OWNER, repo: REPO, state: "all", head: `${OWNER}:${branch}` });
  return data;
}

async function branchExists(h: Harness, branch: string): Promise<boolean> {
  return h.user.rest.git.getRef({ owner: OWNER, repo: REPO, ref: `heads/${branch}` }).then(
    () => true,
    () => false,
  );
}

describe("Forge App: resuming a retry", () => {
  it(
    "an attempt that stalls after its first stage is resumed on the same PR, from the stage its checkpoint left pending, with its agent session",
    T,
    async () => {
      h = await startHarness(stallsThenSucceeds("valid"), { config: NO_BACKOFF });
      await h.pushFiles(planFiles("mini", { a: [], b: ["a"] }), "Add plan");
      const j = await h.waitFor((x) => x.status === "completed");
      const a = task(j, "a");
      const branch1 = `forge/${j.runId}/a/1`;
      expect(a).toMatchObject({
        status: "MERGED",
        attempts: 2,
        retries: 1,
        attempt: { branch: branch1, resumed: { reason: "stale", fromAttempt: 1, stage: "verify" } },
      });
      // Attempt 2 ran on attempt 1's branch, told what it continues.
      expect(h.runner.dispatched.filter((d) => d.includes("/a/"))).toEqual([`${j.runId}/a/1`, `${j.runId}/a/2`]);
      const inputs = h.runner.inputs.get(`${j.runId}/a/2`)!;
      expect(JSON.parse(inputs.context!)).toMatchObject({
        resume: {
          fromAttempt: 1,
          reason: "stale",
          stage: "verify",
          session: { adapter: "claude", id: SESSION, stage: "verify" },
          depthUsed: 1,
        },
      });
      expect(await branchExists(h, `forge/${j.runId}/a/2`)).toBe(false);
      // One PR, which attempt 1 opened and attempt 2's work merged through, with both attempts' work.
      const pulls = await pullsOf(h, branch1);
      expect(pulls).toHaveLength(1);
      expect(pulls[0]!.merged_at).toBeTruthy();
      const { data: files } = await h.user.rest.pulls.listFiles({ owner: OWNER, repo: REPO, pull_number: pulls[0]!.number });
      expect(files.map((f) => f.filename)).toEqual(expect.arrayContaining(["src/a-part.ts", "src/a.ts"]));
      expect(a.attempt?.prNumber).toBe(pulls[0]!.number);
      // The run log says the retry resumed, and from where.
      const events = h.decisions.flatMap((d) => d.d.events).filter((e) => e.taskId === "a");
      expect(events.find((e) => e.type === "task.retried")?.data).toMatchObject({
        branch: branch1,
        resumes: { fromAttempt: 1, stage: "verify" },
      });
    },
  );

  it("a forged checkpoint is refused: the retry starts fresh on a new branch and PR, and says why", T, async () => {
    h = await startHarness(stallsThenSucceeds("forged"), { config: NO_BACKOFF });
    await h.pushFiles(planFiles("mini", { a: [] }), "Add plan");
    const j = await h.waitFor((x) => x.status === "completed");
    expect(task(j, "a")).toMatchObject({ status: "MERGED", attempts: 2, attempt: { branch: `forge/${j.runId}/a/2` } });
    expect(task(j, "a").attempt?.resumed).toBeUndefined();
    const retried = h.decisions.flatMap((d) => d.d.events).find((e) => e.taskId === "a" && e.type === "task.retried");
    expect((retried?.data as { fresh?: string }).fresh).toMatch(
      /^its checkpoint was refused: its head f{12} is not the attempt's pushed work/,
    );
    expect(JSON.parse(h.runner.inputs.get(`${j.runId}/a/2`)!.context || "{}").resume).toBeUndefined();
    expect(await pullsOf(h, `forge/${j.runId}/a/2`)).toHaveLength(1);
  });

  it(
    "a failure of the work (exit 1) starts fresh by default; a task whose retry_policy resumes failures continues on its PR",
    T,
    async () => {
      const failsOnce = (id: string, attempt: number): Script =>
        attempt === 1
          ? {
              kind: "exit",
              code: 1,
              error: "tests red",
              files: { [`src/${id}-part.ts`]: "x\n" },
              checkpoint: { completed: ["implement"], pending: ["verify"] },
            }
          : { kind: "success" };
      h = await startHarness(failsOnce, { config: NO_BACKOFF });
      const plan = planFiles("mini", { a: [], c: [] });
      const c = Object.keys(plan).find((p) => p.endsWith("tasks/c.md"))!;
      plan[c] = plan[c]!.replace(/^---\n/, "---\nretry_policy:\n  failure: resume\n");
      await h.pushFiles(plan, "Add plan");
      const j = await h.waitFor((x) => x.status === "completed");
      expect(task(j, "a").attempt).toMatchObject({ branch: `forge/${j.runId}/a/2` });
      expect(task(j, "c").attempt).toMatchObject({ branch: `forge/${j.runId}/c/1`, resumed: { reason: "failure", stage: "verify" } });
      expect(await pullsOf(h, `forge/${j.runId}/c/1`)).toHaveLength(1);
    },
  );
});

describe("Forge App: a runner killed between stages", () => {
  it(
    "a runner killed after its first stage's push: the retry resumes from the checkpoint commit it left, at stage 2, on the same branch and PR, with the agent's session",
    T,
    async () => {
      const killed = (id: string, attempt: number): Script =>
        id === "a" && attempt === 1
          ? {
              kind: "killed",
              afterStage: {
                files: { "src/a-part.ts": "export const part = 1;\n" },
                checkpoint: { completed: ["implement"], pending: ["verify", "walkthrough"], session: SESSION },
              },
            }
          : { kind: "success" };
      h = await startHarness(killed, { config: NO_BACKOFF });
      await h.pushFiles(planFiles("mini", { a: [] }), "Add plan");
      const j = await h.waitFor((x) => x.status === "completed");
      const branch1 = `forge/${j.runId}/a/1`;
      // The head attempt 1's runner left: its checkpoint commit, on top of its work after `implement`.
      const inputs = JSON.parse(h.runner.inputs.get(`${j.runId}/a/2`)!.context!) as { resume: { head: string } };
      const { data: head } = await h.user.rest.git.getCommit({ owner: OWNER, repo: REPO, commit_sha: inputs.resume.head });
      expect(head.message).toMatch(/^forge\(a\): checkpoint after stage implement\n/);
      expect(task(j, "a")).toMatchObject({
        status: "MERGED",
        attempts: 2,
        attempt: { branch: branch1, resumed: { reason: "lost", fromAttempt: 1, stage: "verify", head: head.sha } },
      });
      expect(inputs.resume).toMatchObject({
        fromAttempt: 1,
        reason: "lost",
        stage: "verify",
        session: { adapter: "claude", id: SESSION, stage: "verify" },
      });
      expect(await branchExists(h, `forge/${j.runId}/a/2`)).toBe(false);
      const pulls = await pullsOf(h, branch1);
      expect(pulls).toHaveLength(1);
      expect(pulls[0]!.merged_at).toBeTruthy();
      const retried = h.decisions.flatMap((d) => d.d.events).find((e) => e.taskId === "a" && e.type === "task.retried");
      expect(retried?.data).toMatchObject({ branch: branch1, resumes: { fromAttempt: 1, stage: "verify" } });
    },
  );

  it(
    "a forged, oversized or malformed checkpoint a killed runner's branch holds is refused: the retry starts fresh, saying why on the PR",
    T,
    async () => {
      const raw: Record<string, string> = {
        // Schema-valid, but not this attempt's, and naming work the branch does not hold.
        f: JSON.stringify({
          checkpoint_version: 1,
          created_at: "2026-01-01T00:00:00Z",
          run_id: "another-run",
          task_id: "f",
          attempt: 1,
          trace_id: "0123456789abcdef",
          completed_stages: [
            { name: "implement", exit_code: 0 },
            { name: "verify", exit_code: 0 },
          ],
          pending_stages: ["walkthrough"],
          depth_used: 0,
          depth_max: 3,
          head_sha: "f".repeat(40),
        }),
        o: JSON.stringify({ pad: "x".repeat(40_000) }),
        m: "{ not json",
      };
      const script = (id: string, attempt: number): Script =>
        attempt === 1
          ? { kind: "killed", afterStage: { files: { [`src/${id}-part.ts`]: "x\n" }, checkpoint: { raw: raw[id]! } } }
          : { kind: "success" };
      h = await startHarness(script, { config: NO_BACKOFF });
      await h.pushFiles(planFiles("mini", { f: [], o: [], m: [] }), "Add plan");
      const j = await h.waitFor((x) => x.status === "completed");
      const why: Record<string, RegExp> = {
        f: /it names another-run\/f\/1, not .*its head f{12} is not the attempt's pushed work/,
        o: /over the 16384 a checkpoint may have/,
        m: /that is not JSON/,
      };
      for (const id of ["f", "o", "m"]) {
        expect(task(j, id)).toMatchObject({ status: "MERGED", attempts: 2, attempt: { branch: `forge/${j.runId}/${id}/2` } });
        expect(task(j, id).attempt?.resumed).toBeUndefined();
        const retried = h.decisions.flatMap((d) => d.d.events).find((e) => e.taskId === id && e.type === "task.retried");
        expect((retried?.data as { fresh?: string }).fresh).toMatch(/^its checkpoint was refused: /);
        expect((retried?.data as { fresh?: string }).fresh).toMatch(why[id]!);
        expect(JSON.parse(h.runner.inputs.get(`${j.runId}/${id}/2`)!.context || "{}").resume).toBeUndefined();
        // Said on attempt 1's PR.
        const [pr] = await pullsOf(h, `forge/${j.runId}/${id}/1`);
        const { data: comments } = await h.user.rest.issues.listComments({ owner: OWNER, repo: REPO, issue_number: pr!.number });
        const said = comments
          .map((c) => c.body ?? "")
          .find((b) => b.startsWith(`Forge did not resume \`${id}\` from the checkpoint attempt 1 left, which it refused: `));
        expect(said).toMatch(why[id]!);
      }
    },
  );
});
