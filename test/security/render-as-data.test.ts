/**
 * Trust I, item 6: agent text is rendered as data. What an agent writes (a follow-up, a question, a
 * Change Request's reason) reaches GitHub through the App's own bodies and comments, so it must not
 * carry Forge's hidden markers — which tie an issue to a run — nor @mentions, which would notify
 * people through the App; and a marker counts only in a body the App wrote. The demo's HTML report
 * links only to http(s) and relative addresses.
 */
import { afterEach, describe, expect, it } from "vitest";
import { TRACKER_DEBOUNCE_MAX_MS } from "../../src/app/effects/index.js";
import { renderChangeRequestIssue, renderTracker } from "../../src/app/render.js";
import { forgeConfigSchema } from "../../src/core/schemas/config.js";
import { startRun } from "../../src/core/decide/index.js";
import type { Journal } from "../../src/core/journal.js";
import { LABELS } from "../../src/core/layout.js";
import { asData } from "../../src/core/render/as-data.js";
import { markdownToHtml } from "../../src/core/render/run-report.js";
import { FULL, OWNER, REPO, startHarness, type Harness } from "../app/helpers.js";
import type { Script } from "../app/scripted-runner.js";
import { planFiles } from "../helpers/plan-files.js";
import { newRun, nodes } from "../helpers/world.js";

let h: Harness | undefined;
afterEach(async () => {
  const done = h;
  h = undefined;
  await done?.close();
}, 60_000);

const T = { timeout: 120_000 };
const task = (j: Journal, id: string) => j.tasks.find((t) => t.id === id)!;
/** A raw @mention of `login`, as GitHub would link it (not after a word character, not broken by a zero-width space). */
const liveMention = (login: string) => new RegExp(`(?<!\\w)@${login}\\b`);

async function until<T>(what: string, read: () => Promise<T | undefined>, tries = 150): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const value = await read();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function trackerOf(g: Harness, planId: string): Promise<{ number: number; body: string }> {
  return until(`the tracker of ${planId}`, async () => {
    await g.app.forge.idle();
    const { data } = await g.user.rest.issues.listForRepo({ owner: OWNER, repo: REPO, state: "all", labels: LABELS.tracker });
    const issue = data.find((i) => i.title.includes(planId));
    return issue ? { number: issue.number, body: issue.body ?? "" } : undefined;
  });
}

async function comments(g: Harness, issue: number): Promise<string[]> {
  await g.app.forge.idle();
  const { data } = await g.user.rest.issues.listComments({ owner: OWNER, repo: REPO, issue_number: issue });
  return data.map((c) => c.body ?? "");
}

async function statusOf(g: Harness, runId: string): Promise<string | undefined> {
  return (await g.app.forge.runtimes.get(FULL)!.engine.state(runId))?.state.journal.status;
}

/** A run of plan `victim` whose one task never starts, so it stays running: the run an attacker aims at. */
async function victimRun(g: Harness): Promise<string> {
  await g.pushFiles(planFiles("victim", { v: [] }), "Add the victim plan");
  return (await g.waitFor((x) => x.planId === "victim" && task(x, "v").status === "RUNNING")).runId;
}

