/**
 * `forge demo` end to end, as a user runs it: the CLI command starts the demo process (tsx), which
 * runs examples/plans/textkit on the local GitHub with the Forge App and the real Forge action
 * (scripted agent; every job, the Captain's included). Asserts what the demo promises: exit 0, every
 * task MERGED, the final PR, the retried task, the follow-up, the Change Request answered by the
 * Captain's overlay PR (opened by the action, merged by the person) and applied as overlay-001, the
 * review answered by a revision and then approved, the CI fix after a failing required check, a
 * question answered with `/forge retry` on the task's PR, a STALE attempt resumed on the same PR, the
 * agents under `isolation: auto`, tests passing on the integration branch, and an HTML report that
 * draws the DAG and stands alone (every PR's and issue's text in it, no link to the stopped local
 * GitHub). README.md's sample output is checked against this run's.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { machineIsolates } from "../../src/demo/loop.js";
import type { DemoResult } from "../../src/demo/run.js";
import { summary } from "../../src/demo/summary.js";
import { runForge } from "../cli/helpers.js";
import { readmeSample, sampleDrift } from "./readme-sample.js";
import { releaseCrTitle } from "./release-cr.js";

const out = mkdtempSync(path.join(tmpdir(), "forge-demo-test-"));
const RELEASE_CR_TITLE = releaseCrTitle();
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe("forge demo", () => {
  it("runs the textkit plan to the end: every task merged, retry, follow-up, overlay, final PR, report", async () => {
    const t0 = performance.now();
    const { code, out: stdout, err } = await runForge(["demo", "--json", "--out", out], process.cwd());
    const result = JSON.parse(stdout) as DemoResult;
    expect(code, `${err.slice(-4000)}\n${JSON.stringify(result.problems)}`).toBe(0);
    expect(result.ok).toBe(true);
    expect(result.problems).toEqual([]);
    expect(result.status).toBe("completed");

    // Twelve nodes (nine tasks and two refineries planned, one task added by the overlay), every one MERGED with a PR.
    const ids = result.tasks.map((t) => t.id);
    expect(ids).toEqual([
      "scaffold",
      "case",
      "slugify",
      "truncate",
      "words",
      "pad",
      "table",
      "core",
      "wrap",
      "template",
      "release",
      "docs",
    ]);
    for (const t of result.tasks) {
      expect(t.status, t.id).toBe("MERGED");
      expect(t.pr, t.id).toBeTypeOf("number");
    }
    expect(result.tasks.filter((t) => t.kind === "refinery").map((t) => t.id)).toEqual(["core", "release"]);
    expect(result.tasks.filter((t) => t.kind === "task" && !t.addedBy).length).toBeGreaterThanOrEqual(8);

    // case fails its first attempt and the automatic retry succeeds.
    const failures = JSON.stringify(result.tasks.map((t) => [t.id, t.failures]));
    const caseTask = result.tasks.find((t) => t.id === "case")!;
    expect(caseTask.attempts, failures).toBeGreaterThanOrEqual(2);
    expect(caseTask.failures[0], failures).toMatchObject({ attempt: 1, to: "FAILED" });
    expect(caseTask.retries).toBe(caseTask.attempts - 1);
    // slugify's walkthrough names a bug: a follow-up agent ran and its PR merged.
    expect(result.followups).toEqual([
      expect.objectContaining({ id: "_followup-1", sourceTaskId: "slugify", status: "merged", pr: expect.any(Number) }),
    ]);
    // release escalated: a Change Request, the Captain's overlay, the new task, release's next attempt.
    // Its issue's title is the refinery agent's own (examples/plans/textkit/tasks/release.md): no
    // runner text, no spend, no exit code.
    expect(result.changeRequests).toEqual([
      expect.objectContaining({
        emittedBy: "release",
        status: "applied",
        overlayId: "overlay-001",
        issue: expect.any(Number),
        title: RELEASE_CR_TITLE,
        issueTitle: RELEASE_CR_TITLE,
      }),
    ]);
    expect(result.overlays).toEqual(["overlay-001"]);
    // The overlay PR is the Forge action's (its title is captainJob's), merged by the person.
    const crId = result.changeRequests[0]!.id;
    expect(result.overlayPrs).toEqual([
      {
        number: expect.any(Number),
        title: `forge(_captain-${crId}): amend plan textkit (overlay-001)`,
        head: `forge/${result.runId}/_captain-${crId}`,
        merged: true,
      },
    ]);
    expect(result.tasks.find((t) => t.id === "docs")).toMatchObject({ addedBy: "overlay-001", status: "MERGED" });
    // Its escalated attempt is not counted as a retry. (A loaded machine may add a retried failure
    // anywhere: Forge retries it, so attempts are at least, not exactly, what the plan scripts.)
    const release = result.tasks.find((t) => t.id === "release")!;
    expect(release.failures[0], failures).toMatchObject({ attempt: 1, to: "FAILED", error: expect.stringContaining("escalated") });
    expect(release.attempts - release.retries, failures).toBe(2);

    // words' first attempt spends past its $1 cap: stopped, its work kept; the person's
    // `/forge budget words +1` raises its budget and the second attempt finishes (not counted as a retry).
    const words = result.tasks.find((t) => t.id === "words")!;
    expect(words.failures[0], failures).toMatchObject({
      attempt: 1,
      to: "FAILED",
      error: expect.stringContaining("stopped at its budget: $1.40 of $1.00"),
    });
    expect(words.attempts - words.retries, failures).toBe(2);
    expect(err).toContain("commented `/forge budget words +1`");

    checkLoop(result, err, failures);
    // The PR feedback loop. pad: octocat's review (a body and an inline comment) is answered by a
    // revision on the same PR — a reply in the comment's thread — and octocat approves the revision.
    const pad = result.tasks.find((t) => t.id === "pad")!;
    expect(pad, failures).toMatchObject({ status: "MERGED", iteration: 1, reviewIterations: 1 });
    const { review, ciFix } = result.feedback;
    expect(review).toMatchObject({ task: "pad", pr: pad.pr, status: "MERGED", iteration: 1, approvalId: expect.any(Number) });
    expect(review!.reply).toMatch(
      /^Done in revision 1: a note at `src\/pad\.js:19`\.\n\nRevision 1 \([0-9a-f]{7}\) changed `src\/pad\.js`\.$/,
    );
    expect(err).toContain(`octocat requested changes on #${pad.pr} (pad)`);
    expect(err).toMatch(/pad +MERGE_READY → RUNNING/);
    // truncate: its first head fails the project's required check `check` (the marker), a fix
    // revision deletes the marker on the same PR, the check passes and the PR merges after.
    const truncate = result.tasks.find((t) => t.id === "truncate")!;
    expect(truncate, failures).toMatchObject({ status: "MERGED", iteration: 1, ciFixes: 1 });
    expect(ciFix).toMatchObject({ task: "truncate", pr: truncate.pr, failedCheck: "check", iteration: 1, status: "MERGED" });
    const red = ciFix!.conclusions.findIndex((c) => c.endsWith(" failure"));
    expect(red, JSON.stringify(ciFix)).toBeGreaterThanOrEqual(0);
    expect(ciFix!.conclusions.at(-1), JSON.stringify(ciFix)).toMatch(/ success$/);
    expect(ciFix!.conclusions.at(-1)!.slice(0, 7)).not.toBe(ciFix!.conclusions[red]!.slice(0, 7));
    // In words: the red head, the green one, the branch's runs counted (cancelled ones explained).
    expect(ciFix).toMatchObject({ failedHead: ciFix!.conclusions[red]!.slice(0, 7), fixedHead: ciFix!.conclusions.at(-1)!.slice(0, 7) });
    expect(ciFix!.runs.total).toBe(ciFix!.conclusions.length);
    expect(err).toMatch(/truncate +MERGE_READY → RUNNING/);
    expect(err.indexOf("truncate     MERGE_READY → RUNNING")).toBeLessThan(err.indexOf("truncate     MERGE_READY → MERGED"));

    // The final PR: integration branch → main; the merged work passes the project's own tests.
    expect(result.finalPr).toMatchObject({ head: `forge/${result.runId}/_integration`, base: "main" });
    expect(result.testsOnIntegration).toMatchObject({ ok: true, fail: 0 });
    // version 1, case 3, slugify 2 + follow-up 1, truncate 2, words 2, pad 3, table 2, wrap 2, template 3 (its sentinel's fix adds one).
    expect(result.testsOnIntegration!.pass).toBe(21);
    // Every job ran the real action, the Captain's included: 16, the two revisions (pad's review, truncate's CI fix), slugify's answered question and template's resumed attempt.
    expect(result.jobs.action).toBeGreaterThanOrEqual(20);
    expect(result.jobs.captain).toBe(1);
    // The project's CI ran too, on the task branches among others; the attempts above are Forge's own.
    expect(result.jobs.ci).toBeGreaterThan(0);
    const ci = result.ciRuns!;
    expect(ci.where.branches + ci.where.main + ci.where.pullRequests).toBe(ci.total);
    expect(ci.success + ci.failure + ci.cancelled + ci.unfinished).toBeLessThanOrEqual(ci.total);
    expect(ci.failure).toBeGreaterThanOrEqual(1);
    // The failure reasons in the live view are the agent's own words, not its progress lines.
    expect(err).toMatch(/case +RUNNING +→ FAILED +attempt 1 +single: Error: test\/case\.test\.js: camelCase/);
    expect(err).not.toMatch(/→ FAILED .*Spent \$/);

    checkReport(result, ids);
    // The live view went to stderr: a line per state change, with the progress bar.
    expect(err).toMatch(/case {9}RUNNING {5}→ FAILED/);
    expect(err).toMatch(/▕█{16}▏ 12\/12/);
    // table starts only once pad and truncate, which it builds on, are merged.
    const at = (re: RegExp) => err.split("\n").findIndex((l) => re.test(l));
    const [tableStarts, padMerged, truncateMerged] = [
      at(/table +PENDING +→ RUNNING/),
      at(/pad +MERGE_READY → MERGED/),
      at(/truncate +MERGE_READY → MERGED/),
    ];
    expect(Math.min(padMerged, truncateMerged)).toBeGreaterThanOrEqual(0);
    expect(tableStarts).toBeGreaterThan(Math.max(padMerged, truncateMerged));
    // README.md's sample output is this run's (test/demo/readme-sample.ts).
    expect(sampleDrift(readmeSample(readFileSync("README.md", "utf8")), err, summary(result))).toEqual([]);
    console.log(
      `forge demo: ${(result.durationMs / 1000).toFixed(1)} s inside, ${((performance.now() - t0) / 1000).toFixed(1)} s with process start`,
    );
  }, 900_000);
});

/** The browsable report: the DAG as inline SVG with every node coloured MERGED, and the tracker; a file to keep. */
function checkReport(result: DemoResult, ids: string[]): void {
  expect(result.reportPath && existsSync(result.reportPath)).toBe(true);
  const html = readFileSync(result.reportPath!, "utf8");
  expect(html).toContain('<svg xmlns="http://www.w3.org/2000/svg" class="forge-dag"');
  for (const id of ids) expect(html).toContain(`<g class="node" data-id="${id}" data-status="MERGED">`);
  expect(html).toContain(`Forge run <code>${result.runId}</code>`);
  // Spend per task: words' two attempts ($1.40 stopped, then its second), every other task's one.
  expect(html).toContain("<th>Spend</th>");
  expect(html).toMatch(/<code>words<\/code>[\s\S]*?<td class="n">\$1\.\d\d<\/td><\/tr>/);
  // Self-contained: nothing is loaded from anywhere.
  expect(html).not.toMatch(/<script|<link|<img|src="https?:|url\(https?:/);
  // A report to keep: no link to the stopped local GitHub nor to the demo repository's name on
  // github.com; every link inside the file leads to an element of it; each PR's and issue's text is in it.
  const hrefs = [...html.matchAll(/href="([^"]*)"/g)].map((m) => m[1]!);
  expect(hrefs.filter((h) => !h.startsWith("#"))).toEqual([]);
  const anchors = new Set([...html.matchAll(/ id="([^"]+)"/g)].map((m) => m[1]!));
  expect(hrefs.filter((h) => !anchors.has(h.slice(1)))).toEqual([]);
  for (const t of result.tasks) expect(html, t.id).toContain(`<article id="pr-${t.pr}">`);
  expect(html).toContain(`<article id="pr-${result.overlayPrs[0]!.number}">`);
  expect(html).toContain(`<article id="issue-${result.changeRequests[0]!.issue}">`);
  // The report shows the agent's title: the Change Request's line, and its issue's.
  expect(html).toContain(`<code>${result.changeRequests[0]!.id}</code> — ${RELEASE_CR_TITLE}: <strong>applied</strong>`);
  expect(html).toContain(`Issue #${result.changeRequests[0]!.issue}: ${RELEASE_CR_TITLE}</p>`);
  expect(html).not.toMatch(/Issue #\d+: [^<]*(Spent \$|FORGE_EXIT|ESCALATE)/);
  expect(html).toContain('<small class="local">(local)</small>');
  expect(html).toMatch(/\d+ cancelled by a newer push to the branch/);
}

/**
 * The rest of the loop (src/demo/loop.ts). slugify's first attempt asks a question (exit 3): Forge
 * posts it on the task's PR, and the person answers there with `/forge retry slugify <answer>` — a
 * comment the App receives as a signed webhook; the next attempt takes the answer (its walkthrough,
 * the PR body, gives it) and merges. A person's retry is not counted as a retry.
 */
function checkLoop(result: DemoResult, err: string, failures: string): void {
  const slugify = result.tasks.find((t) => t.id === "slugify")!;
  expect(slugify.failures[0], failures).toMatchObject({ attempt: 1, to: "FAILED", error: "waiting for a person" });
  expect(slugify.attempts - slugify.retries, failures).toBe(2);
  const { retryByComment, staleResumed, isolation } = result.loop;
  expect(retryByComment, JSON.stringify(result.loop)).toMatchObject({
    task: "slugify",
    pr: slugify.failures[0]!.pr,
    attempt: 1,
    body: "/forge retry slugify Keep digits: top-10-tips.",
    retriedAttempt: 2,
    status: "MERGED",
    finalPr: slugify.pr,
    answerInPr: true,
  });
  expect(retryByComment!.question).toContain("Should slugify keep digits");
  expect(err).toContain(
    `octocat answered slugify's question on #${retryByComment!.pr}: \`/forge retry slugify Keep digits: top-10-tips.\``,
  );
  // template (type 2: implement → verify → walkthrough) goes silent in verify on its first attempt:
  // the runner stops it as stalled, the App takes it STALE and retries it, and the retry resumes
  // it — the same PR, from verify, implement not run again, the agent's session continued — as its
  // walkthrough (the PR body), the tracker's row and the live view say.
  const template = result.tasks.find((t) => t.id === "template")!;
  expect(template.failures[0], failures).toMatchObject({ attempt: 1, to: "STALE", pr: template.pr });
  expect(staleResumed, JSON.stringify(result.loop)).toMatchObject({
    task: "template",
    staleAttempt: 1,
    resumedAttempt: template.attempts,
    pr: template.pr,
    samePr: true,
    reason: "stale",
    stage: "verify",
    skipped: ["implement"],
    session: expect.stringMatching(/^demo-template-1-verify-/),
    trackerSaysResumed: true,
    status: "MERGED",
  });
  expect(staleResumed!.walkthrough).toContain(
    "Attempt 2 continued the work of attempt 1, which stalled or ran out of time, on the same branch (`forge/",
  );
  expect(err).toMatch(new RegExp(`template +PENDING +→ RUNNING +attempt 2 +resumes attempt 1 on #${template.pr} from stage verify`));
  // Every task's last attempt was checked by its sentinel after its own stages; on template (type 2)
  // it found a gap the task's own verify let through, the fix went back to the agent, and the second
  // check passed it (examples/plans/textkit/tasks/template.md's `sentinel:` script).
  const { sentinel } = result.loop;
  expect(sentinel, JSON.stringify(result.loop)).toMatchObject({ caught: { task: "template", grade: "PASS", fixes: 1, status: "MERGED" } });
  expect(template.sentinel, failures).toMatchObject({ grade: "PASS", fixes: 1 });
  expect(sentinel!.checked).toBeGreaterThan(1);
  // The agents ran under `isolation: auto`: each job's agent as an OS user of its own where this
  // machine allows it (root or passwordless sudo), else the runner's user, said.
  expect(isolation.configured).toBe("auto");
  expect(isolation.jobs).toBe(result.jobs.action);
  if (machineIsolates()) expect(isolation).toMatchObject({ mode: "user", isolated: isolation.jobs, users: isolation.jobs });
  else expect(isolation).toMatchObject({ mode: "none", isolated: 0, why: expect.stringContaining("root or passwordless sudo") });
}
