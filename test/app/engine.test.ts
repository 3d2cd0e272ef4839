/**
 * The engine's batching: facts that arrive while a run is busy are decided together — one
 * decision, one journal write — and each caller hears only its own inputs' rejections.
 */
import { describe, expect, it, vi } from "vitest";
import { Engine } from "../../src/app/engine/index.js";
import { TestClock } from "../helpers/clock.js";
import type { StoredRun } from "../../src/app/run-store.js";
import { JOURNAL_FILE, stateBranch } from "../../src/core/layout.js";
import type { GitHubPort } from "../../src/github/port.js";
import { ConflictError } from "../../src/github/port.js";
import type { Effect } from "../../src/core/effects.js";
import { updateTracker } from "../../src/core/decide/effects.js";
import { TRACKER_DEBOUNCE_MAX_MS } from "../../src/app/effects/index.js";
import {
  finishedReady,
  INTEGRATION_SHA,
  JOURNAL_KEY,
  MERGE,
  NOW,
  openTaskPull,
  ownLeases,
  RECORD,
  REPOSITORY_ID,
  RUN_ID,
  sealed,
  storedRun,
} from "./handlers/fixtures.js";

/** A repository holding one run's journal; the first journal write waits for `release()`. */
function repository(state: StoredRun) {
  let content = sealed(state);
  let blob = 1;
  const writes: StoredRun[] = [];
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let entered!: () => void;
  const writing = new Promise<void>((r) => (entered = r));
  const calls: string[] = [];
  const port = {
    async repositoryId() {
      return REPOSITORY_ID;
    },
    async readFile(path: string, ref: string) {
      if (path !== JOURNAL_FILE || ref !== stateBranch(RUN_ID)) return null;
      return { content, blobSha: `blob-${blob}` };
    },
    async writeFile(_branch: string, path: string, text: string, _message: string, expected?: string) {
      if (path !== JOURNAL_FILE) throw new Error(`unexpected write of ${path}`);
      if (writes.length === 0) {
        entered();
        await gate;
      }
      if (expected !== `blob-${blob}`) throw new ConflictError("repos.createOrUpdateFileContents");
      content = text;
      blob++;
      writes.push(JSON.parse(text) as StoredRun);
      return { blobSha: `blob-${blob}`, commitSha: `commit-${blob}` };
    },
  };
  // Effects the decisions ask for answer plainly; the test is about the journal.
  const proxy = new Proxy(port, {
    get(target, name: string) {
      if (name in target) return target[name as keyof typeof target];
      if (name === "then") return undefined;
      // The web root links are written under (a port's `webUrl`).
      if (name === "webUrl") return "https://github.com";
      return async () => {
        calls.push(name);
        return name === "branchHead"
          ? "0000000000000000000000000000000000000001"
          : name === "createBranch"
            ? true
            : name === "dispatchWorkflow"
              ? { workflowRunId: 9 }
              : 1;
      };
    },
  }) as unknown as GitHubPort;
  return { port: proxy, writes, release, writing, calls };
}

/**
 * A port holding one run's journal (compare-and-swap on its blob) and answering `calls` as given;
 * any other call answers `fallback(name)`. Journal writes are kept in `writes`.
 */
function journalPort(state: StoredRun, calls: Record<string, (...args: never[]) => Promise<unknown>>, fallback: (name: string) => unknown) {
  let content = sealed(state);
  let blob = 1;
  const writes: StoredRun[] = [];
  const target = {
    async repositoryId() {
      return REPOSITORY_ID;
    },
    async readFile(path: string) {
      return path === JOURNAL_FILE ? { content, blobSha: `blob-${blob}` } : null;
    },
    async writeFile(_b: string, _p: string, text: string, _m: string, expected?: string) {
      if (expected !== `blob-${blob}`) throw new ConflictError("repos.createOrUpdateFileContents");
      content = text;
      blob++;
      writes.push(JSON.parse(text) as StoredRun);
      return { blobSha: `blob-${blob}`, commitSha: `commit-${blob}` };
    },
    ...calls,
  };
  const port = new Proxy(target, {
    get(t, name: string) {
      if (name in t) return t[name as keyof typeof t];
      if (name === "then") return undefined;
      // The web root links are written under (a port's `webUrl`).
      if (name === "webUrl") return "https://github.com";
      return async () => fallback(name);
    },
  }) as unknown as GitHubPort;
  return { port, writes };
}

