/**
 * The action's tick mode, end to end: templates/workflows/forge-tick.yml as users install it, run by
 * the sim runner against the local GitHub with `forge-dev/forge/action` served from this checkout's
 * action/ (its committed bundle, dist/index.js → dist/tick.js). An agent's job finishes while every
 * webhook is lost, so the App never hears of it; the scheduled tick — acting as the App with the
 * secrets the template passes — finds the finished job and moves the task on, as the App's own
 * reconciler would (test/app/flows.e2e.test.ts), and never prints the App's private key.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Journal } from "../../src/core/journal.js";
import { JOURNAL_FILE, stateBranch } from "../../src/core/layout.js";
import { runJob } from "../../src/local-github/runner/executor.js";
import { FULL, OWNER, REPO, startHarness, type Harness } from "../app/helpers.js";
import { planFiles } from "../helpers/plan-files.js";
import { appKeys } from "../local-github/support/helpers.js";

let h: Harness | undefined;
const dirs: string[] = [];
afterEach(async () => {
  const done = h;
  h = undefined;
  await done?.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
}, 60_000);

const task = (j: Journal, id: string) => j.tasks.find((t) => t.id === id)!;

/** The journal as the App stored it on the run's state branch (what the next process reads). */
async function storedJournal(g: Harness, runId: string): Promise<Journal> {
  const { data } = await g.user.rest.repos.getContent({ owner: OWNER, repo: REPO, path: JOURNAL_FILE, ref: stateBranch(runId) });
  const stored = JSON.parse(Buffer.from((data as { content: string }).content, "base64").toString("utf8")) as { journal: Journal };
  return stored.journal;
}

/** templates/workflows/forge-tick.yml, once, in the sim runner, as a scheduled run of the repository. */
async function tickWorkflow(g: Harness, secrets: Record<string, string>) {
  const workspace = mkdtempSync(path.join(tmpdir(), "forge-tick-"));
  dirs.push(workspace);
  return runJob({
    workflowText: readFileSync("templates/workflows/forge-tick.yml", "utf8"),
    context: {
      repository: FULL,
      ref: "refs/heads/main",
      sha: "0".repeat(40),
      serverUrl: g.sim.url,
      apiUrl: g.sim.apiUrl,
      token: g.sim.control.userToken("octocat"),
      runId: 1,
      actor: "github-actions[bot]",
      eventName: "schedule",
      event: {},
      secrets,
      workflowPath: ".github/workflows/forge-tick.yml",
    },
    workspace,
    localActions: { "forge-dev/forge/action": path.resolve("action") },
  });
}

describe("the action's tick mode (templates/workflows/forge-tick.yml)", () => {
  it("reconciles a run whose webhooks were lost, acting as the App, and masks its key", { timeout: 120_000 }, async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    h = await startHarness(() => ({ kind: "success", gate }));
    await h.pushFiles(planFiles("mini", { a: [] }), "Add plan");
    const running = await h.waitFor((x) => task(x, "a").status === "RUNNING");
    await h.app.forge.idle();

    // The agent's job finishes while GitHub delivers no webhook: the App still thinks it runs.
    h.sim.control.faults({ webhookDropRate: 1 });
    release();
    await h.runner.idle();
    await h.sim.idle();
    expect(task(await storedJournal(h, running.runId), "a").status).toBe("RUNNING");

    const key = appKeys().privateKeyPem;
    const r = await tickWorkflow(h, { FORGE_APP_ID: String(h.appId), FORGE_APP_PRIVATE_KEY: key });
    const log = r.steps.flatMap((s) => s.log).join("\n");
    expect(r.conclusion, log).toBe("success");
    expect(r.steps.map((s) => s.name)).toEqual(["Reconcile active Forge runs"]);
    expect(log).toContain(`Forge tick: reconciled ${FULL}`);
    for (const line of key.split("\n").filter((l) => l.length > 8)) expect(log).not.toContain(line);

    // The tick ingested the finished job: the task moved on, in the journal the App reads next.
    const after = await storedJournal(h, running.runId);
    expect(["DONE", "MERGE_READY", "MERGED"]).toContain(task(after, "a").status);
    expect(task(after, "a").attempt?.recordSha).toMatch(/^[0-9a-f]{40}$/);
    expect(after.tasks.length).toBe(running.tasks.length);
  });

  it("fails, saying what to pass, without the App's credentials", { timeout: 60_000 }, async () => {
    h = await startHarness(() => ({ kind: "success" }));
    const r = await tickWorkflow(h, {});
    expect(r.conclusion).toBe("failure");
    expect(r.steps[0]!.log.join("\n")).toMatch(/mode 'tick' acts as the Forge App: pass `app-id/);
  });
});
