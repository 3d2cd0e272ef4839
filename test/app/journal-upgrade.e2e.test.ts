/**
 * A run in progress under journal version 1 (test/fixtures/journal-v1: written by the App of commit
 * d2a9284 on the local GitHub) is resumed by today's App and completes. The fixture's repository is
 * loaded ref for ref into a local GitHub, its issues and pull requests made again under the same
 * numbers and its check runs made again (their new ids replace the old in the run's facts, the
 * adapter's record of GitHub's ids); its journal, untouched, is sealed with this App's key for this
 * repository. The three jobs that were at work when the App was upgraded finish as jobs do — a work
 * commit and a record commit on their branches — and the App takes their results from the migrated
 * journal, dispatches what is left, and completes the run.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { Octokit } from "@octokit/rest";
import { stringify } from "yaml";
import { afterEach, describe, expect, it } from "vitest";
import { journalKeyFrom, sealJournal, unsealJournal } from "../../src/app/journal-seal.js";
import type { Journal } from "../../src/core/journal.js";
import { JOURNAL_FILE, resultPath, stateBranch, TRAILERS, walkthroughPath } from "../../src/core/layout.js";
import { TestClock } from "../helpers/clock.js";
import { OWNER, REPO, startHarness, type Harness } from "./helpers.js";
import type { Script } from "./scripted-runner.js";

const run = promisify(execFile);
const FIXTURES = path.resolve(import.meta.dirname, "../fixtures/journal-v1");

let h: Harness | undefined;
afterEach(async () => {
  const done = h;
  h = undefined;
  await done?.close();
}, 60_000);

interface Fixture {
  stored: {
    version: number;
    journal: { runId: string; version: number; tasks: { id: string; status: string }[] };
    facts: { checkRuns: Record<string, number>; anchorCheckRunId?: number; trackerIssue?: number };
    events: { tail: { timestamp: string }[] };
  };
  github: {
    runId: string;
    issues: {
      number: number;
      kind: "issue" | "pull";
      title: string;
      body: string;
      state: string;
      merged?: boolean;
      head?: string;
      base?: string;
      labels?: { name: string }[];
    }[];
    checkRuns: {
      id: number;
      name: string;
      headSha: string;
      externalId: string | null;
      conclusion: string | null;
      title: string | null;
      summary: string | null;
    }[];
  };
  bundle: string;
}

function fixture(name: string): Fixture {
  const dir = path.join(FIXTURES, name);
  return {
    stored: JSON.parse(readFileSync(path.join(dir, "stored-run.json"), "utf8")) as Fixture["stored"],
    github: JSON.parse(readFileSync(path.join(dir, "github.json"), "utf8")) as Fixture["github"],
    bundle: path.join(dir, "repo.bundle"),
  };
}

/**
 * The fixture's world in the harness's repository: every ref of the bundle (written into the bare
 * repository, so no push reaches the App), the issues and pull requests under their numbers, the
 * check runs; then the stored run, its check run ids replaced, sealed for this App and repository.
 * The App hears nothing of it meanwhile (a check run's webhook would have it read the journal
 * before it is sealed here); it finds the run at its next sweep.
 */
