import { describe, expect, it } from "vitest";
import { startRun } from "../../src/core/decide/index.js";
import { joinRun, JournalPartsError, partPath, rememberWritten, sha256, splitRun, type Whole } from "../../src/core/journal-parts.js";
import type { TaskState } from "../../src/core/journal.js";
import { forgeConfigSchema } from "../../src/core/schemas/config.js";
import { newRun } from "../helpers/world.js";

/** A started run of `n` tasks in a chain of tens (each depends on the one before, every tenth starts one). */
function whole(n: number): Whole {
  const nodes = Array.from({ length: n }, (_, i) => ({
    id: `t${i}`,
    kind: "task" as const,
    agentType: "2" as const,
    dependencies: i % 10 === 0 ? [] : [`t${i - 1}`],
  }));
  const j = startRun(newRun(nodes), 0, forgeConfigSchema.parse({ max_parallel_agents: 5 })).journal;
  return { nodes: j.plan.nodes, tasks: j.tasks, checkRuns: { "t0:1": 11, "_followup-1:1": 99 } };
}

function stored(files: Map<string, string>) {
  return async (hash: string) => files.get(partPath(hash)) ?? null;
}

function write(files: Map<string, string>, parts: { path: string; content: string }[]) {
  for (const p of parts) files.set(p.path, p.content);
}

const merged = (t: TaskState): TaskState => ({ ...t, status: "MERGED", attempt: 1, dispatchedAttempt: 1, mergeSha: "f".repeat(40) });