describe("Engine batching", () => {
  it("facts that arrive while the run is busy are decided in one batch with one journal write, each caller getting its own rejections", async () => {
    const repo = repository(storedRun({ a: [], b: [] }));
    const engine = new Engine({ port: repo.port, journalKey: JOURNAL_KEY });

    // The first fact takes the run's turn and holds it in its journal write.
    const first = engine.apply(RUN_ID, [{ kind: "command", command: "pause", actor: "octocat" }]);
    await repo.writing;
    // Three more arrive meanwhile: a rejected retry, a heartbeat, a resume.
    const retry = engine.apply(RUN_ID, [{ kind: "command", command: "retry", actor: "octocat", taskId: "a" }]);
    const beat = engine.apply(RUN_ID, [{ kind: "agent.heartbeat", taskId: "b", attempt: 1 }]);
    const resume = engine.apply(RUN_ID, [{ kind: "command", command: "resume", actor: "octocat" }]);
    repo.release();

    const [r1, r2, r3, r4] = await Promise.all([first, retry, beat, resume]);
    // Two writes in all: the pause, then the batch of three.
    expect(repo.writes.map((w) => w.journal.pause.manual)).toEqual([true, false]);
    expect(r2.decisions).toBe(r4.decisions);
    expect(r3.decisions).toBe(r4.decisions);
    expect(r1.rejections).toEqual([]);
    expect(r2.rejections).toEqual([
      { input: "command", taskId: "a", reason: "a is RUNNING; only a FAILED or STALE task can be retried", leaf: 0 },
    ]);
    expect(r3.rejections).toEqual([]);
    expect(r4.rejections).toEqual([]);
    expect(repo.writes[1]!.journal.tasks.find((t) => t.id === "b")!.attempt?.revision.lastHeartbeat).toBeDefined();
  });

  it("a fact that arrives once the batch has been taken waits for the next turn", async () => {
    const repo = repository(storedRun({ a: [] }));
    const engine = new Engine({ port: repo.port, journalKey: JOURNAL_KEY });
    const first = engine.apply(RUN_ID, [{ kind: "command", command: "pause", actor: "octocat" }]);
    await repo.writing;
    const again = engine.apply(RUN_ID, [{ kind: "command", command: "pause", actor: "octocat" }]);
    repo.release();
    const [r1, r2] = await Promise.all([first, again]);
    expect(r1.rejections).toEqual([]);
    expect(r2.rejections).toEqual([{ input: "command", reason: "the run is already paused", leaf: 0 }]);
    expect(repo.writes).toHaveLength(1);
  });
});

/**
 * Two App processes share a run: one carries out a round of effects while the other writes the
 * journal, so the round's acknowledgement loses its compare-and-swap and is decided again on the
 * other's journal. Found by chaos (g).
 */
