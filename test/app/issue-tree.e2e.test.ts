/**
 * An issue tree as a plan, on the local GitHub: `/forge plan` on a parent with sub-issues and a
 * "blocked by" opens the plan PR built from the tree (no agent); merged by a person, it runs; each
 * sub-issue shows its task's state in one comment, the parent the run's summary, and when the run's
 * final PR merges the sub-issues close. A cycle is refused on the parent, naming the issues.
 */
import { afterEach, describe, expect, it } from "vitest";
import { TRACKER_DEBOUNCE_MAX_MS } from "../../src/app/effects/index.js";
import { planCaptainBranch } from "../../src/core/layout.js";
import { FULL, OWNER, REPO, startHarness, type Harness } from "./helpers.js";

let h: Harness | undefined;
afterEach(async () => {
  const done = h;
  h = undefined;
  await done?.close();
}, 60_000);

const T = { timeout: 180_000 };

async function newIssue(g: Harness, title: string, body = "", labels: string[] = []): Promise<{ id: number; number: number }> {
  const { data } = await g.user.rest.issues.create({ owner: OWNER, repo: REPO, title, body, labels });
  return { id: data.id, number: data.number };
}

async function addSub(g: Harness, parent: number, child: { id: number }): Promise<void> {
  await g.user.request("POST /repos/{owner}/{repo}/issues/{issue_number}/sub_issues", {
    owner: OWNER,
    repo: REPO,
    issue_number: parent,
    sub_issue_id: child.id,
  });
}

async function blockedBy(g: Harness, issue: number, blocker: { id: number }): Promise<void> {
  await g.user.request("POST /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by", {
    owner: OWNER,
    repo: REPO,
    issue_number: issue,
    issue_id: blocker.id,
  });
}

async function forgeSaid(g: Harness, issue: number): Promise<string[]> {
  await g.app.forge.idle();
  const { data } = await g.user.rest.issues.listComments({ owner: OWNER, repo: REPO, issue_number: issue, per_page: 100 });
  return data.filter((c) => c.user?.login === "forge[bot]").map((c) => c.body ?? "");
}

async function until<T>(g: Harness, what: string, read: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 100; i++) {
    const value = await read();
    if (value !== undefined) return value;
    await g.advance(1_000);
  }
  throw new Error(`timed out waiting for ${what}`);
}

const state = async (g: Harness, n: number) => (await g.user.rest.issues.get({ owner: OWNER, repo: REPO, issue_number: n })).data.state;

