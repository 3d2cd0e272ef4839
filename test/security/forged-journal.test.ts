/**
 * Attack: anything with `contents: write` — every agent job's own token, every collaborator — can
 * rewrite a run's journal on `forge/<runId>/_state`. Before the seal, the App re-read a forged
 * journal after its next lost compare-and-swap and carried out its outbox with the installation
 * token: a server-side merge of any branch into main was reproduced that way.
 *
 * Now the App seals every journal it writes (HMAC keyed by a secret derived from its private key)
 * and refuses any other: the run freezes, nothing of the forged outbox runs, the tracker says what
 * happened and which commit to reset the branch to — and after that reset the run goes on.
 * Behind the seal, every pending effect is checked against what the App itself would produce.
 */
import { createHmac } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { journalKeyFromSecret, sealJournal, unsealJournal } from "../../src/app/journal-seal.js";
import { JournalRefusedError, RunStore, type StoredRun } from "../../src/app/run-store.js";
import type { Journal } from "../../src/core/journal.js";
import { JOURNAL_FILE, LABELS } from "../../src/core/layout.js";
import { outboxProblems } from "../../src/core/outbox-check.js";
import type { GitHubPort } from "../../src/github/port.js";
import { planFiles } from "../helpers/plan-files.js";
import { OWNER, REPO, startHarness, type Harness } from "../app/helpers.js";
import { storedRun, RUN_ID } from "../app/handlers/fixtures.js";
import type { Script } from "../app/scripted-runner.js";

let h: Harness | undefined;
afterEach(async () => {
  const done = h;
  h = undefined;
  await done?.close();
}, 60_000);

const task = (j: Journal, id: string) => j.tasks.find((t) => t.id === id)!;

async function until<T>(probe: () => Promise<T | undefined>, what: string, tries = 150): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("a forged journal does not steer the App", () => {
  it(
    "a journal rewritten by a collaborator is refused: nothing of its outbox runs, the tracker says how to recover, and the run goes on after the reset",
    { timeout: 120_000 },
    async () => {
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      h = await startHarness((id): Script => ({ kind: "success", ...(id === "a" ? { gate } : {}) }), {
        config: "retry_backoff: { base_seconds: 0, max_seconds: 0 }\n",
      });
      const g = h;
      await g.pushFiles(planFiles("mini", { a: [], b: ["a"] }), "Add plan");
      const running = await g.waitFor((x) => task(x, "a").status === "RUNNING");
      const runId = running.runId;
      const tracker = await until(async () => {
        await g.app.forge.idle();
        const { data } = await g.user.rest.issues.listForRepo({ owner: OWNER, repo: REPO, state: "all", labels: LABELS.tracker });
        return data[0]?.number;
      }, "the tracker");
      await g.app.forge.idle();

      // The attacker's branch, and main as it is.
      const { data: mainRef } = await g.user.rest.git.getRef({ owner: OWNER, repo: REPO, ref: "heads/main" });
      const mainBefore = mainRef.object.sha;
      await g.user.rest.git.createRef({ owner: OWNER, repo: REPO, ref: "refs/heads/evil", sha: mainBefore });
      await g.user.rest.repos.createOrUpdateFileContents({
        owner: OWNER,
        repo: REPO,
        path: "backdoor.js",
        branch: "evil",
        message: "backdoor",
        content: Buffer.from("steal()\n").toString("base64"),
      });

      // The forged journal: the real one with an effect that merges `evil` into main — unsealed, since
      // the attacker has no key; the seal field copied from the real journal does not match.
      const stateRef = `forge/${runId}/_state`;
      const { data: file } = await g.user.rest.repos.getContent({ owner: OWNER, repo: REPO, path: JOURNAL_FILE, ref: stateRef });
      const real = JSON.parse(Buffer.from((file as { content: string }).content, "base64").toString("utf8")) as StoredRun & {
        seal: string;
      };
      const { data: stateBefore } = await g.user.rest.git.getRef({ owner: OWNER, repo: REPO, ref: `heads/${stateRef}` });
      const forged = {
        ...real,
        journal: {
          ...real.journal,
          outbox: [
            ...real.journal.outbox,
            { key: "branch:a:9", kind: "PrepareBranch", taskId: "a", attempt: 9, branch: "main", from: "evil", merge: ["evil"] },
          ],
        },
      };
      await g.user.rest.repos.createOrUpdateFileContents({
        owner: OWNER,
        repo: REPO,
        path: JOURNAL_FILE,
        branch: stateRef,
        message: "forge: journal",
        sha: (file as { sha: string }).sha,
        content: Buffer.from(JSON.stringify(forged) + "\n").toString("base64"),
      });

      // The agent finishes: the App's next write loses its compare-and-swap and reads the forged journal.
      release();
      const said = await until(async () => {
        await g.app.forge.idle();
        const { data } = await g.user.rest.issues.listComments({ owner: OWNER, repo: REPO, issue_number: tracker });
        return data.map((c) => c.body ?? "").find((b) => b.includes("Forge froze this run"));
      }, "the tracker's word on the refused journal");
      await g.app.forge.tick();
      await g.app.forge.idle();

      // Nothing happened: main did not move, no backdoor, the forged journal was not acted on.
      const { data: mainAfter } = await g.user.rest.git.getRef({ owner: OWNER, repo: REPO, ref: "heads/main" });
      expect(mainAfter.object.sha).toBe(mainBefore);
      await expect(g.user.rest.repos.getContent({ owner: OWNER, repo: REPO, path: "backdoor.js", ref: "main" })).rejects.toMatchObject({
        status: 404,
      });
      expect(said).toContain("seal does not match");
      // The tracker names the last journal the App wrote, and how to put it back.
      expect(said).toContain(`git push --force origin ${stateBefore.object.sha}:refs/heads/${stateRef}`);

      // The person resets the branch as told; the run picks up and completes.
      await g.user.rest.git.updateRef({ owner: OWNER, repo: REPO, ref: `heads/${stateRef}`, sha: stateBefore.object.sha, force: true });
      await g.app.forge.tick();
      const done = await g.waitFor((x) => x.runId === runId && x.status === "completed", 60_000);
      expect(done.tasks.map((t) => t.status)).toEqual(["MERGED", "MERGED"]);
      const { data: mainEnd } = await g.user.rest.git.getRef({ owner: OWNER, repo: REPO, ref: "heads/main" });
      await expect(
        g.user.rest.repos.getContent({ owner: OWNER, repo: REPO, path: "backdoor.js", ref: mainEnd.object.sha }),
      ).rejects.toMatchObject({ status: 404 });
    },
  );
});

