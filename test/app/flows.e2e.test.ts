/**
 * Every flow of the App on the local GitHub, over real HTTP with signed webhooks: retries, commands
 * and who may give them, human input, pause/resume/cancel, Change Requests, follow-ups, plan edits,
 * silent agents, usage limits (the refineries: flows-refinery.e2e.test.ts).
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Journal } from "../../src/core/journal.js";
import { TRACKER_DEBOUNCE_MAX_MS } from "../../src/app/effects/index.js";
import { LABELS } from "../../src/core/layout.js";
import { overlayFiles, planFiles } from "../helpers/plan-files.js";
import { FULL, OWNER, REPO, startHarness, type Harness } from "./helpers.js";
import type { Script } from "./scripted-runner.js";

let h: Harness | undefined;
afterEach(async () => {
  const done = h;
  h = undefined;
  await done?.close();
}, 60_000);

const T = { timeout: 120_000 };
const task = (j: Journal, id: string) => j.tasks.find((t) => t.id === id)!;

/** The run's tracker issue (the App creates it in the background as the run starts). */
async function trackerOf(h: Harness): Promise<number> {
  for (let i = 0; i < 100; i++) {
    await h.app.forge.idle();
    const { data } = await h.user.rest.issues.listForRepo({ owner: OWNER, repo: REPO, state: "all", labels: LABELS.tracker });
    if (data[0]) return data[0].number;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("no tracker issue");
}

/** Comments of an issue, once one matches (the App answers in the background). */
async function commentsUntil(h: Harness, issue: number, re: RegExp): Promise<string[]> {
  let all: string[] = [];
  for (let i = 0; i < 100; i++) {
    all = await comments(h, issue);
    if (all.some((c) => re.test(c))) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return all;
}

async function comments(h: Harness, issue: number): Promise<string[]> {
  await h.app.forge.idle();
  const { data } = await h.user.rest.issues.listComments({ owner: OWNER, repo: REPO, issue_number: issue });
  return data.map((c) => c.body ?? "");
}

const branchOfRun = (runId: string, taskId: string, attempt: number) => `forge/${runId}/${taskId}/${attempt}`;

/** A two-task run whose first agent is held at work until `release()`. */
async function runWithAHeld(): Promise<{ g: Harness; release: () => void; running: Journal; tracker: number; ref: string }> {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  h = await startHarness((id): Script => ({ kind: "success", ...(id === "a" ? { gate } : {}) }));
  await h.pushFiles(planFiles("mini", { a: [], b: ["a"] }), "Add plan");
  const running = await h.waitFor((x) => task(x, "a").status === "RUNNING");
  const tracker = await trackerOf(h);
  await h.app.forge.idle();
  return { g: h, release, running, tracker, ref: `heads/forge/${running.runId}/_state` };
}

describe("Forge App flows", () => {
  it("a failed attempt is retried automatically and the retry succeeds", T, async () => {
    h = await startHarness(
      (id, attempt): Script => (id === "a" && attempt === 1 ? { kind: "exit", code: 1, error: "tests failed" } : { kind: "success" }),
      {
        config: "retry_backoff: { base_seconds: 0, max_seconds: 0 }\n",
      },
    );
    await h.pushFiles(planFiles("mini", { a: [], b: ["a"] }), "Add plan");
    const j = await h.waitFor((x) => x.status === "completed");
    expect(task(j, "a")).toMatchObject({ status: "MERGED", attempts: 2, retries: 1 });
    expect(h.runner.dispatched.filter((d) => d.includes("/a/"))).toHaveLength(2);
    const { data: checks } = await h.user.rest.checks.listForRef({
      owner: OWNER,
      repo: REPO,
      ref: j.tasks[0]!.attempt?.recordSha ?? "main",
    });
    expect(checks.check_runs.some((c) => c.name === "forge · a" && c.conclusion === "success")).toBe(true);
  });

  it("a task whose runner could not open its PR is merged through a PR the App opens, naming the walkthrough", T, async () => {
    h = await startHarness((id): Script => ({ kind: "success", ...(id === "a" ? { noPr: true } : {}) }));
    await h.pushFiles(planFiles("mini", { a: [], b: ["a"] }), "Add plan");
    const j = await h.waitFor((x) => x.status === "completed");
    expect(task(j, "a").status).toBe("MERGED");
    const { data: pulls } = await h.user.rest.pulls.list({
      owner: OWNER,
      repo: REPO,
      state: "all",
      head: `${OWNER}:${task(j, "a").attempt?.branch}`,
    });
    expect(pulls).toHaveLength(1);
    expect(pulls[0]!.merged_at).toBeTruthy();
    expect(pulls[0]!.user?.login).toMatch(/\[bot\]$/);
    expect(pulls[0]!.body).toContain(`.forge/runs/${j.runId}/a/1/walkthrough.md`);
    expect(pulls[0]!.labels.map((l) => l.name)).toContain(LABELS.task);
  });

  it("retries stop at max_retries; the exhausted task shows in its check run and the tracker", T, async () => {
    h = await startHarness(() => ({ kind: "exit", code: 1, error: "always fails" }), {
      config: "max_retries: 1\nretry_backoff: { base_seconds: 0, max_seconds: 0 }\n",
    });
    await h.pushFiles(planFiles("mini", { a: [] }), "Add plan");
    const j = await h.waitFor((x) => task(x, "a").attempt?.hold === "exhausted");
    expect(task(j, "a").attempts).toBe(2);
    // The tracker is debounced: its last update lands a few seconds after the last change (a minute at most).
    const tracker = await trackerOf(h);
    await h.advance(TRACKER_DEBOUNCE_MAX_MS);
    await h.app.forge.idle();
    const body = (await h.user.rest.issues.get({ owner: OWNER, repo: REPO, issue_number: tracker })).data.body ?? "";
    expect(body).toContain("held: exhausted");
  });

  it("/forge retry from a writer retries; a reader gets a 👎 and no comment; a bot is ignored", T, async () => {
    h = await startHarness((id, attempt): Script =>
      attempt === 1 ? { kind: "exit", code: 2, error: "depth exhausted" } : { kind: "success" },
    );
    await h.pushFiles(planFiles("mini", { a: [] }), "Add plan");
    const failed = await h.waitFor((x) => task(x, "a").attempt?.hold === "fatal");
    const tracker = await trackerOf(h);
    const refused = (await h.sim.control.comment("reader", FULL, tracker, "/forge retry a")).body as { id: number };
    let reactions: string[] = [];
    for (let i = 0; i < 100 && !reactions.length; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const { data } = await h.user.rest.reactions.listForIssueComment({ owner: OWNER, repo: REPO, comment_id: refused.id });
      reactions = data.map((r) => r.content);
    }
    expect(reactions).toEqual(["-1"]);
    expect((await comments(h, tracker)).join("\n")).not.toMatch(/write access/);
    await h.sim.control.comment("dependabot[bot]", FULL, tracker, "/forge retry a").catch(() => undefined);
    await h.app.forge.idle();
    expect(h.runner.dispatched).toHaveLength(1);
    await h.sim.control.comment("octocat", FULL, tracker, "/forge retry a");
    const j = await h.waitFor((x) => x.status === "completed");
    expect(task(j, "a").attempts).toBe(2);
    void failed;
  });

  it("an agent's question (exit 3) is answered with /forge retry <answer>, which reaches the next attempt", T, async () => {
    h = await startHarness((id, attempt): Script =>
      attempt === 1 ? { kind: "exit", code: 3, question: "Which database should I use?" } : { kind: "success" },
    );
    await h.pushFiles(planFiles("mini", { a: [] }), "Add plan");
    await h.waitFor((x) => task(x, "a").attempt?.hold === "human");
    const tracker = await trackerOf(h);
    await h.app.forge.idle();
    const asked = await commentsUntil(h, tracker, /Which database/);
    expect(asked.join("\n")).toContain("Which database should I use?");
    await h.sim.control.comment("octocat", FULL, tracker, "/forge retry a Use PostgreSQL 16.");
    await h.waitFor((x) => x.status === "completed");
    const dispatch = h.decisions.flatMap((d) => d.d.effects).find((e) => e.kind === "DispatchAgent" && e.attempt === 2);
    expect(dispatch).toMatchObject({ context: { answer: "Use PostgreSQL 16." } });
  });
});

describe("Forge App flows: pause, resume, cancel, Change Requests", () => {
  it("/forge pause stops dispatching, /forge resume goes on, /forge cancel ends the run", T, async () => {
    // The agents of a and b are held at work until the test has given its command.
    let releaseA!: () => void;
    let releaseB!: () => void;
    const gateA = new Promise<void>((r) => (releaseA = r));
    const gateB = new Promise<void>((r) => (releaseB = r));
    h = await startHarness((id): Script => ({ kind: "success", ...(id === "a" ? { gate: gateA } : id === "b" ? { gate: gateB } : {}) }));
    try {
      await h.pushFiles(planFiles("mini", { a: [], b: ["a"], c: ["b"] }), "Add plan");
      await h.waitFor((x) => task(x, "a").status === "RUNNING");
      const tracker = await trackerOf(h);
      await h.sim.control.comment("octocat", FULL, tracker, "/forge pause");
      await h.waitFor((x) => x.pause.manual);
      releaseA();
      const paused = await h.waitFor((x) => task(x, "a").status === "MERGED");
      await h.app.forge.idle();
      expect(task(paused, "b").status).toBe("PENDING");
      await h.sim.control.comment("octocat", FULL, tracker, "/forge resume");
      await h.waitFor((x) => task(x, "b").status === "RUNNING");
      await h.sim.control.comment("octocat", FULL, tracker, "/forge cancel");
      const cancelled = await h.waitFor((x) => x.status === "cancelled");
      expect(task(cancelled, "c").status).toBe("PENDING");
      expect(h.decisions.flatMap((d) => d.d.effects).some((e) => e.kind === "CancelAgent" && e.taskId === "b")).toBe(true);
    } finally {
      releaseA();
      releaseB();
    }
  });

  it("a Change Request by replan: CR issue, run paused, Captain's overlay PR merged, run resumed with the new task", T, async () => {
    const base = { a: [], r1: ["a"] };
    h = await startHarness((id, attempt): Script => {
      if (id === "r1" && attempt === 1) return { kind: "exit", code: 11, error: "the integration needs a b task" };
      if (id.startsWith("_captain-"))
        return {
          kind: "pr",
          base: "main",
          title: "Overlay for the CR",
          files: overlayFiles("mini", base, 1, id.slice("_captain-".length), { b: ["a"] }, [{ from: "b", to: "r1" }]),
        };
      return { kind: "success" };
    });
    await h.pushFiles(planFiles("mini", base), "Add plan");
    const paused = await h.waitFor((x) => x.pause.changeRequests.length === 1);
    const crId = paused.pause.changeRequests[0]!;
    await h.app.forge.idle();
    const { data: crIssues } = await h.user.rest.issues.listForRepo({ owner: OWNER, repo: REPO, labels: LABELS.changeRequest });
    expect(crIssues).toHaveLength(1);
    expect(crIssues[0]!.body).toContain(crId);
    await h.runner.idle();
    const { data: prs } = await h.user.rest.pulls.list({ owner: OWNER, repo: REPO, base: "main", state: "open" });
    const overlayPr = prs.find((p) => p.title === "Overlay for the CR")!;
    await h.sim.control.merge("octocat", FULL, overlayPr.number);
    const done = await h.waitFor((x) => x.status === "completed");
    expect(done.plan.overlays).toEqual(["overlay-001"]);
    expect(task(done, "b").status).toBe("MERGED");
    expect(done.changeRequests[0]!.status).toBe("applied");
  });

  it("a Change Request in review mode: /forge reject continues without changing the plan", T, async () => {
    h = await startHarness(
      (id, attempt): Script => (id === "r1" && attempt === 1 ? { kind: "exit", code: 11, error: "needs more" } : { kind: "success" }),
      { config: "cr_mode: review\n" },
    );
    await h.pushFiles(planFiles("mini", { a: [], r1: ["a"] }), "Add plan");
    await h.waitFor((x) => x.pause.changeRequests.length === 1);
    await h.app.forge.idle();
    const { data: crIssues } = await h.user.rest.issues.listForRepo({ owner: OWNER, repo: REPO, labels: LABELS.changeRequest });
    await h.sim.control.comment("octocat", FULL, crIssues[0]!.number, "/forge reject");
    const done = await h.waitFor((x) => x.status === "completed");
    expect(done.changeRequests[0]!.status).toBe("rejected");
    expect(done.plan.overlays).toEqual([]);
  });

  it(
    "a Change Request in review mode: /forge approve dispatches the Captain, whose overlay is applied and the run completes",
    T,
    async () => {
      const base = { a: [], r1: ["a"] };
      h = await startHarness(
        (id, attempt): Script => {
          if (id === "r1" && attempt === 1) return { kind: "exit", code: 11, error: "the integration needs a b task" };
          if (id.startsWith("_captain-"))
            return {
              kind: "pr",
              base: "main",
              title: "Overlay for the CR",
              files: overlayFiles("mini", base, 1, id.slice("_captain-".length), { b: ["a"] }, [{ from: "b", to: "r1" }]),
            };
          return { kind: "success" };
        },
        { config: "cr_mode: review\n" },
      );
      await h.pushFiles(planFiles("mini", base), "Add plan");
      await h.waitFor((x) => x.pause.changeRequests.length === 1);
      await h.app.forge.idle();
      // Held for a person: no Captain yet.
      expect(h.runner.dispatched.some((d) => d.includes("/_captain-"))).toBe(false);
      const { data: crIssues } = await h.user.rest.issues.listForRepo({ owner: OWNER, repo: REPO, labels: LABELS.changeRequest });
      await h.sim.control.comment("octocat", FULL, crIssues[0]!.number, "/forge approve");
      await h.waitFor((x) => x.changeRequests[0]?.status === "approved");
      await h.app.forge.idle();
      await h.runner.idle();
      expect(h.runner.dispatched.filter((d) => d.includes("/_captain-"))).toHaveLength(1);
      const { data: prs } = await h.user.rest.pulls.list({ owner: OWNER, repo: REPO, base: "main", state: "open" });
      await h.sim.control.merge("octocat", FULL, prs.find((p) => p.title === "Overlay for the CR")!.number);
      const done = await h.waitFor((x) => x.status === "completed");
      expect(done.changeRequests[0]!.status).toBe("applied");
      expect(done.plan.overlays).toEqual(["overlay-001"]);
      expect(task(done, "b").status).toBe("MERGED");
    },
  );

  it("an invalid overlay is refused with a comment on the CR issue saying why", T, async () => {
    const base = { a: [], r1: ["a"] };
    h = await startHarness(
      (id, attempt): Script => (id === "r1" && attempt === 1 ? { kind: "exit", code: 11, error: "needs more" } : { kind: "success" }),
      { config: "cr_mode: review\n" },
    );
    await h.pushFiles(planFiles("mini", base), "Add plan");
    const paused = await h.waitFor((x) => x.pause.changeRequests.length === 1);
    const crId = paused.pause.changeRequests[0]!;
    await h.app.forge.idle();
    // Not append-only: the overlay also drops a's dependency… by rewriting r1 without it.
    const files = overlayFiles("mini", base, 1, crId, { b: [] }, [{ from: "b", to: "r1" }]);
    files[".forge/plans/mini/dag.json"] = files[".forge/plans/mini/dag.json"]!.replace(
      /"dependencies": \[\s*"a",\s*"b"\s*\]/,
      '"dependencies": ["b"]',
    );
    await h.pushFiles(files, "A bad overlay");
    await h.app.forge.idle();
    const { data: crIssues } = await h.user.rest.issues.listForRepo({ owner: OWNER, repo: REPO, labels: LABELS.changeRequest });
    const said = (await commentsUntil(h, crIssues[0]!.number, /Forge refused/)).join("\n");
    expect(said).toMatch(/Forge refused `overlay-001`/);
    const state = await h.app.forge.runtimes.get(FULL)!.engine.state(paused.runId);
    expect(state!.state.journal.plan.overlays).toEqual([]);
    expect(state!.state.journal.pause.changeRequests).toEqual([crId]);
  });
});

describe("Forge App flows: follow-ups, plan edits, state branches", () => {
  it("a bug-like follow-up spawns a follow-up agent outside the DAG", T, async () => {
    h = await startHarness((id): Script =>
      id === "a" ? { kind: "success", followups: ["Fix the broken error message in parse()"] } : { kind: "success" },
    );
    await h.pushFiles(planFiles("mini", { a: [] }), "Add plan");
    await h.waitFor((x) => x.status === "completed");
    await h.runner.idle();
    expect(h.runner.dispatched.some((d) => d.endsWith("/_followup-1/1"))).toBe(true);
  });

  it("an edit to the plan on the default branch during a run leaves the run unchanged", T, async () => {
    h = await startHarness(() => ({ kind: "success" }));
    await h.pushFiles(planFiles("mini", { a: [], b: ["a"] }), "Add plan");
    const started = await h.waitFor((x) => task(x, "a").status === "RUNNING");
    await h.pushFiles(planFiles("mini", { a: [], b: ["a"], c: ["b"] }), "Edit the plan");
    const done = await h.waitFor((x) => x.status === "completed");
    expect(done.tasks.map((t) => t.id)).toEqual(["a", "b"]);
    expect(done.planCommit).toBe(started.planCommit);
    expect(h.decisions.some((d) => d.d.events.some((e) => e.type === "plan.edit_ignored"))).toBe(true);
  });

  it("a state branch deleted by hand is put back at its last commit, the tracker says so, and the run completes", T, async () => {
    const { g, release, running, tracker, ref } = await runWithAHeld();
    try {
      const { data: before } = await g.user.rest.git.getRef({ owner: OWNER, repo: REPO, ref });
      await g.user.rest.git.deleteRef({ owner: OWNER, repo: REPO, ref });
      const said = await commentsUntil(g, tracker, /was deleted/);
      expect(said.find((c) => /was deleted/.test(c))).toContain(`\`forge/${running.runId}/_state\` of this run was deleted by @octocat`);
      const { data: after } = await g.user.rest.git.getRef({ owner: OWNER, repo: REPO, ref });
      expect(after.object.sha).toBe(before.object.sha);
      release();
      const j = await g.waitFor((x) => x.status === "completed");
      expect(j.tasks.map((t) => `${t.id} ${t.status} #${t.attempts}`)).toEqual(["a MERGED #1", "b MERGED #1"]);
    } finally {
      release();
    }
  });

  it("a state branch deleted while its webhook is lost is put back by the App's next journal write", T, async () => {
    const { g, release, running, tracker, ref } = await runWithAHeld();
    try {
      const dropped = () => g.sim.control.deliveries({ event: "push", status: "dropped" }).length;
      g.sim.control.faults({ webhookDropRate: 1 });
      await g.user.rest.git.deleteRef({ owner: OWNER, repo: REPO, ref });
      for (let i = 0; i < 100 && dropped() === 0; i++) await new Promise((r) => setTimeout(r, 20));
      g.sim.control.resetFaults();
      expect(dropped()).toBe(1);
      await expect(g.user.rest.git.getRef({ owner: OWNER, repo: REPO, ref })).rejects.toMatchObject({ status: 404 });
      // a's agent finishes: the App's write of that finds the branch gone and puts it back first.
      release();
      const j = await g.waitFor((x) => x.status === "completed");
      expect(j.tasks.map((t) => `${t.id} ${t.status} #${t.attempts}`)).toEqual(["a MERGED #1", "b MERGED #1"]);
      const said = await commentsUntil(g, tracker, /was deleted/);
      expect(said.find((c) => /was deleted/.test(c))).toContain(`\`forge/${running.runId}/_state\` of this run was deleted. Forge keeps`);
      // Nothing recorded was lost: the journal's events run on from the deleted branch's without a gap.
      const state = await g.app.forge.runtimes.get(FULL)!.engine.state(j.runId);
      const seqs = state!.state.events.tail.map((e) => e.seq);
      expect(seqs).toEqual(seqs.map((_, i) => seqs[0]! + i));
      expect(seqs[0]).toBe(1);
    } finally {
      release();
    }
  });
});

describe("Forge App flows: silent jobs, lost runners, plan checks, usage limits", () => {
  it("a dispatch whose job never starts goes STALE on the reconciler's tick and is retried", T, async () => {
    h = await startHarness((id, attempt): Script => (attempt === 1 ? { kind: "never_start" } : { kind: "success" }));
    await h.pushFiles(planFiles("mini", { a: [] }), "Add plan");
    await h.waitFor((x) => task(x, "a").status === "RUNNING");
    await h.app.forge.idle();
    await h.advance(16 * 60_000);
    await h.app.forge.tick();
    await h.advance(60_000);
    await h.app.forge.tick();
    const done = await h.waitFor((x) => x.status === "completed");
    expect(task(done, "a").attempts).toBe(2);
    expect(h.decisions.some((d) => d.d.events.some((e) => e.type === "task.stale"))).toBe(true);
  });

  it("a runner killed mid-job: its job ends with a step unfinished, the attempt goes STALE (not FAILED) and is retried", T, async () => {
    h = await startHarness((_id, attempt): Script => (attempt === 1 ? { kind: "killed" } : { kind: "success" }), {
      config: "retry_backoff: { base_seconds: 0, max_seconds: 0 }\n",
    });
    await h.pushFiles(planFiles("mini", { a: [] }), "Add plan");
    const done = await h.waitFor((x) => x.status === "completed");
    expect(task(done, "a")).toMatchObject({ status: "MERGED", attempts: 2, retries: 1 });
    const events = h.decisions.flatMap((d) => d.d.events).filter((e) => e.taskId === "a");
    expect(events.some((e) => e.type === "task.stale")).toBe(true);
    expect(events.some((e) => e.type === "task.failed")).toBe(false);
    expect(h.runner.dispatched.filter((d) => d.endsWith("/a/1"))).toHaveLength(1);
    // Attempt 1's verdict says the job timed out (its runner went away), with a Retry button — on the
    // head it left: the commit its branch was cut at (it pushed nothing), which attempt 2 then resumed from.
    expect(task(done, "a").attempt).toMatchObject({ branch: branchOfRun(done.runId, "a", 1), resumed: { reason: "lost", fromAttempt: 1 } });
    const { data: checks } = await h.user.rest.checks.listForRef({ owner: OWNER, repo: REPO, ref: done.planCommit });
    expect(checks.check_runs.find((c) => c.name === "forge · a" && c.external_id === `${done.runId}/a/1`)).toMatchObject({
      conclusion: "timed_out",
    });
  });

  it(
    "a job that ends without a result fails its attempt at the step that failed, and keeps the job's page (the tracker links it), which the local GitHub serves as its log",
    T,
    async () => {
      h = await startHarness((_id, attempt): Script => (attempt === 1 ? { kind: "lost" } : { kind: "success" }), {
        config: "retry_backoff: { base_seconds: 0, max_seconds: 0 }\n",
      });
      await h.pushFiles(planFiles("mini", { a: [] }), "Add plan");
      const retried = await h.waitFor((x) => task(x, "a").attempts === 2);
      const url = task(retried, "a").lastErrorLog!;
      expect(task(retried, "a").lastError).toBe('the job ended (failure) at the step "Run Forge" without a result');
      expect(url).toMatch(new RegExp(`^${h.sim.url}/${OWNER}/${REPO}/actions/runs/\\d+/job/\\d+$`));
      const page = await fetch(url);
      expect(page.status).toBe(200);
      const log = await page.text();
      expect(log).toMatch(/== job agent \(completed, failure\)\n {3}failure {2}Run Forge\n/);
      expect(log).toContain("the scripted runner's step failed before any result");
      await h.waitFor((x) => x.status === "completed");
    },
  );

  it("a PR that changes a plan gets a `forge · plan` check run with annotations on the lines at fault", T, async () => {
    h = await startHarness(() => ({ kind: "success" }));
    const files = planFiles("broken", { a: ["b"], b: ["a"] });
    const { data: main } = await h.user.rest.git.getRef({ owner: OWNER, repo: REPO, ref: "heads/main" });
    const { data: parent } = await h.user.rest.git.getCommit({ owner: OWNER, repo: REPO, commit_sha: main.object.sha });
    const { data: tree } = await h.user.rest.git.createTree({
      owner: OWNER,
      repo: REPO,
      base_tree: parent.tree.sha,
      tree: Object.entries(files).map(([path, content]) => ({ path, mode: "100644" as const, type: "blob" as const, content })),
    });
    const { data: commit } = await h.user.rest.git.createCommit({
      owner: OWNER,
      repo: REPO,
      message: "A plan with a cycle",
      tree: tree.sha,
      parents: [main.object.sha],
    });
    await h.user.rest.git.createRef({ owner: OWNER, repo: REPO, ref: "refs/heads/plan-broken", sha: commit.sha });
    await h.user.rest.pulls.create({ owner: OWNER, repo: REPO, head: "plan-broken", base: "main", title: "Add a plan" });
    let run: { conclusion: string | null; output: { title: string | null; summary: string | null; annotations_count: number } } | undefined;
    for (let i = 0; i < 100 && !run; i++) {
      await h.app.forge.idle();
      const { data } = await h.user.rest.checks.listForRef({ owner: OWNER, repo: REPO, ref: commit.sha });
      run = data.check_runs.find((c) => c.name === "forge · plan");
      if (!run) await new Promise((r) => setTimeout(r, 100));
    }
    expect(run!.conclusion).toBe("failure");
    expect(run!.output.summary).toMatch(/cycle/);
    expect(run!.output.annotations_count).toBeGreaterThan(0);
    // Nothing started: the plan never reached the default branch.
    expect(h.runner.dispatched).toEqual([]);
  });

  it("a model usage limit pauses dispatching until the reset and is not counted as a failure", T, async () => {
    h = await startHarness((id, attempt): Script =>
      id === "a" && attempt === 1 ? { kind: "rate_limited", untilMs: 30 * 60_000 } : { kind: "success" },
    );
    await h.pushFiles(planFiles("mini", { a: [], b: [] }), "Add plan");
    const paused = await h.waitFor((x) => x.pause.usageLimitUntil !== undefined && task(x, "a").status === "PENDING");
    expect(task(paused, "a")).toMatchObject({ retries: 0, attempts: 1 });
    await h.app.forge.idle();
    await h.app.forge.tick();
    expect(h.runner.dispatched.filter((d) => d.includes("/a/"))).toHaveLength(1);
    await h.advance(31 * 60_000);
    await h.app.forge.tick();
    const done = await h.waitFor((x) => x.status === "completed");
    expect(task(done, "a")).toMatchObject({ attempts: 2, retries: 0 });
    expect(
      h.decisions.some((d) => d.d.events.some((e) => e.type === "run.resumed" && (e.data as { reason: string }).reason === "usage_limit")),
    ).toBe(true);
  });
});
