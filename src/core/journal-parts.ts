/**
 * A big run's journal in parts, so that a write costs what changed, not the plan.
 *
 * Up to `SPLIT_AT` nodes the whole stored run travels in `journal.json`. Past it, each node's plan
 * entry, task state and check-run ids live in **parts**: files of `PART_SIZE` consecutive nodes on
 * the state branch, named by the sha256 of their content (`parts/<sha256>.json`), written once and
 * never changed. `journal.json` then carries only the **live** nodes — those whose state differs from
 * their part, and every RUNNING one (a job reads its own task there) — and `split`: the node count,
 * the part size and the parts' hashes in order. When more than `LIVE_MAX` nodes differ from their
 * parts, the writer folds: it writes a new part for each part holding a changed node (the others are
 * kept by hash) and the live set shrinks to the RUNNING nodes.
 *
 * A reader takes the parts named by the journal (the hash of each is checked against its name, so a
 * part pushed by someone else is refused), lays the live nodes over them, and has the whole run.
 * Parts are content-addressed, so a process keeps those it has read and reads only new ones.
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import { JOURNAL_VERSION, planNodeSchema, taskStateSchema, type PlanNode, type TaskState } from "./journal.js";
import { migratePart } from "./journal-migration.js";

/** Nodes past which the journal is split. */
export const SPLIT_AT = 200;
/** Consecutive nodes per part (a done part of 500 tasks is about 360 kB). */
export const PART_SIZE = 500;
/** Changed nodes `journal.json` carries before the writer folds them into new parts. */
export const LIVE_MAX = 100;
/** Layers kept before the writer compacts them into new parts. */
export const LAYERS_MAX = 16;

export const partPath = (sha256: string) => `parts/${sha256}.json`;
const SHA256 = /^[0-9a-f]{64}$/;

export const journalSplitSchema = z
  .object({
    nodes: z.number().int().min(0).describe("Number of plan nodes in the run."),
    partSize: z.number().int().min(1).describe("Consecutive nodes per part."),
    parts: z.array(z.string().regex(SHA256)).describe("sha256 of each part's file `parts/<sha256>.json`, in node order."),
    layers: z
      .array(z.string().regex(SHA256))
      .default([])
      .describe("sha256 of each layer's file `parts/<sha256>.json`, oldest first: laid over the parts in this order."),
    live: z
      .array(z.number().int().min(0))
      .describe(
        "Index of each node `journal.json` carries (journal.plan.nodes[k] and journal.tasks[k] are node live[k]); they override their parts.",
      ),
  })
  .strict()
  .describe("Present when the run's nodes are kept in parts (docs/formats.md#journal-parts).");
export type JournalSplit = z.infer<typeof journalSplitSchema>;

/** The journal version a part's tasks are of (version 1's parts carry none: ./journal-migration.ts reads them). */
const partVersionSchema = z.literal(JOURNAL_VERSION).describe("The journal version of the part's tasks.");

export const journalPartSchema = z
  .object({
    version: partVersionSchema,
    nodes: z.array(planNodeSchema),
    tasks: z.array(taskStateSchema),
    checkRuns: z.record(z.string(), z.number().int()).describe("Check run id per `<taskId>:<attempt>` of this part's tasks."),
  })
  .strict();
export type JournalPart = z.infer<typeof journalPartSchema>;

export const journalLayerSchema = z
  .object({
    version: partVersionSchema,
    layer: z.array(z.number().int().min(0)).describe("Index of each node the layer holds."),
    nodes: z.array(planNodeSchema),
    tasks: z.array(taskStateSchema),
    checkRuns: z.record(z.string(), z.number().int()).describe("Check run id per `<taskId>:<attempt>` of this layer's tasks."),
  })
  .strict();
export type JournalLayer = z.infer<typeof journalLayerSchema>;

/** The parts as stored: their hashes and what they hold (the objects last written or read). */
export interface PartsBase {
  parts: string[];
  layers: string[];
  /** Indexes the layers hold (their parts are rewritten when the layers are compacted). */
  layered: Set<number>;
  nodes: PlanNode[];
  tasks: TaskState[];
  /** Check run ids the parts hold. */
  checkRuns: Record<string, number>;
  /** Node index by id. */
  index: Map<string, number>;
}

/** The pieces of a stored run the split concerns. */
export interface Whole {
  nodes: PlanNode[];
  tasks: TaskState[];
  checkRuns: Record<string, number>;
}

export interface Split {
  /** What `journal.json` carries. */
  live: Whole;
  split: JournalSplit;
  /** Parts to write before `journal.json` (new content only). */
  write: { path: string; content: string }[];
  base: PartsBase;
}

