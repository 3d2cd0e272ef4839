/**
 * Commands are read from what a comment says, not from what it shows: `/forge …` inside a code block
 * or a quote (a pasted log, an agent's walkthrough quoted back, a reply quoting a command) is not a
 * command, so nobody is made to run one by quoting it; nor is one inside an HTML comment, which
 * GitHub does not show at all. And they are taken only from people with
 * write access: anyone else gets a reaction, never a comment (each reply would spend the
 * installation's content-creation budget), and closing a Change Request — which rejects it — is
 * undone when the closer could not have rejected it.
 */
import { afterEach, describe, expect, it } from "vitest";
import { parseCommand } from "../../src/app/commands.js";
import type { Journal } from "../../src/core/journal.js";
import { LABELS } from "../../src/core/layout.js";
import { FULL, OWNER, REPO, startHarness, type Harness } from "../app/helpers.js";
import type { Script } from "../app/scripted-runner.js";
import { planFiles } from "../helpers/plan-files.js";

describe("/forge in code and quotes is not obeyed", () => {
  const shown: [string, string][] = [
    ["a fenced block", "Look at this:\n\n```\n/forge cancel\n```\n"],
    ["a fenced block with a language", "```sh\n/forge retry a\n```"],
    ["a tilde fence", "~~~\n/forge cancel\n~~~"],
    ["a longer fence closed only by its own length", "````\n```\n/forge cancel\n````"],
    ["an indented code block", "The agent printed:\n\n    /forge cancel\n"],
    ["a tab-indented code block", "\t/forge cancel"],
    ["a quote", "> /forge cancel\n\nWhy did someone write that?"],
    ["a nested quote", "> > /forge approve"],
    ["an unclosed fence (the rest of the comment is code)", "```\n/forge cancel"],
  ];
  for (const [where, body] of shown) {
    it(`ignores a command shown in ${where}`, () => {
      expect(parseCommand(body)).toBeUndefined();
    });
  }

  it("still obeys a command outside them, after a fence closes", () => {
    expect(parseCommand("```\n/forge cancel\n```\n/forge retry a please")).toEqual({
      name: "retry",
      args: ["a", "please"],
      rest: "a please",
    });
    expect(parseCommand("  /forge status")).toMatchObject({ name: "status" });
  });

  const hidden: [string, string][] = [
    ["an HTML comment", "Thanks!\n\n<!--\n/forge cancel\n-->\n"],
    ["an HTML comment opened on the line before", "Looks good <!-- a note\n/forge budget +500\n-->"],
    ["an unclosed HTML comment (GitHub shows nothing after it)", "<!--\n\n/forge approve"],
    ["an HTML comment after a closed one on the same line", "<!-- a --> text <!--\n/forge cancel\n-->"],
  ];
  for (const [where, body] of hidden) {
    it(`ignores a command hidden in ${where}`, () => {
      expect(parseCommand(body)).toBeUndefined();
    });
  }

  it("obeys a command after an HTML comment closes", () => {
    expect(parseCommand("<!--\n/forge cancel\n-->\n/forge status")).toMatchObject({ name: "status" });
    expect(parseCommand("<!-- note --> and more\n/forge pause")).toMatchObject({ name: "pause" });
  });

  it("reads no more than GitHub keeps of a comment (65,536 characters)", () => {
    expect(parseCommand(`${"x".repeat(70_000)}\n/forge cancel`)).toBeUndefined();
    expect(parseCommand(`${"x\n".repeat(1_000)}/forge pause`)).toMatchObject({ name: "pause" });
  });
});

// ---------------------------------------------------------------- who may command

let h: Harness | undefined;
afterEach(async () => {
  const done = h;
  h = undefined;
  await done?.close();
}, 60_000);

const T = { timeout: 120_000 };
const task = (j: Journal, id: string) => j.tasks.find((t) => t.id === id)!;

async function until<T>(what: string, read: () => Promise<T | undefined>, tries = 150): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const value = await read();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The comments on an issue, by author. */
async function commentsOn(g: Harness, issue: number): Promise<{ by: string; body: string }[]> {
  await g.app.forge.idle();
  const { data } = await g.user.rest.issues.listComments({ owner: OWNER, repo: REPO, issue_number: issue });
  return data.map((c) => ({ by: c.user?.login ?? "", body: c.body ?? "" }));
}

async function reactionsOn(g: Harness, commentId: number): Promise<string[]> {
  const { data } = await g.user.rest.reactions.listForIssueComment({ owner: OWNER, repo: REPO, comment_id: commentId });
  return data.map((r) => `${r.user?.login}:${r.content}`);
}

async function issueOf(g: Harness, label: string): Promise<number> {
  return until(`an issue labelled ${label}`, async () => {
    await g.app.forge.idle();
    const { data } = await g.user.rest.issues.listForRepo({ owner: OWNER, repo: REPO, state: "all", labels: label });
    return data[0]?.number;
  });
}