describe("a round of effects acknowledged on a journal another replica moved", () => {
  const ME = "replica-1";
  const ready = finishedReady();
  const verdict = (summary: string): Effect => ({
    key: "check:a:1",
    kind: "UpsertCheckRun",
    taskId: "a",
    attempt: 1,
    status: "MERGE_READY",
    summary,
  });
  const merge: Effect = {
    key: "merge:a:1",
    kind: "MergePullRequest",
    taskId: "a",
    attempt: 1,
    branch: "forge/mini-c0ffee0/a/1",
    prNumber: 7,
  };

  /** The stored run with a's verdict and merge pending, leased to this process; `theirs` is what the other replica writes meanwhile. */
  function world(theirsVerdict: Effect, comments?: { mine: Effect; theirs: Effect }) {
    const mine = storedRun({ a: [], b: [] }, { steps: [[ready, { kind: "pr.opened", taskId: "a", attempt: 1, number: 7 }]] });
    mine.journal.outbox = [verdict("a: ready to merge"), merge, ...(comments ? [comments.mine] : [])];
    mine.leases = ownLeases(mine, ME);
    // The other replica paused the run meanwhile (its own fact) and holds a's verdict as `theirsVerdict`.
    const theirs = structuredClone(mine);
    theirs.journal.pause = { ...theirs.journal.pause, manual: true };
    theirs.journal.outbox = [theirsVerdict, merge, ...(comments ? [comments.theirs] : [])];
    let stored = { content: sealed(mine), blob: 1 };
    const writes: StoredRun[] = [];
    const port = new Proxy(
      {
        async repositoryId() {
          return REPOSITORY_ID;
        },
        async readFile(path: string) {
          return path === JOURNAL_FILE ? { content: stored.content, blobSha: `blob-${stored.blob}` } : null;
        },
        async writeFile(_b: string, path: string, text: string, _m: string, expected?: string) {
          if (path !== JOURNAL_FILE) throw new Error(`unexpected write of ${path}`);
          if (expected !== `blob-${stored.blob}`) throw new ConflictError("repos.createOrUpdateFileContents");
          stored = { content: text, blob: stored.blob + 1 };
          writes.push(JSON.parse(text) as StoredRun);
          return { blobSha: `blob-${stored.blob}`, commitSha: `commit-${stored.blob}` };
        },
        async findCheckRun() {
          return null;
        },
        async createCheckRun() {
          return 55;
        },
        async getPullRequest(number: number) {
          return openTaskPull(number);
        },
        async listPullRequestFiles() {
          return ["src/a.ts"];
        },
        async getPullRequestWithFiles(number: number) {
          return { ...(await this.getPullRequest(number)), files: await this.listPullRequestFiles(), changeRequests: [] };
        },
        async mergePullRequest() {
          // While the merge runs, the other replica writes the journal.
          stored = { content: sealed(theirs), blob: stored.blob + 1 };
          return { kind: "merged", sha: "3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e" };
        },
      },
      {
        get(target, name: string) {
          if (name in target) return target[name as keyof typeof target];
          if (name === "then") return undefined;
          // The web root links are written under (a port's `webUrl`).
          if (name === "webUrl") return "https://github.com";
          return async () => null;
        },
      },
    ) as unknown as GitHubPort;
    return { engine: new Engine({ port, replicaId: ME, clock: new TestClock(NOW), journalKey: JOURNAL_KEY }), writes };
  }

  it("the ids its effects learned reach the journal: a check run made is never made again", async () => {
    const { engine, writes } = world(verdict("a: ready to merge"));
    await engine.flush(RUN_ID);
    await engine.idle(); // the effects run outside the turn; their outcomes come back as inputs
    const first = writes[0]!;
    expect(first.journal.pause.manual).toBe(true); // written over the other replica's journal
    expect(first.journal.tasks.find((t) => t.id === "a")!.status).toBe("MERGED");
    expect(first.facts.checkRuns).toEqual({ "a:1": 55 });
    // The merge asks for the MERGED verdict: it updates check run 55 rather than making one.
    expect(first.journal.outbox.find((e) => e.key === "check:a:1")).toMatchObject({ status: "MERGED" });
  });

  it("an acknowledgement removes only the effect that ran, not a newer one of the same key", async () => {
    const note = (body: string): Effect => ({ key: "note:a:1", kind: "PostComment", target: { on: "tracker" }, body });
    const { engine, writes } = world(verdict("a: ready to merge"), { mine: note("first words"), theirs: note("second words") });
    await engine.flush(RUN_ID);
    await engine.idle();
    const first = writes[0]!;
    expect(first.journal.tasks.find((t) => t.id === "a")!.status).toBe("MERGED");
    // The comment that ran was the first; the other replica's second one is still to be posted.
    expect(first.journal.outbox.find((e) => e.key === "note:a:1")).toMatchObject({ body: "second words" });
  });
});

/**
 * The run's turn only decides and persists: the outbox's effects are carried out outside it, and
 * their outcomes come back as inputs. A slow GitHub call never holds a webhook's decision, and an
 * effect under way is never started a second time.
 */
