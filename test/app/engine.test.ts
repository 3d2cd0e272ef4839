/**
 * The engine's batching: facts that arrive while a run is busy are decided together — one
 * decision, one journal write — and each caller hears only its own inputs' rejections.
 */
import { describe, expect, it } from "vitest";
import { Engine } from "../../src/app/engine.js";
import type { StoredRun } from "../../src/app/run-store.js";
import { JOURNAL_FILE, stateBranch } from "../../src/core/layout.js";
import type { GitHubPort } from "../../src/github/port.js";
import { ConflictError } from "../../src/github/port.js";
import { RUN_ID, storedRun } from "./handlers/fixtures.js";

/** A repository holding one run's journal; the first journal write waits for `release()`. */
function repository(state: StoredRun) {
  let content = JSON.stringify(state);
  let blob = 1;
  const writes: StoredRun[] = [];
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let entered!: () => void;
  const writing = new Promise<void>((r) => (entered = r));
  const calls: string[] = [];
  const port = {
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
      return async () => {
        calls.push(name);
        return name === "branchHead" ? "0000000000000000000000000000000000000001" : name === "createBranch" ? true : name === "dispatchWorkflow" ? { workflowRunId: 9 } : 1;
      };
    },
  }) as unknown as GitHubPort;
  return { port: proxy, writes, release, writing, calls };
}

describe("Engine batching", () => {
  it("facts that arrive while the run is busy are decided in one batch with one journal write, each caller getting its own rejections", async () => {
    const repo = repository(storedRun({ a: [], b: [] }));
    const engine = new Engine({ port: repo.port });

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
    expect(r2.rejections).toEqual([{ input: "command", taskId: "a", reason: "a is RUNNING; only a FAILED or STALE task can be retried", leaf: 0 }]);
    expect(r3.rejections).toEqual([]);
    expect(r4.rejections).toEqual([]);
    expect(repo.writes[1]!.journal.tasks.find((t) => t.id === "b")!.lastHeartbeat).toBeDefined();
  });

  it("a fact that arrives once the batch has been taken waits for the next turn", async () => {
    const repo = repository(storedRun({ a: [] }));
    const engine = new Engine({ port: repo.port });
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