async function load(g: Harness, fx: Fixture): Promise<void> {
  g.sim.control.setAppWebhookUrl(g.appId, "http://127.0.0.1:9/unused");
  const gitDir = g.sim.core.state.repoByName(OWNER, REPO)!.gitDir;
  await run("git", ["-C", gitDir, "fetch", "--quiet", "--force", fx.bundle, "refs/heads/*:refs/heads/*"]);
  const app = new Octokit({ baseUrl: g.sim.apiUrl, auth: g.sim.control.installationToken(g.installationId) });
  for (const i of fx.github.issues) {
    let number: number;
    if (i.kind === "pull" && !i.merged) {
      ({
        data: { number },
      } = await g.user.rest.pulls.create({ owner: OWNER, repo: REPO, head: i.head!, base: i.base!, title: i.title, body: i.body }));
    } else {
      // The tracker is the App's; a merged pull request cannot be opened again (its commits are merged): an issue keeps its number.
      const labels = (i.labels ?? []).map((l) => l.name);
      ({
        data: { number },
      } = await app.rest.issues.create({ owner: OWNER, repo: REPO, title: i.title, body: i.body, labels }));
      if (i.state === "closed") await app.rest.issues.update({ owner: OWNER, repo: REPO, issue_number: number, state: "closed" });
    }
    expect(number).toBe(i.number);
  }
  const ids = new Map<number, number>();
  for (const c of fx.github.checkRuns) {
    const { data } = await app.rest.checks.create({
      owner: OWNER,
      repo: REPO,
      name: c.name,
      head_sha: c.headSha,
      ...(c.externalId ? { external_id: c.externalId } : {}),
      status: "completed",
      conclusion: (c.conclusion ?? "neutral") as "success",
      output: { title: c.title ?? c.name, summary: c.summary ?? "" },
    });
    ids.set(c.id, data.id);
  }
  const facts = fx.stored.facts;
  const stored = {
    ...fx.stored,
    facts: {
      ...facts,
      checkRuns: Object.fromEntries(Object.entries(facts.checkRuns).map(([k, id]) => [k, ids.get(id)!])),
      ...(facts.anchorCheckRunId !== undefined ? { anchorCheckRunId: ids.get(facts.anchorCheckRunId)! } : {}),
    },
  };
  const { data: repo } = await app.rest.repos.get({ owner: OWNER, repo: REPO });
  const runId = fx.github.runId;
  const text = sealJournal(journalKeyFrom(g.privateKey), stored, { repositoryId: repo.id, runId });
  const { data: old } = await app.rest.repos.getContent({ owner: OWNER, repo: REPO, path: JOURNAL_FILE, ref: stateBranch(runId) });
  await app.rest.repos.createOrUpdateFileContents({
    owner: OWNER,
    repo: REPO,
    path: JOURNAL_FILE,
    branch: stateBranch(runId),
    message: "forge: the run's journal, sealed for this repository",
    content: Buffer.from(text).toString("base64"),
    sha: (old as { sha: string }).sha,
  });
  g.sim.control.setAppWebhookUrl(g.appId, g.app.webhookUrl);
}

/**
 * A job that was at work while the App was upgraded finishes as the Forge action does: its work
 * commit, the draft PR (when the attempt has none), then the record commit with Forge's trailers.
 */
async function finishJob(g: Harness, runId: string, taskId: string, attempt: number, iteration: number): Promise<void> {
  const gh = g.user;
  const branch = `forge/${runId}/${taskId}/${attempt}`;
  const { data: ref } = await gh.rest.git.getRef({ owner: OWNER, repo: REPO, ref: `heads/${branch}` });
  const commit = async (parent: string, files: Record<string, string>, message: string) => {
    const { data: p } = await gh.rest.git.getCommit({ owner: OWNER, repo: REPO, commit_sha: parent });
    const { data: tree } = await gh.rest.git.createTree({
      owner: OWNER,
      repo: REPO,
      base_tree: p.tree.sha,
      tree: Object.entries(files).map(([p, content]) => ({ path: p, mode: "100644" as const, type: "blob" as const, content })),
    });
    const { data: c } = await gh.rest.git.createCommit({ owner: OWNER, repo: REPO, message, tree: tree.sha, parents: [parent] });
    return c.sha;
  };
  const work = await commit(
    ref.object.sha,
    { [`src/${taskId}.ts`]: `export const ${taskId} = ${attempt};\nexport const ${taskId}_revision = ${iteration};\n` },
    `forge(${taskId}): work of attempt ${attempt}`,
  );
  await gh.rest.git.updateRef({ owner: OWNER, repo: REPO, ref: `heads/${branch}`, sha: work });
  const base = `forge/${runId}/_integration`;
  const open = (await gh.rest.pulls.list({ owner: OWNER, repo: REPO, head: `${OWNER}:${branch}`, state: "open" })).data[0];
  if (!open) await gh.rest.pulls.create({ owner: OWNER, repo: REPO, head: branch, base, title: `forge(${taskId}): attempt ${attempt}` });
  const now = new Date().toISOString();
  const fm = {
    task_id: taskId,
    run_id: runId,
    attempt,
    branch,
    base_ref: ref.object.sha,
    head_sha: work,
    status: "completed" as const,
    confidence: 0.8,
    time_spent_minutes: 1,
    files_changed: [{ path: `src/${taskId}.ts`, reason: "scripted" }],
    tests: [{ name: "scripted", result: "pass" as const }],
    risks: [],
    followups: [],
    agent: "scripted",
  };
  const walkthrough = `---\n${stringify(fm)}---\n\n## Summary\n\nFinished across the upgrade.\n\n## Approach\n\n-\n\n## Issues Encountered\n\nNone.\n\n## Testing\n\n-\n`;
  const result = {
    version: 1,
    run_id: runId,
    task_id: taskId,
    attempt,
    exit_code: 0,
    branch,
    head_sha: work,
    walkthrough_path: walkthroughPath(runId, taskId, attempt),
    walkthrough: fm,
    started_at: now,
    finished_at: now,
    agent: "scripted",
  };
  const trailers =
    `${TRAILERS.run}: ${runId}\n${TRAILERS.task}: ${taskId}\n${TRAILERS.attempt}: ${attempt}\n${TRAILERS.agent}: scripted\n${TRAILERS.exit}: 0` +
    (iteration ? `\n${TRAILERS.iteration}: ${iteration}` : "");
  const record = await commit(
    work,
    {
      [resultPath(runId, taskId, attempt)]: JSON.stringify(result, null, 2) + "\n",
      [walkthroughPath(runId, taskId, attempt)]: walkthrough,
    },
    `forge(${taskId}): record of attempt ${attempt}\n\n${trailers}`,
  );
  await gh.rest.git.updateRef({ owner: OWNER, repo: REPO, ref: `heads/${branch}`, sha: record });
}