/** The node a check run key `<taskId>:<attempt>` belongs to; undefined for a follow-up's. */
const keyTask = (key: string, index: Map<string, number>) => index.get(key.slice(0, key.lastIndexOf(":")));

const same = (a: unknown, b: unknown) => a === b || JSON.stringify(a) === JSON.stringify(b);

/** Whether the journal of `nodes` plan nodes is kept in parts. */
export const isSplit = (nodes: number, splitAt = SPLIT_AT) => nodes > splitAt;

export const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

function indexOf(nodes: readonly PlanNode[], base: PartsBase | undefined): Map<string, number> {
  if (base && base.index.size === nodes.length) return base.index;
  return new Map(nodes.map((n, i) => [n.id, i]));
}

/**
 * A run's check runs grouped by node (and the follow-ups', which belong to none), in their order, per
 * check-runs object: the facts are never written in place (a new check run makes a new object), so
 * a write that learned none finds its grouping here instead of walking them all.
 */
interface CheckRunGroups {
  index: Map<string, number>;
  byNode: Map<number, number[]>;
  orphans: number[];
  entries: [string, number][];
}
const groupsOf = new WeakMap<Record<string, number>, CheckRunGroups>();
function checkRunGroups(checkRuns: Record<string, number>, index: Map<string, number>): CheckRunGroups {
  const hit = groupsOf.get(checkRuns);
  if (hit && hit.index === index) return hit;
  const entries = Object.entries(checkRuns);
  const byNode = new Map<number, number[]>();
  const orphans: number[] = [];
  entries.forEach(([key], k) => {
    const i = keyTask(key, index);
    if (i === undefined) orphans.push(k);
    else {
      const list = byNode.get(i);
      if (list) list.push(k);
      else byNode.set(i, [k]);
    }
  });
  const groups = { index, byNode, orphans, entries };
  groupsOf.set(checkRuns, groups);
  return groups;
}

/** The check runs of the nodes `live` (indexes) and the follow-ups', in the check runs' order. */
function liveCheckRuns(whole: Whole, index: Map<string, number>, live: readonly number[]): Record<string, number> {
  const g = checkRunGroups(whole.checkRuns, index);
  const picked = [...g.orphans];
  for (const i of live) picked.push(...(g.byNode.get(i) ?? []));
  picked.sort((a, b) => a - b);
  const out: Record<string, number> = {};
  for (const k of picked) out[g.entries[k]![0]] = g.entries[k]![1];
  return out;
}

/**
 * The nodes whose check runs differ from those the parts hold, per base and check-runs object: both
 * are never changed once made, so the answer holds for as long as neither changes.
 */
const checkRunsChanged = new WeakMap<PartsBase, { checkRuns: Record<string, number>; changed: number[] }>();

/** The indexes whose node, task or check runs differ from what their parts hold. */
function changedSince(whole: Whole, base: PartsBase | undefined, index: Map<string, number>): Set<number> {
  const changed = new Set<number>();
  for (let i = 0; i < whole.nodes.length; i++) {
    const node = whole.nodes[i]!;
    const task = whole.tasks[i]!;
    if (!base || i >= base.nodes.length) changed.add(i);
    else if (base.nodes[i] === node && base.tasks[i] === task) continue;
    else if (!same(base.nodes[i], node) || !same(base.tasks[i], task)) changed.add(i);
    else {
      // Equal content in newer objects: compare by reference next time.
      base.nodes[i] = node;
      base.tasks[i] = task;
    }
  }
  const known = base && checkRunsChanged.get(base);
  if (known && known.checkRuns === whole.checkRuns) {
    for (const i of known.changed) changed.add(i);
    return changed;
  }
  const byCheckRuns: number[] = [];
  for (const [key, id] of Object.entries(whole.checkRuns)) {
    const i = keyTask(key, index);
    if (i !== undefined && base?.checkRuns[key] !== id) byCheckRuns.push(i);
  }
  if (base) checkRunsChanged.set(base, { checkRuns: whole.checkRuns, changed: byCheckRuns });
  for (const i of byCheckRuns) changed.add(i);
  return changed;
}

/** The check runs whose node (by index; undefined for a follow-up's) `keep` accepts. */
function checkRunsWhere(whole: Whole, index: Map<string, number>, keep: (i: number | undefined) => boolean): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, id] of Object.entries(whole.checkRuns)) if (keep(keyTask(key, index))) out[key] = id;
  return out;
}