describe("behind the seal: the outbox holds only what the App would produce", () => {
  const KEY = journalKeyFromSecret("a test key of at least thirty-two characters");
  const base = storedRun({ a: [], b: ["a"] });
  const withEffect = (effect: unknown): StoredRun => ({
    ...base,
    journal: { ...base.journal, outbox: [effect as StoredRun["journal"]["outbox"][number]] },
  });
  const HERE = { repositoryId: 77, runId: RUN_ID };
  const portOf = (state: object) =>
    ({
      repositoryId: async () => 77,
      readFile: async () => ({ content: sealJournal(KEY, state, HERE), blobSha: "b" }),
    }) as unknown as GitHubPort;

  it.each([
    [
      "a branch cut into main",
      { key: "k", kind: "PrepareBranch", taskId: "a", attempt: 1, branch: "main", from: base.journal.integrationBranch, merge: [] },
    ],
    [
      "another branch merged into a task's",
      {
        key: "k",
        kind: "PrepareBranch",
        taskId: "a",
        attempt: 1,
        branch: `forge/${RUN_ID}/a/1`,
        from: base.journal.integrationBranch,
        merge: ["evil"],
      },
    ],
    [
      "a task branch cut from elsewhere",
      { key: "k", kind: "PrepareBranch", taskId: "a", attempt: 1, branch: `forge/${RUN_ID}/a/1`, from: "evil", merge: [] },
    ],
    ["a merge of another branch's PR", { key: "k", kind: "MergePullRequest", taskId: "a", attempt: 1, branch: "evil", prNumber: 1 }],
    ["a dispatch on main", { key: "k", kind: "DispatchAgent", taskId: "a", attempt: 1, branch: "main", agentType: "2" }],
    ["a clean-up of main", { key: "k", kind: "CleanupBranches", branches: ["main"] }],
    ["a clean-up of another run's branch", { key: "k", kind: "CleanupBranches", branches: ["forge/other-run/a/1"] }],
    ["a follow-up on main", { key: "k", kind: "SpawnFollowup", followupId: "_followup-1", sourceTaskId: "a", text: "x", branch: "main" }],
  ])("refused: %s", async (_what, effect) => {
    const state = withEffect(effect);
    expect(outboxProblems(state.journal, state.config).length).toBeGreaterThan(0);
    await expect(new RunStore(portOf(state), KEY).load(RUN_ID)).rejects.toBeInstanceOf(JournalRefusedError);
  });

  it("another workflow than a workflow file name is refused", async () => {
    const state = { ...base, config: { ...base.config, workflow: "../../evil.yml" } };
    await expect(new RunStore(portOf(state), KEY).load(RUN_ID)).rejects.toThrow(/not a workflow file name/);
  });

  it("what the App itself produces loads", async () => {
    expect(outboxProblems(base.journal, base.config)).toEqual([]);
    const loaded = await new RunStore(portOf(base), KEY).load(RUN_ID);
    expect(loaded?.state.journal.runId).toBe(RUN_ID);
  });

  it("a seal made with another key, and a journal without one, are refused", async () => {
    const other = journalKeyFromSecret("another key of at least thirty-two characters!");
    const port = {
      repositoryId: async () => 77,
      readFile: async () => ({ content: sealJournal(other, base, HERE), blobSha: "b" }),
    } as unknown as GitHubPort;
    await expect(new RunStore(port, KEY).load(RUN_ID)).rejects.toThrow(/seal does not match/);
    const bare = {
      repositoryId: async () => 77,
      readFile: async () => ({ content: JSON.stringify(base), blobSha: "b" }),
    } as unknown as GitHubPort;
    await expect(new RunStore(bare, KEY).load(RUN_ID)).rejects.toThrow(/carries no seal/);
    // A version 1 seal (the content alone, any repository) is refused, saying what it is.
    const body = JSON.stringify(base);
    const v1 = `${body.slice(0, -1)},"seal":"hmac-sha256:${createHmac("sha256", KEY).update(body).digest("hex")}"}`;
    const old = { repositoryId: async () => 77, readFile: async () => ({ content: v1, blobSha: "b" }) } as unknown as GitHubPort;
    await expect(new RunStore(old, KEY).load(RUN_ID)).rejects.toThrow(/carries a version 1 seal, which an earlier Forge wrote/);
    // One changed byte anywhere breaks the seal.
    const text = sealJournal(KEY, base, HERE).replace(`"status":"running"`, `"status":"paused"`);
    expect(unsealJournal(KEY, text, HERE).ok).toBe(false);
  });
});