describe("people without write access", () => {
  it("a reader's /forge commands get a 👎 reaction and no comment; the run is untouched", T, async () => {
    h = await startHarness(() => ({ kind: "never_start" }));
    await h.pushFiles(planFiles("mini", { a: [] }), "Add plan");
    const running = await h.waitFor((x) => task(x, "a").status === "RUNNING");
    const tracker = await issueOf(h, LABELS.tracker);
    const before = (await commentsOn(h, tracker)).filter((c) => c.by === "forge[bot]").length;

    const ids: number[] = [];
    for (const command of ["/forge cancel", "/forge help", "/forge nonsense", "/forge retry a"]) {
      const posted = await h.sim.control.comment("reader", FULL, tracker, command);
      ids.push((posted.body as { id: number }).id);
    }
    for (const id of ids)
      expect(await until("the App's reaction", async () => ((await reactionsOn(h!, id)).length ? reactionsOn(h!, id) : undefined))).toEqual(
        ["forge[bot]:-1"],
      );
    const after = await commentsOn(h, tracker);
    expect(after.filter((c) => c.by === "forge[bot]")).toHaveLength(before);
    expect((await h.app.forge.runtimes.get(FULL)!.engine.state(running.runId))?.state.journal.status).toBe("running");
    expect(h.sim.violations).toEqual([]);
  });
});

describe("closing a Change Request", () => {
  /** A run paused on a Change Request in review mode (its refinery escalated). */
  async function pausedOnCr(): Promise<{ g: Harness; crIssue: number; crId: string; runId: string }> {
    h = await startHarness(
      (id, attempt): Script => (id === "r1" && attempt === 1 ? { kind: "exit", code: 11, error: "needs more" } : { kind: "success" }),
      { config: "cr_mode: review\n" },
    );
    await h.pushFiles(planFiles("mini", { a: [], r1: ["a"] }), "Add plan");
    const paused = await h.waitFor((x) => x.pause.changeRequests.length === 1);
    return { g: h, crIssue: await issueOf(h, LABELS.changeRequest), crId: paused.pause.changeRequests[0]!, runId: paused.runId };
  }

  it("by someone without write access is undone: the issue is reopened, said so once, and the CR stays pending", T, async () => {
    const { g, crIssue, crId, runId } = await pausedOnCr();
    // Triage may close issues, but not decide Change Requests.
    g.sim.control.setCollaborator(FULL, "triager", "triage");
    const state = async () => (await g.user.rest.issues.get({ owner: OWNER, repo: REPO, issue_number: crIssue })).data.state;
    for (let round = 0; round < 2; round++) {
      expect((await g.sim.control.close("triager", FULL, crIssue)).status).toBe(200);
      await until("the issue reopened", async () => ((await state()) === "open" ? true : undefined));
    }
    const said = (await commentsOn(g, crIssue)).filter((c) => c.by === "forge[bot]");
    expect(said).toHaveLength(1);
    expect(said[0]!.body).toMatch(/reopened this Change Request: closing it rejects it, and that needs write access/);
    const j = (await g.app.forge.runtimes.get(FULL)!.engine.state(runId))!.state.journal;
    expect(j.changeRequests.find((c) => c.id === crId)!.status).toBe("pending");
    expect(j.pause.changeRequests).toEqual([crId]);
    expect(g.sim.violations).toEqual([]);
  });

  it("whose webhook was lost is judged the same way by the reconciler: the closer's access decides", T, async () => {
    const { g, crIssue, crId, runId } = await pausedOnCr();
    g.sim.control.setCollaborator(FULL, "triager", "triage");
    g.sim.control.faults({ webhookDropRate: 1 });
    expect((await g.sim.control.close("triager", FULL, crIssue)).status).toBe(200);
    g.sim.control.resetFaults();
    await g.app.forge.tickRepository(OWNER, REPO);
    await g.app.forge.idle();
    expect((await g.user.rest.issues.get({ owner: OWNER, repo: REPO, issue_number: crIssue })).data.state).toBe("open");
    expect((await commentsOn(g, crIssue)).filter((c) => c.by === "forge[bot]")).toHaveLength(1);
    const j = (await g.app.forge.runtimes.get(FULL)!.engine.state(runId))!.state.journal;
    expect(j.changeRequests.find((c) => c.id === crId)!.status).toBe("pending");

    // A writer's close, lost the same way, rejects it at the next pass.
    g.sim.control.faults({ webhookDropRate: 1 });
    await g.sim.control.close("octocat", FULL, crIssue);
    g.sim.control.resetFaults();
    await g.app.forge.tickRepository(OWNER, REPO);
    const done = await g.waitFor((x) => x.changeRequests.find((c) => c.id === crId)?.status === "rejected");
    expect(done.pause.changeRequests).toEqual([]);
  });

  it("by someone with write access rejects the CR and the run goes on", T, async () => {
    const { g, crIssue, crId } = await pausedOnCr();
    await g.sim.control.close("octocat", FULL, crIssue);
    const done = await g.waitFor((x) => x.status === "completed");
    expect(done.changeRequests.find((c) => c.id === crId)!.status).toBe("rejected");
    expect((await g.user.rest.issues.get({ owner: OWNER, repo: REPO, issue_number: crIssue })).data.state).toBe("closed");
  });
});