function partOf(whole: Whole, index: Map<string, number>, from: number, to: number): string {
  const checkRuns = checkRunsWhere(whole, index, (i) => i !== undefined && i >= from && i < to);
  return (
    JSON.stringify({ version: JOURNAL_VERSION, nodes: whole.nodes.slice(from, to), tasks: whole.tasks.slice(from, to), checkRuns }) + "\n"
  );
}

function layerOf(whole: Whole, index: Map<string, number>, layer: number[]): string {
  const held = new Set(layer);
  const checkRuns = checkRunsWhere(whole, index, (i) => i !== undefined && held.has(i));
  const tasks = layer.map((i) => whole.tasks[i]);
  return JSON.stringify({ version: JOURNAL_VERSION, layer, nodes: layer.map((i) => whole.nodes[i]), tasks, checkRuns }) + "\n";
}

/**
 * Split `whole` against the parts already stored (`base`, none for a new run): the live nodes,
 * the parts to write, and the new base. Folds when more than `liveMax` nodes differ from their parts.
 */
export function splitRun(
  whole: Whole,
  base: PartsBase | undefined,
  options: { partSize?: number; liveMax?: number; layersMax?: number } = {},
): Split {
  const partSize = options.partSize ?? PART_SIZE;
  const liveMax = options.liveMax ?? LIVE_MAX;
  const layersMax = options.layersMax ?? LAYERS_MAX;
  const index = indexOf(whole.nodes, base);
  const changed = changedSince(whole, base, index);
  const partCount = Math.ceil(whole.nodes.length / partSize);
  const compact =
    !base ||
    base.nodes.length !== whole.nodes.length ||
    base.parts.length !== partCount ||
    (changed.size > liveMax && base.layers.length >= layersMax);
  const write: Split["write"] = [];
  let next: PartsBase;
  let live: number[];
  if (!compact && changed.size > liveMax) {
    // Fold: one layer of the changed nodes.
    const layer = [...changed].sort((a, b) => a - b);
    const content = layerOf(whole, index, layer);
    const hash = sha256(content);
    write.push({ path: partPath(hash), content });
    // A new base, not an edit of the old: a write that loses its compare-and-swap keeps the old one.
    next = {
      parts: base.parts,
      layers: [...base.layers, hash],
      layered: new Set([...base.layered, ...layer]),
      nodes: base.nodes.slice(),
      tasks: base.tasks.slice(),
      checkRuns: { ...base.checkRuns },
      index,
    };
    for (const i of layer) {
      next.nodes[i] = whole.nodes[i]!;
      next.tasks[i] = whole.tasks[i]!;
    }
    Object.assign(
      next.checkRuns,
      checkRunsWhere(whole, index, (i) => i !== undefined),
    );
    live = [];
  } else if (compact) {
    const dirty = new Set([...changed, ...(base?.layered ?? [])].map((i) => Math.floor(i / partSize)));
    const parts: string[] = [];
    for (let p = 0; p < partCount; p++) {
      if (base && !dirty.has(p) && base.parts[p]) {
        parts.push(base.parts[p]!);
        continue;
      }
      const content = partOf(whole, index, p * partSize, Math.min(whole.nodes.length, (p + 1) * partSize));
      const hash = sha256(content);
      parts.push(hash);
      write.push({ path: partPath(hash), content });
    }
    next = {
      parts,
      layers: [],
      layered: new Set(),
      nodes: whole.nodes.slice(),
      tasks: whole.tasks.slice(),
      checkRuns: { ...whole.checkRuns },
      index,
    };
    live = [];
  } else {
    next = base!;
    live = [...changed];
  }
  for (let i = 0; i < whole.tasks.length; i++) if (whole.tasks[i]!.status === "RUNNING") live.push(i);
  live = [...new Set(live)].sort((a, b) => a - b);
  // The live nodes' check runs, and the follow-ups' (they belong to no part).
  const checkRuns = liveCheckRuns(whole, index, live);
  return {
    live: { nodes: live.map((i) => whole.nodes[i]!), tasks: live.map((i) => whole.tasks[i]!), checkRuns },
    split: { nodes: whole.nodes.length, partSize, parts: next.parts, layers: next.layers, live },
    write,
    base: next,
  };
}

/**
 * Keep the parts and layers this process wrote in the reader's cache (by hash: they never change),
 * so that a journal read again — after a lost compare-and-swap — does not read back what it wrote.
 */
export function rememberWritten(
  cache: Map<string, JournalPart | JournalLayer>,
  written: readonly { path: string; content: string }[],
): void {
  for (const w of written) {
    const hash = sha256(w.content);
    if (w.path !== partPath(hash)) continue;
    if (cache.size > 2_000) cache.clear();
    cache.set(hash, JSON.parse(w.content) as JournalPart | JournalLayer);
  }
}

