// `forge report <runId>`: a run read through the API of the local GitHub (a stored run on its state
// branch, a sealed event segment beside it, the tracker issue and the task PRs), written as the HTML
// report and the outcome figures; and the figures themselves, from a run the executor drove to its end.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newStoredRun, SEGMENT_SIZE } from "../../src/app/run-store.js";
import { decide } from "../../src/core/decide/index.js";
import type { Journal } from "../../src/core/journal.js";
import { outcomeFigures, quantile, type OutcomeFigures } from "../../src/core/outcomes.js";
import { forgeConfigSchema } from "../../src/core/schemas/config.js";
import type { ForgeEvent } from "../../src/core/schemas/events.js";
import { createSim, type Sim } from "../../src/local-github/server.js";
import { newRun, nodes, runToEnd, type Behaviour } from "../helpers/world.js";
import { runForge } from "./helpers.js";

const config = forgeConfigSchema.parse({});
const owner = "acme";
const repo = "widgets";

/** 36 tasks in a chain with a fan-out: b fails once, c asks a person, the rest succeed at once. */
function driven(): { journal: Journal; events: ForgeEvent[] } {
  const spec: Record<string, string[]> = { a: [], b: ["a"], c: ["a"] };
  for (let i = 0; i < 33; i++) spec[`t${i}`] = [i === 0 ? "b" : `t${i - 1}`];
  const behaviour: Behaviour = (id, attempt) =>
    id === "b" && attempt === 1 ? { kind: "exit", code: 1 } : id === "c" && attempt === 1 ? { kind: "human" } : { kind: "success" };
  const r = runToEnd(newRun(nodes(spec), "run-rep"), config, behaviour);
  return { journal: r.journal, events: r.decisions.flatMap((d) => d.events) };
}

describe("outcome figures", () => {
  it("counts merges, the ones a person touched, retries, merge → next dispatch and waiting time from the journal and the log", () => {
    const { journal, events } = driven();
    expect(journal.status).toBe("completed");
    const f = outcomeFigures(journal, events, config);
    expect(f).toMatchObject({ tasks: 36, tasksMerged: 36, retries: 2, reviewIterations: 0, ciIterations: 0, spendUsd: null });
    // c's answer was a person's /forge retry; b's retry was automatic.
    expect(f.mergedWithoutPerson).toBe(35);
    expect(f.perTask.find((t) => t.id === "c")?.person).toBe(true);
    expect(f.perTask.find((t) => t.id === "b")?.person).toBe(false);
    // One gap per merged task with dependents: a, b and t0…t31.
    expect(f.mergeToNextDispatch.count).toBe(34);
    expect(f.timeToFirstPrMs).not.toBeNull();
    expect(f.waitingMs).toBeGreaterThanOrEqual(0);
    // A manual merge policy means a person merged every task.
    expect(outcomeFigures(journal, events, { merge_policy: "manual" }).mergedWithoutPerson).toBe(0);
  });

  it("counts review and CI iterations from the revisions started, and a task a person reviewed as touched", () => {
    const { journal, events } = driven();
    const at = events.at(-1)!.timestamp;
    const ev = (type: string, taskId: string, data: Record<string, unknown>) =>
      ({ ...events.at(-1)!, type, taskId, timestamp: at, data }) as ForgeEvent;
    const more = [
      ev("task.feedback", "t3", { attempt: 1, source: "review", actor: "octocat", queued: false }),
      ev("task.revising", "t3", { attempt: 1, iteration: 1, sources: ["review"] }),
      ev("task.feedback", "t4", { attempt: 1, source: "ci", queued: false }),
      ev("task.revising", "t4", { attempt: 1, iteration: 1, sources: ["ci"] }),
      ev("task.revising", "t4", { attempt: 1, iteration: 2, sources: ["ci", "command"] }),
    ];
    const f = outcomeFigures(journal, [...events, ...more], config);
    // The bounds' count: t4's second answers a person too, so it is a review iteration.
    expect([f.reviewIterations, f.ciIterations]).toEqual([2, 1]);
    // t3's reviewer is a person; red CI alone is not.
    expect(f.perTask.find((t) => t.id === "t3")?.person).toBe(true);
    expect(f.mergedWithoutPerson).toBe(34);
  });

  it("adds an attempt's spend once, however often its result arrives, and divides it by the merged tasks", () => {
    const { journal } = driven();
    const running = structuredClone(journal);
    const t = running.tasks[0]!;
    t.status = "RUNNING";
    running.status = "running";
    const input = {
      kind: "agent.finished" as const,
      taskId: t.id,
      attempt: t.attempt,
      exitCode: 1,
      error: "x",
      spend: { usd: 0.25, tokens: 1200, agentMs: 42_000 },
    };
    const once = decide(running, input, 10 ** 12, config).journal;
    const twice = decide(once, input, 10 ** 12 + 1, config).journal;
    expect(twice.tasks[0]).toMatchObject({ spentUsd: 0.25, spentTokens: 1200, agentMs: 42_000 });
  });

  it("median and p95 by nearest rank", () => {
    expect(quantile([1, 2, 3, 4], 0.5)).toBe(2);
    expect(
      quantile(
        Array.from({ length: 20 }, (_, i) => i + 1),
        0.95,
      ),
    ).toBe(19);
    expect(quantile([], 0.5)).toBeNull();
  });
});