describe("effects outside the run's turn", () => {
  /** A run whose two dispatches are pending and leased here; every dispatch waits for `release()`. */
  function slowDispatches() {
    const state = storedRun({ a: [], b: [] });
    // Both attempts' dispatches decided and written, not yet carried out.
    state.journal.outbox = (["a", "b"] as const).map((id): Effect => ({
      key: `dispatch:${id}:1`,
      kind: "DispatchAgent",
      taskId: id,
      attempt: 1,
      branch: `forge/${RUN_ID}/${id}/1`,
      agentType: "2",
    }));
    for (const t of state.journal.tasks) delete t.attempt?.revision.workflowRunId;
    state.leases = ownLeases(state, "replica-1");
    const dispatched: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { port, writes } = journalPort(
      state,
      {
        async dispatchWorkflow(_w: string, ref: string) {
          const id = 100 + dispatched.push(ref);
          await gate;
          return { workflowRunId: id };
        },
        async branchHead() {
          return "0000000000000000000000000000000000000001";
        },
      },
      (name) => (name === "createBranch" ? true : name === "listWorkflowRuns" ? [] : 1),
    );
    const engine = new Engine({ port, replicaId: "replica-1", clock: new TestClock(NOW), journalKey: JOURNAL_KEY });
    return { engine, writes, dispatched, release };
  }

  it("a webhook's decision is written while the dispatches still wait on GitHub; their outcomes land afterwards", async () => {
    const { engine, writes, dispatched, release } = slowDispatches();
    await engine.flush(RUN_ID);
    // Both dispatches are at GitHub, waiting; the run's turn is free.
    await vi.waitFor(() => expect(dispatched).toHaveLength(2));
    expect(engine.busy).toBe(true);
    const paused = await engine.apply(RUN_ID, [{ kind: "command", command: "pause", actor: "octocat" }]);
    expect(paused.decisions[0]!.journal.pause.manual).toBe(true);
    expect(writes.at(-1)!.journal.pause.manual).toBe(true);
    // A second flush while they wait starts neither again.
    await engine.flush(RUN_ID);
    expect(dispatched).toHaveLength(2);
    release();
    await engine.idle();
    expect(engine.busy).toBe(false);
    expect(dispatched).toHaveLength(2);
    // Acknowledged (in memory until the next write, as acknowledgements are), each once, with its run id.
    const held = (await engine.state(RUN_ID))!.state.journal;
    expect(held.outbox.map((e) => e.key)).not.toContain("dispatch:a:1");
    expect(held.outbox.map((e) => e.key)).not.toContain("dispatch:b:1");
    expect(held.tasks.map((t) => t.attempt?.revision.workflowRunId).sort()).toEqual([101, 102]);
    expect(held.pause.manual).toBe(true);
  });
});

describe("the branch a task is cut from", () => {
  it("is read beside the journal write that decides the dispatch, not after it, and read once", async () => {
    const ready = finishedReady();
    const state = storedRun({ a: [], b: ["a"] }, { steps: [[ready, { kind: "pr.opened", taskId: "a", attempt: 1, number: 7 }]] });
    const repo = repository(state);
    const engine = new Engine({ port: repo.port, journalKey: JOURNAL_KEY });
    // a merged: b is ready; the decision to cut its branch and dispatch it is being written.
    const merged = engine.apply(RUN_ID, [{ kind: "pr.merged", taskId: "a", attempt: 1, number: 7, mergeSha: INTEGRATION_SHA }]);
    await repo.writing;
    await vi.waitFor(() => expect(repo.calls).toContain("branchHead"));
    // Nothing that changes GitHub goes before the write.
    expect(repo.calls).toEqual(["branchHead"]);
    expect(repo.writes).toHaveLength(0);
    repo.release();
    await merged;
    await engine.idle();
    expect(repo.writes[0]!.journal.outbox.map((e) => e.kind)).toContain("PrepareBranch");
    // The branch was cut from the head read beside the write; no second read.
    expect(repo.calls.filter((c) => c === "branchHead")).toHaveLength(1);
    expect(repo.calls.indexOf("createBranch")).toBeGreaterThan(0);
    expect(repo.calls).toContain("dispatchWorkflow");
  });
});

