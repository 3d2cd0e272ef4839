/**
 * A command is acted on once, however often it is delivered. GitHub's signature covers the body and
 * nothing else — no delivery id, no time — so whoever once saw a signed delivery (a proxy's log, a
 * misconfigured webhook receiver) can send it again under any `X-GitHub-Delivery`, and the App's
 * delivery dedupe (by that header) takes each copy for a new delivery. The run's journal remembers
 * the comments whose commands it took: a replayed `/forge budget +5` adds $5 once.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Journal } from "../../src/core/journal.js";
import { COMMAND_MEMORY } from "../../src/core/journal.js";
import { decide, startRun } from "../../src/core/decide/index.js";
import { forgeConfigSchema } from "../../src/core/schemas/config.js";
import { LABELS } from "../../src/core/layout.js";
import { FULL, OWNER, REPO, startHarness, type Harness } from "../app/helpers.js";
import { planFiles } from "../helpers/plan-files.js";
import { newRun, nodes } from "../helpers/world.js";

let h: Harness | undefined;
afterEach(async () => {
  const done = h;
  h = undefined;
  await done?.close();
}, 60_000);

const task = (j: Journal, id: string) => j.tasks.find((t) => t.id === id)!;

async function until<T>(what: string, read: () => Promise<T | undefined>, tries = 150): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const value = await read();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("a replayed command", () => {
  it("the same signed /forge budget +5 delivered five more times under new delivery ids adds $5 once", { timeout: 120_000 }, async () => {
    h = await startHarness(() => ({ kind: "never_start" }));
    await h.pushFiles(planFiles("mini", { a: [] }), "Add plan");
    const running = await h.waitFor((x) => task(x, "a").status === "RUNNING");
    const tracker = await until("the tracker", async () => {
      await h!.app.forge.idle();
      const { data } = await h!.user.rest.issues.listForRepo({ owner: OWNER, repo: REPO, labels: LABELS.tracker });
      return data[0]?.number;
    });
    const engine = () => h!.app.forge.runtimes.get(FULL)!.engine;

    const posted = await h.sim.control.comment("octocat", FULL, tracker, "/forge budget +5");
    const commentId = (posted.body as { id: number }).id;
    const journal = async () => (await engine().state(running.runId))!.state.journal;
    const raised = await until("the budget raised", async () => ((await journal()).budgetExtraUsd ? journal() : undefined));
    expect(raised.budgetExtraUsd).toBe(5);
    await h.app.forge.idle();

    // The delivery as GitHub signed it, sent again by someone who kept it: same body and signature, new delivery ids.
    const delivery = h.sim.control
      .deliveries({ event: "issue_comment" })
      .find((d) => (d.payload as { comment?: { id: number } }).comment?.id === commentId)!;
    expect(delivery).toBeDefined();
    for (let i = 1; i <= 5; i++) {
      const res = await fetch(h.app.webhookUrl, {
        method: "POST",
        headers: { ...delivery.headers, "x-github-delivery": `${delivery.guid}-replay-${i}` },
        body: delivery.body,
      });
      expect(res.status).toBe(200);
    }
    await h.app.forge.idle();

    const j = await journal();
    expect(j.budgetExtraUsd).toBe(5);
    expect(j.commands?.comments).toContain(commentId);
    // A second command, in a comment of its own, still counts.
    await h.sim.control.comment("octocat", FULL, tracker, "/forge budget +2");
    const again = await until("the second raise", async () => ((await journal()).budgetExtraUsd === 7 ? journal() : undefined));
    expect(again.budgetExtraUsd).toBe(7);
    expect(h.sim.violations).toEqual([]);
  });
});

describe("the journal's memory of commands", () => {
  it("stays bounded: the oldest ids are forgotten below a floor, and a command at or under it is taken as seen", () => {
    const config = forgeConfigSchema.parse({});
    let j = startRun(newRun(nodes({ a: [] }), "run-c"), 0, config).journal;
    const budget = (commentId: number) =>
      decide(j, { kind: "command", command: "budget", actor: "octocat", amountUsd: 1, commentId }, 1_000, config).journal;
    for (let id = 1; id <= COMMAND_MEMORY + 50; id++) j = budget(id);
    expect(j.commands!.comments).toHaveLength(COMMAND_MEMORY);
    expect(j.commands!.below).toBe(50);
    expect(j.budgetExtraUsd).toBe(COMMAND_MEMORY + 50);
    // Forgotten (under the floor) or remembered: acted on already.
    expect(budget(10).budgetExtraUsd).toBe(COMMAND_MEMORY + 50);
    expect(budget(60).budgetExtraUsd).toBe(COMMAND_MEMORY + 50);
    expect(budget(COMMAND_MEMORY + 51).budgetExtraUsd).toBe(COMMAND_MEMORY + 51);
    // The Retry button of a check run carries no comment: it is not remembered, and always acts.
    expect(decide(j, { kind: "command", command: "budget", actor: "octocat", amountUsd: 1 }, 1_000, config).journal.budgetExtraUsd).toBe(
      COMMAND_MEMORY + 51,
    );
  });
});