describe("a big run's journal in parts", () => {
  it("splits into content-addressed parts and the live nodes, and joins back to the same run", async () => {
    const w = whole(1_050);
    const s = splitRun(w, undefined, { partSize: 500, liveMax: 50 });
    expect(s.split.parts).toHaveLength(3);
    expect(s.write.map((p) => p.path)).toEqual(s.split.parts.map(partPath));
    for (const p of s.write) expect(p.path).toBe(partPath(sha256(p.content)));
    // Only the RUNNING tasks travel in journal.json: a job finds its own task there.
    const running = w.tasks.filter((t) => t.status === "RUNNING").map((t) => t.id);
    expect(running).toHaveLength(5);
    expect(s.live.tasks.map((t) => t.id)).toEqual(running);
    expect(s.live.nodes.map((n) => n.id)).toEqual(running);
    // A follow-up's check run belongs to no node: it stays in journal.json.
    expect(s.live.checkRuns).toEqual({ "t0:1": 11, "_followup-1:1": 99 });

    const files = new Map<string, string>();
    write(files, s.write);
    const joined = await joinRun(s.live, s.split, stored(files));
    expect(joined.whole).toEqual(w);
  });

  it("a write carries what changed: a few changes travel live, more fold into one layer, layers compact into new parts of the ranges they touched", async () => {
    const w = whole(1_500);
    const first = splitRun(w, undefined, { partSize: 500, liveMax: 20 });
    const files = new Map<string, string>();
    write(files, first.write);

    // Three tasks of the second part merge: no part is written, they travel live.
    const tasks = w.tasks.slice();
    for (const i of [600, 601, 602]) tasks[i] = merged(tasks[i]!);
    const small = splitRun({ ...w, tasks }, first.base, { partSize: 500, liveMax: 20 });
    expect(small.write).toEqual([]);
    expect(small.split.parts).toEqual(first.split.parts);
    expect(small.split.live).toEqual(expect.arrayContaining([600, 601, 602]));
    expect((await joinRun(small.live, small.split, stored(files))).whole.tasks).toEqual(tasks);

    // Thirty more: past liveMax, the writer folds them into one layer of just the changed nodes.
    for (let i = 610; i < 640; i++) tasks[i] = merged(tasks[i]!);
    const fold = splitRun({ ...w, tasks }, small.base, { partSize: 500, liveMax: 20, layersMax: 2 });
    expect(fold.write).toHaveLength(1);
    expect(fold.split.parts).toEqual(first.split.parts);
    expect(fold.split.layers).toHaveLength(1);
    const layer = JSON.parse(fold.write[0]!.content) as { layer: number[] };
    expect(layer.layer).toHaveLength(33);
    expect(fold.write[0]!.content.length).toBeLessThan(first.write[1]!.content.length / 5);
    expect(fold.live.tasks.every((t) => t.status === "RUNNING")).toBe(true);
    write(files, fold.write);
    expect((await joinRun(fold.live, fold.split, stored(files))).whole.tasks).toEqual(tasks);

    // Another fold (tasks of the third part), then a third: past layersMax, the writer compacts the
    // layers into new parts of the ranges they touched — the first part is kept by hash.
    for (let i = 1_100; i < 1_130; i++) tasks[i] = merged(tasks[i]!);
    const fold2 = splitRun({ ...w, tasks }, fold.base, { partSize: 500, liveMax: 20, layersMax: 2 });
    expect(fold2.split.layers).toHaveLength(2);
    write(files, fold2.write);
    for (let i = 1_200; i < 1_230; i++) tasks[i] = merged(tasks[i]!);
    const compact = splitRun({ ...w, tasks }, fold2.base, { partSize: 500, liveMax: 20, layersMax: 2 });
    expect(compact.split.layers).toEqual([]);
    expect(compact.write).toHaveLength(2);
    expect(compact.split.parts[0]).toBe(first.split.parts[0]);
    expect(compact.split.parts[1]).not.toBe(first.split.parts[1]);
    expect(compact.split.parts[2]).not.toBe(first.split.parts[2]);
    write(files, compact.write);
    expect((await joinRun(compact.live, compact.split, stored(files))).whole.tasks).toEqual(tasks);
    // A reader that has never seen the run gets the same from the files alone.
    expect((await joinRun(fold2.live, fold2.split, stored(files))).whole.tasks.slice(0, 1_130)).toEqual(tasks.slice(0, 1_130));
  });

  it("the bytes of journal.json's nodes do not grow with the plan", () => {
    const size = (n: number) => {
      const w = whole(n);
      const base = splitRun(w, undefined).base;
      const tasks = w.tasks.slice();
      tasks[3] = merged(tasks[3]!);
      return JSON.stringify(splitRun({ ...w, tasks }, base).live).length;
    };
    const [a, b] = [size(1_000), size(10_000)];
    expect(Math.abs(a - b)).toBeLessThan(200);
    expect(b).toBeLessThan(5_000);
  });

  it("new nodes (an overlay) are written into the parts that hold them", async () => {
    const w = whole(600);
    const first = splitRun(w, undefined, { partSize: 500 });
    const files = new Map<string, string>();
    write(files, first.write);
    const extra = { id: "x1", kind: "task" as const, agentType: "1" as const, title: "", dependencies: ["t599"], paths: [], priority: 0 };
    const grown: Whole = {
      ...w,
      nodes: [...w.nodes, extra],
      tasks: [...w.tasks, { id: "x1", status: "PENDING", attempt: 0, retries: 0, blockers: 1, dispatchedAttempt: 0 }],
    };
    const s = splitRun(grown, first.base, { partSize: 500 });
    expect(s.split.nodes).toBe(601);
    expect(s.write).toHaveLength(1);
    write(files, s.write);
    expect((await joinRun(s.live, s.split, stored(files))).whole).toEqual(grown);
  });

  it("refuses a part that does not match its hash, a missing part, and a split that does not add up", async () => {
    const w = whole(700);
    const s = splitRun(w, undefined, { partSize: 500 });
    const files = new Map<string, string>();
    write(files, s.write);
    const [first] = s.write;
    // Someone with contents: write pushes a part of their own under the journal's name for it.
    const forged = JSON.parse(first!.content) as { tasks: TaskState[] };
    forged.tasks[0] = merged(forged.tasks[0]!);
    files.set(first!.path, JSON.stringify(forged) + "\n");
    await expect(joinRun(s.live, s.split, stored(files))).rejects.toThrow(/does not match its hash/);

    files.delete(first!.path);
    await expect(joinRun(s.live, s.split, stored(files))).rejects.toThrow(JournalPartsError);

    write(files, s.write);
    await expect(joinRun(s.live, { ...s.split, nodes: 701 }, stored(files))).rejects.toThrow(/holds 200 nodes where 201 were expected/);
    await expect(joinRun(s.live, { ...s.split, live: [...s.split.live, 3] }, stored(files))).rejects.toThrow(/split.live names/);
  });

  it("a part read once is not read again", async () => {
    const w = whole(1_000);
    const s = splitRun(w, undefined, { partSize: 500 });
    const files = new Map<string, string>();
    write(files, s.write);
    let reads = 0;
    const cache = new Map();
    const read = async (hash: string) => {
      reads++;
      return files.get(partPath(hash)) ?? null;
    };
    await joinRun(s.live, s.split, read, cache);
    await joinRun(s.live, s.split, read, cache);
    expect(reads).toBe(2);
  });
});

describe("parts a process wrote", () => {
  it("are not read back: a join finds them in the cache, and a cached part is never taken for a layer or the reverse", async () => {
    const w = whole(1_000);
    const s = splitRun(w, undefined, { partSize: 500 });
    const tasks = w.tasks.slice();
    for (let i = 600; i < 640; i++) tasks[i] = merged(tasks[i]!);
    const fold = splitRun({ ...w, tasks }, s.base, { partSize: 500, liveMax: 20 });
    const cache = new Map();
    rememberWritten(cache, [...s.write, ...fold.write]);
    expect(cache.size).toBe(3);
    let reads = 0;
    const joined = await joinRun(
      fold.live,
      fold.split,
      async () => {
        reads++;
        return null;
      },
      cache,
    );
    expect(reads).toBe(0);
    expect(joined.whole).toEqual({ ...w, tasks });
    // A split naming a layer's hash as a part's (or the reverse) does not take the cached object for it.
    const layer = fold.split.layers[0]!;
    await expect(joinRun(fold.live, { ...fold.split, parts: [layer, fold.split.parts[1]!] }, async () => null, cache)).rejects.toThrow(
      JournalPartsError,
    );
  });
});