describe("the tracker redrawn while an older redraw is at GitHub", () => {
  it("keeps the newer redraw: the older one's acknowledgement does not take it out of the outbox", async () => {
    const state = storedRun({ a: [], b: [] }, { facts: { trackerIssue: 7 } });
    state.journal.outbox = [updateTracker(state.journal.seq)];
    state.leases = ownLeases(state, "replica-1");
    const titles: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const clock = new TestClock(NOW);
    const { port } = journalPort(
      state,
      {
        async updateIssue(_n: number, patch: { title: string }) {
          titles.push(patch.title);
          if (titles.length === 1) await gate;
        },
      },
      () => null,
    );
    const engine = new Engine({ port, replicaId: "replica-1", clock, journalKey: JOURNAL_KEY });
    await engine.flush(RUN_ID);
    await vi.waitFor(() => expect(titles).toHaveLength(1));
    // While the first redraw is at GitHub, a decision changes what the tracker shows.
    await engine.apply(RUN_ID, [{ kind: "command", command: "pause", actor: "octocat" }]);
    release();
    await engine.idle();
    const held = (await engine.state(RUN_ID))!.state.journal;
    const pending = held.outbox.filter((e) => e.kind === "UpdateTracker");
    expect(pending).toEqual([{ key: "tracker", kind: "UpdateTracker", seq: held.seq }]);
    // Once the debounce is over (a minute at the longest), the tracker is redrawn with what the pause changed.
    // The redraw put off is tried again by itself once the clock passes its time.
    await clock.advance(TRACKER_DEBOUNCE_MAX_MS + 1_000);
    await engine.idle();
    expect(titles).toHaveLength(2);
    expect((await engine.state(RUN_ID))!.state.journal.outbox.some((e) => e.kind === "UpdateTracker")).toBe(false);
    engine.stop();
  });
});

describe("a merge decided before a review that starts a revision", () => {
  it("is not carried out once the revision's turn took it out of the outbox while it was checking the PR", async () => {
    // a is MERGE_READY on PR #7: its merge is in the outbox, leased here, not yet carried out.
    const state = storedRun(
      { a: [] },
      { steps: [[finishedReady(), { kind: "pr.opened", taskId: "a", attempt: 1, number: 7 }]], pendingOutbox: true },
    );
    expect(state.journal.tasks[0]!.status).toBe("MERGE_READY");
    expect(state.journal.outbox.some((e) => e.kind === "MergePullRequest")).toBe(true);
    state.leases = ownLeases(state, "replica-1");
    const merged: number[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let reading!: () => void;
    const read = new Promise<void>((r) => (reading = r));
    const { port } = journalPort(
      state,
      {
        // The merge effect's read of the PR is slow (a loaded machine): the review lands meanwhile.
        async getPullRequestWithFiles(n: number) {
          reading();
          await gate;
          return { ...openTaskPull(n), files: ["src/a.ts"], changeRequests: [] };
        },
        async mergePullRequest(n: number) {
          merged.push(n);
          return { kind: "merged", sha: MERGE };
        },
      },
      (name) =>
        name === "ciChecks"
          ? { pending: false, running: false, missing: [], failing: [] }
          : name === "dispatchWorkflow"
            ? { workflowRunId: 9 }
            : null,
    );
    const engine = new Engine({ port, replicaId: "replica-1", clock: new TestClock(NOW), journalKey: JOURNAL_KEY });
    await engine.flush(RUN_ID);
    await read;
    // A person asks for changes on the verified head: a revision starts, on the same branch and PR.
    const reviewed = await engine.apply(RUN_ID, [
      { kind: "review.submitted", taskId: "a", attempt: 1, reviewId: 11, actor: "octocat", state: "changes_requested", headSha: RECORD },
    ]);
    const revising = reviewed.decisions[0]!.journal;
    expect(revising.tasks[0]!.status).toBe("RUNNING");
    expect(revising.outbox.some((e) => e.kind === "MergePullRequest")).toBe(false);
    release();
    await engine.idle();
    // The PR the revision answers on stays open: merged now, the revision's job would find no open
    // PR for the branch and open another one, its replies going to the wrong PR.
    expect(merged).toEqual([]);
    const held = (await engine.state(RUN_ID))!.state.journal;
    expect(held.tasks[0]!.status).toBe("RUNNING");
    expect(held.tasks[0]!.attempt?.prNumber).toBe(7);
    engine.stop();
  });
});