describe("forge report", () => {
  let sim: Sim;
  let out: string;
  let gh: Octokit;
  let expected: OutcomeFigures;
  const saved = { GITHUB_TOKEN: process.env.GITHUB_TOKEN, GITHUB_API_URL: process.env.GITHUB_API_URL };

  beforeAll(async () => {
    sim = await createSim({ workflowExecutor: "noop" });
    await sim.control.createRepo({ owner, name: repo, files: { "README.md": "# w\n" }, collaborators: { writer: "write" } });
    gh = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken("writer") });
    out = mkdtempSync(path.join(tmpdir(), "forge-report-"));
    const { journal, events } = driven();
    const main = (await gh.rest.git.getRef({ owner, repo, ref: "heads/main" })).data.object.sha;
    // A task PR whose body (an agent's walkthrough) tries to run script in the report.
    await gh.rest.git.createRef({ owner, repo, ref: "refs/heads/forge/run-rep/a/1", sha: main });
    await gh.rest.repos.createOrUpdateFileContents({
      owner,
      repo,
      branch: "forge/run-rep/a/1",
      path: "a.txt",
      message: "a",
      content: Buffer.from("a\n").toString("base64"),
    });
    const pr = await gh.rest.pulls.create({
      owner,
      repo,
      head: "forge/run-rep/a/1",
      base: "main",
      title: "forge(a): Task a",
      body: '## Summary\n\n<script>alert("pwned")</script> [x](javascript:alert(1)) <img src=x onerror=alert(1)>',
    });
    const tracker = await gh.rest.issues.create({
      owner,
      repo,
      title: "Forge run run-rep",
      body: "## Forge run `run-rep`\n\n| a | b |\n|---|---|\n| 1 | 2 |",
    });
    journal.tasks[0]!.prNumber = pr.data.number;
    journal.tasks[0]!.spentUsd = 0.5;
    journal.tasks[1]!.spentUsd = 1.25;
    expect(events.length).toBeGreaterThan(SEGMENT_SIZE);
    const stored = newStoredRun(journal, config, { trackerIssue: tracker.data.number }, events.slice(SEGMENT_SIZE));
    await gh.rest.git.createRef({ owner, repo, ref: "refs/heads/forge/run-rep/_state", sha: main });
    for (const [file, text] of [
      ["journal.json", JSON.stringify({ ...stored, seal: "hmac-sha256:not-checked" })],
      [
        "events/000001.ndjson",
        events
          .slice(0, SEGMENT_SIZE)
          .map((e) => JSON.stringify(e))
          .join("\n") + "\n",
      ],
    ] as const)
      await gh.rest.repos.createOrUpdateFileContents({
        owner,
        repo,
        branch: "forge/run-rep/_state",
        path: file,
        message: file,
        content: Buffer.from(text).toString("base64"),
      });
    expected = outcomeFigures(journal, events, config);
    process.env.GITHUB_TOKEN = sim.control.userToken("writer");
    process.env.GITHUB_API_URL = sim.apiUrl;
  });

  afterAll(async () => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    await sim?.close();
    rmSync(out, { recursive: true, force: true });
  });

  it("writes the HTML report and the figures of a run read through the API, the sealed segment included", async () => {
    const r = await runForge(["report", "run-rep", "--repo", `${owner}/${repo}`, "--out", out], out);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toContain("| Tasks merged | 36 of 36 |");
    expect(r.out).toContain("| Spend per merged task | $0.05 |");
    const figures = JSON.parse(readFileSync(path.join(out, "forge-report-run-rep.json"), "utf8")) as OutcomeFigures;
    // Every event was read: the sealed segment and the open one.
    expect(figures).toEqual(JSON.parse(JSON.stringify(expected)));
    expect(figures.spendUsd).toBe(1.75);
    const html = readFileSync(path.join(out, "forge-report-run-rep.html"), "utf8");
    expect(html).toContain('<section id="outcomes">');
    expect(html).toContain("<td>$0.50</td>".replace("<td>", '<td class="n">'));
    // The walkthrough is shown, never run: no script, no handler, no javascript: link.
    expect(html).toContain("&lt;script&gt;");
    expect(html).not.toMatch(/<script|<img|href="javascript/i);
    expect(sim.violations.filter((v) => v.kind !== "request")).toEqual([]);
  });

  it("a run that does not exist is one line naming it, exit 1", async () => {
    const r = await runForge(["report", "no-such-run", "--repo", `${owner}/${repo}`, "--out", out], out);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^forge report: [^\n]*no-such-run[^\n]*\n$/);
  });

  it("a token that cannot read the repository is one line naming it, exit 1", async () => {
    process.env.GITHUB_TOKEN = "not-a-token";
    try {
      const r = await runForge(["report", "run-rep", "--repo", `${owner}/${repo}`, "--out", out], out);
      expect(r.code).toBe(1);
      expect(r.err).toMatch(/acme\/widgets: the API answered 401/);
    } finally {
      process.env.GITHUB_TOKEN = sim.control.userToken("writer");
    }
  });
});
