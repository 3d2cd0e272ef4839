/**
 * The links the App writes go to the GitHub it talks to: on the local GitHub, a check run's
 * details (the attempt's job), its execution report, and the tracker's check and job-log links (a
 * job that ended without a result, an agent that failed with one) all name the local GitHub's web
 * root, never github.com — and each of them opens there.
 */
import { afterEach, describe, expect, it } from "vitest";
import { TRACKER_DEBOUNCE_MAX_MS } from "../../src/app/effects/index.js";
import { executionReportPath, LABELS } from "../../src/core/layout.js";
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

const task = (j: Journal, id: string) => j.tasks.find((t) => t.id === id)!;
/** Every Markdown link's target in `text`. */
const links = (text: string) => [...text.matchAll(/\]\((https?:\/\/[^)\s]+)\)/g)].map((m) => m[1]!);

async function page(url: string): Promise<{ status: number; text: string }> {
  const res = await fetch(url);
  return { status: res.status, text: await res.text() };
}

describe("links on the GitHub the App talks to", () => {
  it("check details, execution report, tracker check and job log go to the local GitHub and open there", { timeout: 120_000 }, async () => {
    // a succeeds; b's job ends without a result; c's agent fails with its result (exit 1).
    const scripts: Record<string, Script> = { b: { kind: "lost" }, c: { kind: "exit", code: 1, error: "tests failed" } };
    h = await startHarness((id): Script => scripts[id] ?? { kind: "success" }, {
      config: "max_retries: 0\nretry_backoff: { base_seconds: 0, max_seconds: 0 }\n",
    });
    const web = h.sim.url;
    await h.pushFiles(planFiles("mini", { a: [], b: [], c: [] }), "Add plan");
    const j = await h.waitFor(
      (x) => task(x, "a").status === "MERGED" && task(x, "b").attempt?.hold === "exhausted" && task(x, "c").attempt?.hold === "exhausted",
    );
    await h.advance(TRACKER_DEBOUNCE_MAX_MS);
    await h.app.forge.idle();

    // a's check run: its details are a's job, its summary links a's execution report at the record commit.
    const a = task(j, "a");
    const recordSha = a.attempt?.recordSha ?? "";
    expect(recordSha).toMatch(/^[0-9a-f]{40}$/);
    const { data: checks } = await h.user.rest.checks.listForRef({ owner: OWNER, repo: REPO, ref: recordSha });
    const check = checks.check_runs.find((c) => c.name === "forge · a")!;
    const runId = a.attempt?.revision.workflowRunId;
    expect(runId).toBeTypeOf("number");
    expect(check.details_url).toBe(`${web}/${OWNER}/${REPO}/actions/runs/${runId}`);
    const job = await page(check.details_url!);
    expect(job.status).toBe(200);
    expect(job.text).toContain(`run ${runId}`);
    const report = `${web}/${OWNER}/${REPO}/blob/${recordSha}/${executionReportPath(j.runId, "a", 1)}`;
    expect(links(check.output.summary ?? "")).toEqual([report]);
    expect(await page(report)).toEqual({ status: 200, text: "# Execution report\n\nScripted attempt 1 of `a`.\n" });

    // The tracker: a check link per task with a check run, b's job log; all on the local GitHub, all open.
    const { data: issues } = await h.user.rest.issues.listForRepo({ owner: OWNER, repo: REPO, state: "all", labels: LABELS.tracker });
    const body = issues[0]!.body ?? "";
    expect(body).not.toContain("https://github.com");
    const found = links(body);
    expect(found).toContain(`${web}/${OWNER}/${REPO}/runs/${check.id}`);
    // b's job page (GitHub's html_url of the failed job); c's workflow run.
    expect(found.some((u) => /\/actions\/runs\/\d+\/job\/\d+$/.test(u))).toBe(true);
    const cRow = body.split("\n").find((l) => l.startsWith("| `c`"))!;
    expect(cRow).toContain(`tests failed [job log](${web}/${OWNER}/${REPO}/actions/runs/${task(j, "c").attempt!.revision.workflowRunId})`);
    // A check run for each task (b's on its branch as cut), b's job and c's run.
    expect(found).toHaveLength(5);
    for (const url of found) {
      expect(url.startsWith(`${web}/${OWNER}/${REPO}/`), url).toBe(true);
      expect((await page(url)).status, url).toBe(200);
    }
    const checkPage = await page(`${web}/${OWNER}/${REPO}/runs/${check.id}`);
    expect(checkPage.text).toContain("forge · a — completed, success");
    // A page of no such check run, or of another repository's, is not there.
    expect((await page(`${web}/${OWNER}/nope/runs/${check.id}`)).status).toBe(404);
    expect((await page(`${web}/${OWNER}/${REPO}/blob/${recordSha}/no/such/file`)).status).toBe(404);
  });
});