export class JournalPartsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "JournalPartsError";
  }
}

/**
 * The whole run from the live nodes of `journal.json` and its parts. `readPart(sha256)` gives a
 * part's file text (null when missing); each is checked against its hash and schema.
 */
export async function joinRun(
  live: Whole,
  split: JournalSplit,
  readPart: (hash: string) => Promise<string | null>,
  cache?: Map<string, JournalPart | JournalLayer>,
): Promise<{ whole: Whole; base: PartsBase }> {
  if (split.live.length !== live.nodes.length || split.live.length !== live.tasks.length)
    throw new JournalPartsError(
      `split.live names ${split.live.length} nodes but the journal carries ${live.nodes.length} nodes and ${live.tasks.length} tasks`,
    );
  async function read<S extends typeof journalPartSchema | typeof journalLayerSchema>(
    hash: string,
    schema: S,
    what: string,
  ): Promise<z.infer<S>> {
    // What the cache holds was checked when it was put there (read and parsed here, or written by
    // this process: `rememberWritten`); only its kind is told apart (a layer names its nodes).
    const hit = cache?.get(hash);
    if (hit && "layer" in hit === (schema === journalLayerSchema)) return hit as z.infer<S>;
    const text = await readPart(hash);
    if (text === null) throw new JournalPartsError(`${partPath(hash)} is missing`);
    if (sha256(text) !== hash) throw new JournalPartsError(`${partPath(hash)} does not match its hash: it was not written by Forge`);
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (e) {
      throw new JournalPartsError(`${partPath(hash)} is not JSON: ${(e as Error).message}`);
    }
    // A part a version-1 App wrote holds version-1 tasks. It holds no RUNNING task (those travel in
    // journal.json), and every task version 1 dispatched recorded when: no dispatch time is made up.
    const parsed = schema.safeParse(migratePart(raw, new Date(0).toISOString()));
    if (!parsed.success)
      throw new JournalPartsError(`${partPath(hash)} is not a journal ${what}: ${parsed.error.issues[0]?.message ?? "invalid"}`);
    if (cache) {
      if (cache.size > 2_000) cache.clear();
      cache.set(hash, parsed.data);
    }
    return parsed.data as z.infer<S>;
  }
  const [parts, layers] = await Promise.all([
    Promise.all(split.parts.map((hash) => read(hash, journalPartSchema, "part"))),
    Promise.all(split.layers.map((hash) => read(hash, journalLayerSchema, "layer"))),
  ]);
  const nodes: PlanNode[] = [];
  const tasks: TaskState[] = [];
  const checkRuns: Record<string, number> = {};
  for (const [p, part] of parts.entries()) {
    const expected = Math.min(split.partSize, split.nodes - p * split.partSize);
    if (part.nodes.length !== expected || part.tasks.length !== expected)
      throw new JournalPartsError(`${partPath(split.parts[p]!)} holds ${part.nodes.length} nodes where ${expected} were expected`);
    nodes.push(...part.nodes);
    tasks.push(...part.tasks);
    Object.assign(checkRuns, part.checkRuns);
  }
  if (nodes.length !== split.nodes) throw new JournalPartsError(`the parts hold ${nodes.length} nodes, the journal names ${split.nodes}`);
  const layered = new Set<number>();
  for (const [l, layer] of layers.entries()) {
    if (layer.nodes.length !== layer.layer.length || layer.tasks.length !== layer.layer.length)
      throw new JournalPartsError(`${partPath(split.layers[l]!)} names ${layer.layer.length} nodes but holds ${layer.nodes.length}`);
    for (const [k, i] of layer.layer.entries()) {
      if (i >= nodes.length) throw new JournalPartsError(`${partPath(split.layers[l]!)} names node ${i} of ${nodes.length}`);
      nodes[i] = layer.nodes[k]!;
      tasks[i] = layer.tasks[k]!;
      layered.add(i);
    }
    Object.assign(checkRuns, layer.checkRuns);
  }
  const base: PartsBase = {
    parts: [...split.parts],
    layers: [...split.layers],
    layered,
    nodes: nodes.slice(),
    tasks: tasks.slice(),
    checkRuns: { ...checkRuns },
    index: new Map(nodes.map((n, i) => [n.id, i])),
  };
  for (const [k, i] of split.live.entries()) {
    if (i >= nodes.length) throw new JournalPartsError(`split.live names node ${i} of ${nodes.length}`);
    nodes[i] = live.nodes[k]!;
    tasks[i] = live.tasks[k]!;
  }
  for (const [key, id] of Object.entries(live.checkRuns)) checkRuns[key] = id;
  return { whole: { nodes, tasks, checkRuns }, base };
}