const statusOf = (j: Journal, id: string) => j.tasks.find((t) => t.id === id)!.status;

describe("a run in progress under journal version 1", () => {
  for (const name of ["plain", "split"]) {
    it(`is resumed by today's App and completes (${name})`, { timeout: 180_000 }, async () => {
      const fx = fixture(name);
      expect(fx.stored.version).toBe(1);
      expect(fx.stored.journal.version).toBe(1);
      const runId = fx.github.runId;
      // The App's clock goes on from when the fixture was written: the jobs at work then are not silent.
      const resumedAt = Date.parse(fx.stored.events.tail.at(-1)!.timestamp) + 1_000;
      h = await startHarness((): Script => ({ kind: "success" }), {
        clock: new TestClock(resumedAt),
        ...(name === "split" ? { journalParts: { splitAt: 3, partSize: 3, liveMax: 2 } } : {}),
      });
      await load(h, fx);
      await h.app.forge.tick();
      await h.app.forge.idle();

      // The jobs at work when the App was upgraded: c's first attempt, d's second, e's first revision.
      await finishJob(h, runId, "c", 1, 0);
      await finishJob(h, runId, "d", 2, 0);
      await finishJob(h, runId, "e", 1, 1);
      const done = await h.waitFor((j) => j.runId === runId && j.status === "completed", 120_000);
      await h.app.forge.idle();

      for (const id of ["a", "b", "c", "d", "e", "f", "r"]) expect(statusOf(done, id)).toBe("MERGED");
      // Nothing was done again: only the tasks not yet started were dispatched by today's App.
      expect(h.runner.dispatched.map((k) => k.split("/").slice(1).join("/")).sort()).toEqual(["f/1", "r/1"]);
      // The attempts at work across the upgrade are the ones that merged, as version 1 recorded them.
      const t = (id: string) => done.tasks.find((x) => x.id === id)!;
      expect(t("c")).toMatchObject({ attempts: 1, attempt: { steering: [{ id: 1, message: "Keep the change small." }] } });
      expect(t("d")).toMatchObject({ attempts: 2, retries: 1, lastError: "tests fail" });
      expect(t("e")).toMatchObject({ attempts: 1, attempt: { prNumber: 2, reviewIterations: 1, revision: { iteration: 1 } } });
      // The state branch holds a version-2 journal now.
      const { data: repo } = await h.user.rest.repos.get({ owner: OWNER, repo: REPO });
      const { data: file } = await h.user.rest.repos.getContent({ owner: OWNER, repo: REPO, path: JOURNAL_FILE, ref: stateBranch(runId) });
      const text = Buffer.from((file as { content: string }).content, "base64").toString("utf8");
      const stored = unsealJournal(journalKeyFrom(h.privateKey), text, { repositoryId: repo.id, runId });
      expect(stored.ok && stored.value).toMatchObject({ version: 2, journal: { version: 2, status: "completed" } });
    });
  }
});