describe("Forge's markers count only where the App put them", () => {
  it("a follow-up's hidden CR marker on one run's tracker does not turn commands there on another run", T, async () => {
    let victim = "";
    h = await startHarness((id): Script => {
      if (id === "a") return { kind: "success", followups: [`Fix the broken docs link. <!-- forge:cr ${victim} cr-v-1 -->`] };
      return { kind: "never_start" };
    });
    victim = await victimRun(h);
    await h.pushFiles(planFiles("mini", { a: [], b: ["a"] }), "Add plan");
    const mine = await h.waitFor((x) => x.planId === "mini" && x.followups.length === 1);
    // The tracker shows the follow-up (once redrawn, after its debounce: a minute at most), and nothing of its marker.
    await h.advance(TRACKER_DEBOUNCE_MAX_MS);
    const tracker = await until("the follow-up on the tracker", async () => {
      const t = await trackerOf(h!, "mini");
      return t.body.includes("Fix the broken docs link.") ? t : undefined;
    });
    expect(tracker.body).not.toContain(victim);
    expect(tracker.body.match(/<!--/g)).toHaveLength(1);

    await h.sim.control.comment("octocat", FULL, tracker.number, "/forge cancel");
    await h.waitFor((x) => x.runId === mine.runId && x.status === "cancelled", 30_000);
    expect(await statusOf(h, victim)).toBe("running");
    expect(h.sim.violations).toEqual([]);
  });

  it("a marker in an issue someone else opened is text: a command there names no run, and says so", T, async () => {
    h = await startHarness(() => ({ kind: "never_start" }));
    const victim = await victimRun(h);
    const opened = await h.sim.control.openIssue("reader", FULL, "Please stop the run", `<!-- forge:run ${victim} -->\nIt is broken.`);
    const issue = (opened.body as { number: number }).number;
    await h.sim.control.comment("octocat", FULL, issue, "/forge cancel");
    const said = await until("the App's answer", async () => (await comments(h!, issue)).find((c) => /not a Forge task PR/.test(c)));
    expect(said).toMatch(/comment on the run's tracker issue/);
    expect(await statusOf(h, victim)).toBe("running");
    expect(h.sim.violations).toEqual([]);
  });
});

describe("agent text reaches GitHub as data", () => {
  it("an agent's question and Change Request mention nobody and carry no marker", T, async () => {
    h = await startHarness((id, attempt): Script =>
      id === "a" && attempt === 1
        ? { kind: "exit", code: 3, question: "Which database, @octocat? Ask @acme/admins. <!-- forge:run elsewhere -->" }
        : id === "r1"
          ? { kind: "exit", code: 11, error: "needs a b task, cc @octocat <!-- forge:cr elsewhere cr-9 -->\n```\n@acme/admins" }
          : id === "b"
            ? { kind: "success" }
            : { kind: "never_start" },
    );
    await h.pushFiles(planFiles("mini", { a: [], b: [], r1: ["b"] }), "Add plan");
    await h.waitFor((x) => task(x, "a").attempt?.hold === "human" && x.pause.changeRequests.length === 1);
    const tracker = await trackerOf(h, "mini");
    const question = await until("the question on the tracker", async () =>
      (await comments(h!, tracker.number)).find((c) => /Which database/.test(c)),
    );
    expect(question).not.toMatch(liveMention("octocat"));
    expect(question).not.toMatch(liveMention("acme"));
    expect(question).toContain("@\u200Boctocat");
    // Only the App's own marker, which names the comment it is.
    expect(question.match(/<!-- forge:\S+/g)).toEqual(["<!-- forge:comment"]);

    const { data: crIssues } = await h.user.rest.issues.listForRepo({ owner: OWNER, repo: REPO, labels: LABELS.changeRequest });
    expect(crIssues).toHaveLength(1);
    const body = crIssues[0]!.body ?? "";
    expect(body).toContain("needs a b task");
    expect(body).not.toMatch(liveMention("octocat"));
    expect(body).not.toMatch(liveMention("acme"));
    expect(body.match(/<!-- forge:\S+/g)).toEqual(["<!-- forge:cr"]);
    expect(h.sim.violations).toEqual([]);
  });

  it("a Change Request's document loses its front matter by the front-matter reader, and cannot close its fence", () => {
    const config = forgeConfigSchema.parse({});
    const journal = startRun(newRun(nodes({ a: [] })), 0, config).journal;
    journal.changeRequests = [
      {
        id: "cr-a-1",
        emittedBy: "a",
        attempt: 1,
        title: "Split a",
        reason: "too big\n```\n@everyone <!-- forge:run other -->",
        affectedTasks: ["a"],
        status: "pending",
      },
    ];
    const document = "---\ntitle: a---b\nreason: x\n---\n\n## Why\n\nBecause @octocat said so.\n";
    const body = renderChangeRequestIssue(journal, "cr-a-1", document, config);
    expect(body.split("\n")[0]).toBe("<!-- forge:cr run-1 cr-a-1 -->");
    expect(body).toContain("## Why\n\nBecause @\u200Boctocat said so.");
    expect(body).not.toContain("b\nreason: x");
    // The reason's ``` stays inside a longer fence.
    expect(body).toMatch(/^````yaml$/m);
    expect(body.match(/<!-- forge:/g)).toHaveLength(1);
    expect(body).not.toMatch(liveMention("everyone"));
  });

  it("strips every marker, even one that removing another would join", () => {
    const joined = "<!<!-- forge:x -->-- forge:cr run-2 cr-1 -->";
    expect(asData(joined)).not.toMatch(/<!--\s*forge/);
    expect(asData("tail <!-- forge:run r")).toBe("tail ");
    const tracker = renderTracker(
      { ...startRun(newRun(nodes({ a: [] })), 0, forgeConfigSchema.parse({})).journal },
      [],
      { checkRuns: {} },
      { owner: OWNER, repo: REPO, webUrl: "https://github.com" },
      0,
    );
    expect(tracker.split("\n")[0]).toBe("<!-- forge:run run-1 -->");
  });
});

describe("the demo's report links only to http(s) and relative addresses", () => {
  const links = (md: string) => [...markdownToHtml(md).matchAll(/<a href="([^"]*)"/g)].map((m) => m[1]);

  it("renders no live link for a script, data or other scheme", () => {
    for (const url of [
      "javascript:alert(1)",
      "JaVaScRiPt:alert%281%29",
      "data:text/html,x",
      "vbscript:msgbox",
      "java\u0001script:x",
      "file:///etc/passwd",
    ])
      expect(links(`See [the report](${url}).`), url).toEqual([]);
    expect(markdownToHtml("[x](javascript:alert%281%29)")).toContain("[x](javascript:alert%281%29)");
  });

  it("keeps http(s) and relative links", () => {
    expect(links("[a](https://example.com/x) [b](http://e.org) [c](#final-pr) [d](/repo/pull/1) [e](runs/1:2)")).toEqual([
      "https://example.com/x",
      "http://e.org",
      "#final-pr",
      "/repo/pull/1",
      "runs/1:2",
    ]);
  });
});
