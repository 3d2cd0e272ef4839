import { describe, expect, it } from "vitest";
import { GITHUB_PACE, Pacer } from "../../src/github/pacing.js";
import { TestClock } from "../helpers/clock.js";

/** A request that ends when told to. */
function pending() {
  let end!: () => void;
  const done = new Promise<void>((r) => (end = r));
  return { done, end };
}

describe("Forge's pace per installation", () => {
  it("GitHub's secondary limits are the default: 100 at once, 80 content-creating a minute, 500 an hour", () => {
    expect(GITHUB_PACE).toEqual({ concurrent: 100, perMinute: 80, perHour: 500 });
  });

  it("no more than `concurrent` requests in flight; the others start, in order, as those end", async () => {
    const pacer = new Pacer({ concurrent: 3, perMinute: 1_000, perHour: 1_000 });
    const started: number[] = [];
    const gates = Array.from({ length: 7 }, pending);
    const all = gates.map((g, i) =>
      pacer.run(false, async () => {
        started.push(i);
        await g.done;
      }),
    );
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual([0, 1, 2]);
    gates[1]!.end();
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual([0, 1, 2, 3]);
    for (const g of gates) g.end();
    await Promise.all(all);
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(pacer.stats.maxInFlight).toBe(3);
  });

  it("the 81st content-creating request of a minute waits until the first is a minute old; reads do not wait", async () => {
    const clock = new TestClock(1_000_000);
    const pacer = new Pacer(GITHUB_PACE, clock);
    const at: number[] = [];
    const creating = Array.from({ length: 85 }, () => pacer.run(true, async () => void at.push(clock.now())));
    await clock.advance(0);
    expect(at).toHaveLength(80);
    // A read is not held behind the limit… unless it asked after requests already waiting (order is kept).
    const fresh = new Pacer(GITHUB_PACE, clock);
    let read = false;
    await fresh.run(false, async () => void (read = true));
    expect(read).toBe(true);
    await clock.advance(59_999);
    expect(at).toHaveLength(80);
    await clock.advance(1);
    await Promise.all(creating);
    expect(at).toHaveLength(85);
    expect(at.slice(80).every((t) => t === 1_060_000)).toBe(true);
    // In any 60 s, at most 80.
    for (let i = 80; i < at.length; i++) expect(at[i]! - at[i - 80]!).toBeGreaterThanOrEqual(60_000);
    expect(pacer.stats.waited).toBe(5);
    expect(pacer.stats.longestWaitMs).toBe(60_000);
  });

  it("the hour's 501st content-creating request waits for the first to be an hour old", async () => {
    const clock = new TestClock(0);
    const pacer = new Pacer(GITHUB_PACE, clock);
    const at: number[] = [];
    const all = Array.from({ length: 501 }, () => pacer.run(true, async () => void at.push(clock.now())));
    await clock.advance(7 * 60_000);
    expect(at).toHaveLength(500);
    await clock.advance(3_600_000);
    await Promise.all(all);
    expect(at[500]).toBe(3_600_000);
  });
});

describe("an installation's ports share one pace", () => {
  it("two repositories of one installation count against one bound; another installation has its own", async () => {
    const { Octokit } = await import("@octokit/rest");
    const { installationPort } = await import("../../src/github/app-client.js");
    const { newCallStats } = await import("../../src/github/instrument.js");
    let inFlight = 0;
    let most = 0;
    const gate = pending();
    const fetch = async () => {
      inFlight++;
      most = Math.max(most, inFlight);
      await gate.done;
      inFlight--;
      return new Response(JSON.stringify({ ref: "refs/heads/x", object: { sha: "a".repeat(40), type: "commit" } }), {
        status: 200,
        headers: { "content-type": "application/json" },
      });
    };
    const app = { auth: async () => new Octokit({ request: { fetch } }) } as never;
    const pace = { concurrent: 2, perMinute: 80, perHour: 500 };
    const one = await installationPort(app, 1, "o", "a", newCallStats(), undefined, pace);
    const two = await installationPort(app, 1, "o", "b", newCallStats(), undefined, pace);
    const other = await installationPort(app, 2, "o", "c", newCallStats(), undefined, pace);
    const calls = [one.branchHead("x"), two.branchHead("x"), one.branchHead("y"), two.branchHead("y")];
    await new Promise((r) => setTimeout(r, 50));
    expect(most).toBe(2);
    const third = other.branchHead("z");
    await new Promise((r) => setTimeout(r, 50));
    expect(most).toBe(3);
    gate.end();
    await Promise.all([...calls, third]);
  });
});

describe("closing the App", () => {
  it("refuses the requests still waiting for their turn — never sent — and lets those under way finish", async () => {
    const { Octokit } = await import("@octokit/rest");
    const { closePaces, installationPort } = await import("../../src/github/app-client.js");
    const { newCallStats } = await import("../../src/github/instrument.js");
    const { PaceClosedError } = await import("../../src/github/pacing.js");
    const sent: string[] = [];
    const gate = pending();
    const fetch = async (url: string) => {
      sent.push(new URL(url).pathname);
      await gate.done;
      return new Response(JSON.stringify({ ref: "refs/heads/x", object: { sha: "a".repeat(40), type: "commit" } }), {
        status: 200,
        headers: { "content-type": "application/json" },
      });
    };
    const app = { auth: async () => new Octokit({ request: { fetch, retries: 0 } }) } as never;
    const port = await installationPort(app, 1, "o", "a", newCallStats(), undefined, { concurrent: 1, perMinute: 80, perHour: 500 });
    const under = port.branchHead("under-way");
    const held = port.branchHead("held");
    await new Promise((r) => setTimeout(r, 50));
    expect(sent).toEqual(["/repos/o/a/git/ref/heads%2Funder-way"]);
    closePaces(app);
    // The port reports it as it reports any failed call, with the pace's reason.
    await expect(held).rejects.toThrow(new PaceClosedError().message);
    gate.end();
    await expect(under).resolves.toBe("a".repeat(40));
    await new Promise((r) => setTimeout(r, 50));
    expect(sent).toHaveLength(1);
    // A request asked after the close is refused at once.
    await expect(port.branchHead("later")).rejects.toThrow(new PaceClosedError().message);
    expect(sent).toHaveLength(1);
  });

  it("a rate-limit answer holds every request of the installation until GitHub's time, reads and writes, then they go in order", async () => {
    const clock = new TestClock(2_000_000);
    const pacer = new Pacer(GITHUB_PACE, clock);
    const at: Array<[string, number]> = [];
    await pacer.run(true, async () => void at.push(["first", clock.now()]));
    pacer.holdUntil(clock.now() + 30_000);
    expect(pacer.heldUntil).toBe(2_030_000);
    const later = [
      pacer.run(false, async () => void at.push(["read", clock.now()])),
      pacer.run(true, async () => void at.push(["write", clock.now()])),
    ];
    await clock.advance(29_999);
    expect(at.map(([n]) => n)).toEqual(["first"]);
    // An earlier hold does not shorten a later one.
    pacer.holdUntil(2_010_000);
    await clock.advance(1);
    await Promise.all(later);
    expect(at).toEqual([
      ["first", 2_000_000],
      ["read", 2_030_000],
      ["write", 2_030_000],
    ]);
    expect(pacer.stats.holds).toBe(1);
    expect(pacer.heldUntil).toBe(0);
  });
});