describe("/forge plan on an issue tree", () => {
  it("opens the plan PR from the tree; the run shows on the sub-issues, which close when the final PR merges", T, async () => {
    h = await startHarness(() => ({ kind: "success" }));
    const g = h;
    const parent = await newIssue(g, "Ship the login", "The login page, in parts.");
    const form = await newIssue(g, "Add the form", "Build the form.\n\n- [ ] the form posts");
    const check = await newIssue(g, "Check the password", "## Steps\nCheck it.", ["forge:type-1"]);
    for (const s of [form, check]) await addSub(g, parent.number, s);
    await blockedBy(g, check.number, form);

    await g.sim.control.comment("octocat", FULL, parent.number, "/forge plan");
    const reply = await until(g, "the plan's reply", async () => (await forgeSaid(g, parent.number)).find((b) => b.includes("Built plan")));
    expect(reply).toContain(`Built plan \`issue-${parent.number}\``);
    // No Captain: the plan came from the tree.
    expect(g.runner.dispatched.filter((d) => d.includes("_captain-plan"))).toEqual([]);
    const pr = (await g.user.rest.pulls.list({ owner: OWNER, repo: REPO, head: `${OWNER}:${planCaptainBranch(parent.number)}` })).data[0]!;
    const files = (await g.user.rest.pulls.listFiles({ owner: OWNER, repo: REPO, pull_number: pr.number })).data.map((f) => f.filename);
    const dir = `.forge/plans/issue-${parent.number}`;
    const formId = `issue-${form.number}-add-the-form`;
    const checkId = `issue-${check.number}-check-the-password`;
    expect(files.sort()).toEqual([`${dir}/dag.json`, `${dir}/plan.md`, `${dir}/tasks/${checkId}.md`, `${dir}/tasks/${formId}.md`].sort());
    const { data: dagFile } = await g.user.rest.repos.getContent({ owner: OWNER, repo: REPO, path: `${dir}/dag.json`, ref: pr.head.sha });
    const dag = JSON.parse(Buffer.from((dagFile as { content: string }).content, "base64").toString("utf8"));
    expect(dag.nodes).toEqual([
      { id: formId, type: "task", agentType: "2", dependencies: [] },
      { id: checkId, type: "task", agentType: "1", dependencies: [formId] },
    ]);

    // A person merges the plan: the run starts and goes to its end.
    await g.user.rest.pulls.merge({ owner: OWNER, repo: REPO, pull_number: pr.number });
    const j = await g.waitFor((x) => x.planId === `issue-${parent.number}` && x.status === "completed");
    await g.advance(TRACKER_DEBOUNCE_MAX_MS);
    await g.app.forge.idle();
    for (const [s, id] of [
      [form, formId],
      [check, checkId],
    ] as const) {
      const said = await forgeSaid(g, s.number);
      expect(said, `#${s.number}`).toHaveLength(1);
      expect(said[0]).toContain(`task \`${id}\` of run \`${j.runId}\``);
      expect(said[0]).toContain("merged into the run's integration branch");
      expect(said[0]).toMatch(/PR #\d+/);
      expect(await state(g, s.number)).toBe("open");
    }
    const summary = (await forgeSaid(g, parent.number)).filter((b) => b.includes("forge:issue"));
    expect(summary).toHaveLength(1);
    expect(summary[0]).toContain("**completed**, 2/2 merged");
    expect(summary[0]).toContain(`| #${check.number} | \`${checkId}\` |`);

    // The final PR merges into main: the sub-issues close, then the parent.
    const final = (await g.user.rest.pulls.list({ owner: OWNER, repo: REPO, head: `${OWNER}:${j.integrationBranch}` })).data[0]!;
    await g.user.rest.pulls.merge({ owner: OWNER, repo: REPO, pull_number: final.number });
    await until(g, "the sub-issues closed", async () => ((await state(g, check.number)) === "closed" ? true : undefined));
    expect(await state(g, form.number)).toBe("closed");
    expect(await state(g, parent.number)).toBe("closed");
    expect((await forgeSaid(g, form.number))[0]).toContain(`merged into \`main\` with #${final.number}`);
  });

  it("refuses a cycle through a group and an open blocker outside the tree, naming the issues on the parent; no PR", T, async () => {
    h = await startHarness(() => ({ kind: "success" }));
    const g = h;
    // #group (with #part) is blocked by #x, and #x by #part: the group would wait for itself.
    const parent = await newIssue(g, "Circular");
    const group = await newIssue(g, "Group");
    const part = await newIssue(g, "Part");
    const x = await newIssue(g, "X");
    const outside = await newIssue(g, "Elsewhere");
    for (const s of [group, x]) await addSub(g, parent.number, s);
    await addSub(g, group.number, part);
    await blockedBy(g, group.number, x);
    await blockedBy(g, x.number, part);
    await blockedBy(g, part.number, outside);
    await g.sim.control.comment("octocat", FULL, parent.number, "/forge plan");
    const reply = await until(g, "the refusal", async () => (await forgeSaid(g, parent.number)).find((b) => b.includes("No plan")));
    expect(reply).toContain(`#${part.number} is blocked by #${outside.number}, which is open and not in the tree of #${parent.number}`);
    // #part inherits its group's blocker #x, which waits for #part.
    expect(reply).toMatch(new RegExp(`cycle: #(${part.number}|${x.number}) → #(${part.number}|${x.number}) → #`));
    const pulls = (await g.user.rest.pulls.list({ owner: OWNER, repo: REPO, state: "all" })).data;
    expect(pulls).toEqual([]);
  });

  it("answers a person who closes a task's issue or changes the tree while the run goes, in one note per issue", T, async () => {
    // The agents never start: the run stays in flight while people act on its issues.
    h = await startHarness(() => ({ kind: "never_start" }));
    const g = h;
    const parent = await newIssue(g, "Two parts");
    const a = await newIssue(g, "Part A");
    const b = await newIssue(g, "Part B");
    for (const s of [a, b]) await addSub(g, parent.number, s);
    await g.sim.control.comment("octocat", FULL, parent.number, "/forge plan");
    await until(g, "the plan's reply", async () => (await forgeSaid(g, parent.number)).find((x) => x.includes("Built plan")));
    const pr = (await g.user.rest.pulls.list({ owner: OWNER, repo: REPO, head: `${OWNER}:${planCaptainBranch(parent.number)}` })).data[0]!;
    await g.user.rest.pulls.merge({ owner: OWNER, repo: REPO, pull_number: pr.number });
    const j = await g.waitFor((x) => x.planId === `issue-${parent.number}` && x.tasks.every((t) => t.status === "RUNNING"));

    await g.user.rest.issues.update({ owner: OWNER, repo: REPO, issue_number: a.number, state: "closed" });
    const closedNote = await until(g, "the note on the closed issue", async () =>
      (await forgeSaid(g, a.number)).find((x) => x.includes("forge:issue-note")),
    );
    expect(closedNote).toContain(`task \`issue-${a.number}-part-a\` of run \`${j.runId}\` is RUNNING: the task goes on`);
    expect(closedNote).toContain("/forge cancel");

    // A "blocked by" added after the plan merged: the plan stays as it is, and the note says how to plan again.
    await blockedBy(g, b.number, a);
    const depNote = await until(g, "the note on the blocked issue", async () =>
      (await forgeSaid(g, b.number)).find((x) => x.includes("forge:issue-note")),
    );
    expect(depNote).toContain(`#${b.number} is now blocked by #${a.number}`);
    expect(depNote).toContain(`\`/forge plan\` on #${parent.number}`);
    // Removed again: the same note, rewritten — not a second one.
    await g.user.request("DELETE /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by/{issue_id}", {
      owner: OWNER,
      repo: REPO,
      issue_number: b.number,
      issue_id: a.id,
    });
    await until(g, "the note rewritten", async () =>
      (await forgeSaid(g, b.number)).some((x) => x.includes("is no longer blocked by")) ? true : undefined,
    );
    expect((await forgeSaid(g, b.number)).filter((x) => x.includes("forge:issue-note"))).toHaveLength(1);
    // The run goes on: nothing was cancelled.
    const last = g.decisions.filter((d) => d.runId === j.runId).at(-1)!.d.journal;
    expect(last.status).toBe("running");
    expect(last.tasks.map((t) => t.status)).toEqual(["RUNNING", "RUNNING"]);
  });
});
