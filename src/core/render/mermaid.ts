/**
 * A plan's DAG as a Mermaid `flowchart TD`, optionally coloured by task status. Used by `forge graph`
 * and by the run tracker issue. Pure: nodes and statuses in, text out.
 */
import type { TaskStatus } from "../schemas/common.js";

/** What the chart needs of a node: dag.json nodes and the journal's plan nodes both fit. */
export interface MermaidNode {
  id: string;
  /** dag.json says `type`, the journal says `kind`; either marks a refinery. */
  type?: "task" | "refinery";
  kind?: "task" | "refinery";
  dependencies: readonly string[];
  title?: string;
}

export interface MermaidOptions {
  /** Show each node's title under its id (when it has one). */
  titles?: boolean;
}

/** Fill, stroke and text colours per status (GitHub's palette, readable in light and dark themes). */
export const STATUS_STYLES: Record<TaskStatus, string> = {
  PENDING: "fill:#eaeef2,stroke:#8c959f,color:#24292f",
  RUNNING: "fill:#ddf4ff,stroke:#0969da,color:#0a3069",
  DONE: "fill:#dafbe1,stroke:#4ac26b,color:#116329",
  MERGE_READY: "fill:#a7f3d0,stroke:#1a7f37,color:#044f1e",
  MERGED: "fill:#1f883d,stroke:#116329,color:#ffffff",
  FAILED: "fill:#ffebe9,stroke:#cf222e,color:#82071e",
  STALE: "fill:#fff8c5,stroke:#bf8700,color:#7d4e00",
};

/**
 * Mermaid source of the DAG. Edges point from a dependency to its dependent (the order work flows).
 * Tasks are rectangles, refineries hexagons. Node ids in the chart are `n<index>`: plan ids may hold
 * `.` and words such as `end` that Mermaid would misread; the plan id is the label.
 */
export function renderMermaid(
  nodes: readonly MermaidNode[],
  statuses?: ReadonlyMap<string, TaskStatus> | Readonly<Record<string, TaskStatus>>,
  options: MermaidOptions = {},
): string {
  const key = new Map<string, string>();
  nodes.forEach((n, i) => {
    if (!key.has(n.id)) key.set(n.id, `n${i}`);
  });
  const lines = ["flowchart TD"];
  nodes.forEach((n, i) => {
    const k = `n${i}`;
    if (key.get(n.id) !== k) return; // a repeated id is drawn once
    const label = escapeLabel(n.id) + (options.titles && n.title ? `<br/>${escapeLabel(n.title)}` : "");
    const refinery = (n.type ?? n.kind) === "refinery";
    lines.push(refinery ? `  ${k}{{"${label}"}}` : `  ${k}["${label}"]`);
  });
  for (const n of nodes) {
    const to = key.get(n.id)!;
    for (const d of n.dependencies) {
      const from = key.get(d);
      if (from !== undefined && from !== to) lines.push(`  ${from} --> ${to}`);
    }
  }
  if (statuses) {
    const get = statuses instanceof Map ? (id: string) => statuses.get(id) : (id: string) => (statuses as Record<string, TaskStatus>)[id];
    const byStatus = new Map<TaskStatus, string[]>();
    for (const [id, k] of key) {
      const s = get(id);
      if (s === undefined) continue;
      const list = byStatus.get(s) ?? [];
      list.push(k);
      byStatus.set(s, list);
    }
    for (const status of Object.keys(STATUS_STYLES) as TaskStatus[]) {
      const members = byStatus.get(status);
      if (!members) continue;
      const cls = status.toLowerCase();
      lines.push(`  classDef ${cls} ${STATUS_STYLES[status]}`);
      lines.push(`  class ${members.join(",")} ${cls}`);
    }
  }
  return lines.join("\n") + "\n";
}

/** Mermaid labels take `#name;` entities; a raw `"` would end the label and `<>` would read as HTML. */
function escapeLabel(text: string): string {
  return text.replace(/#/g, "#35;").replace(/"/g, "#quot;").replace(/</g, "#lt;").replace(/>/g, "#gt;");
}

/**
 * What Mermaid refuses to draw with its default configuration (which GitHub uses): a flowchart of
 * more than `maxEdges` edges, or a diagram whose text is longer than `maxTextSize` characters.
 * GitHub then shows an error in place of the chart.
 */
export const MERMAID_LIMITS = { maxEdges: 500, maxTextSize: 50_000 } as const;

/** The share of Mermaid's limits a chart may use: the margin keeps it clear of them. */
const LIMIT_SHARE = 0.8;

/** The number of edges `renderMermaid` draws for `nodes` (without drawing them). */
export function mermaidEdgeCount(nodes: readonly MermaidNode[]): number {
  const ids = new Set(nodes.map((n) => n.id));
  let edges = 0;
  for (const n of nodes) for (const d of n.dependencies) if (d !== n.id && ids.has(d)) edges++;
  return edges;
}

/** Whether Mermaid draws `text` (a chart with `edges` edges), with a margin of a fifth below each limit. */
export function fitsMermaid(text: string, edges: number): boolean {
  return edges <= MERMAID_LIMITS.maxEdges * LIMIT_SHARE && text.length <= MERMAID_LIMITS.maxTextSize * LIMIT_SHARE;
}

/** The wave of each node: 1 for a node without dependencies, else 1 + the highest wave of its dependencies. */
export function waves(nodes: readonly MermaidNode[]): number[] {
  const index = new Map<string, number>();
  nodes.forEach((n, i) => {
    if (!index.has(n.id)) index.set(n.id, i);
  });
  // Kahn's algorithm: a node's wave is final once every dependency's is (overlays may append a
  // node that an earlier node depends on, so the nodes' order is not the DAG's).
  const waiting = nodes.map(() => 0);
  const dependents: number[][] = nodes.map(() => []);
  nodes.forEach((n, i) => {
    for (const d of n.dependencies) {
      const from = index.get(d);
      if (from === undefined || from === i) continue;
      waiting[i]!++;
      dependents[from]!.push(i);
    }
  });
  const wave = nodes.map(() => 1);
  const ready = nodes.flatMap((_, i) => (waiting[i] === 0 ? [i] : []));
  for (let k = 0; k < ready.length; k++) {
    const from = ready[k]!;
    for (const to of dependents[from]!) {
      wave[to] = Math.max(wave[to]!, wave[from]! + 1);
      if (--waiting[to]! === 0) ready.push(to);
    }
  }
  // A cycle (never in a valid plan) leaves its nodes waiting: they go after every other wave.
  if (ready.length < nodes.length) {
    const last = Math.max(0, ...ready.map((i) => wave[i]!));
    nodes.forEach((_, i) => {
      if (waiting[i]! > 0) wave[i] = last + 1;
    });
  }
  return wave;
}

/** The most groups a summary draws: waves beyond it are drawn in bands of consecutive waves. */
export const SUMMARY_MAX_GROUPS = 40;

/** The order in which a group's counts are listed. */
const COUNT_ORDER: readonly TaskStatus[] = ["MERGED", "MERGE_READY", "DONE", "RUNNING", "STALE", "FAILED", "PENDING"];

/** Worst first: a group is coloured by the first of these that one of its tasks has. */
export const WORST_FIRST: readonly TaskStatus[] = ["FAILED", "STALE", "PENDING", "RUNNING", "DONE", "MERGE_READY", "MERGED"];

/** One node of a summary chart: consecutive waves `from`–`to` and their tasks' statuses. */
export interface SummaryGroup {
  from: number;
  to: number;
  tasks: number;
  counts: Partial<Record<TaskStatus, number>>;
  worst?: TaskStatus;
}

/**
 * The DAG summarised by wave — a task's depth in the DAG — for plans too big for Mermaid to draw
 * node by node. Waves rather than the refinery that integrates a task: every node has exactly one
 * wave (a task may feed several refineries or none, and a plan need not have refineries at all),
 * waves are the order in which work can flow, so their counts read as the run's progress front, and
 * their number is the critical path's length, which banding bounds.
 *
 * One node per wave (or band of consecutive waves, past `SUMMARY_MAX_GROUPS`) with its tasks'
 * counts by status, coloured by the group's worst status (`WORST_FIRST`). Edges join consecutive
 * groups: every task of wave w > 1 depends on a task of wave w − 1, and an edge skipping waves is
 * implied by the chain, so drawing it would only add lines.
 */
export function summarizeByWave(
  nodes: readonly MermaidNode[],
  statuses: ReadonlyMap<string, TaskStatus>,
  maxGroups = SUMMARY_MAX_GROUPS,
  /** `waves(nodes)`, when the caller keeps it (it depends on the plan alone). */
  wave: readonly number[] = waves(nodes),
): SummaryGroup[] {
  const deepest = Math.max(0, ...wave);
  const band = Math.max(1, Math.ceil(deepest / maxGroups));
  const groups: SummaryGroup[] = [];
  for (let w = 1; w <= deepest; w += band) groups.push({ from: w, to: Math.min(deepest, w + band - 1), tasks: 0, counts: {} });
  nodes.forEach((n, i) => {
    const g = groups[Math.floor((wave[i]! - 1) / band)]!;
    g.tasks++;
    const s = statuses.get(n.id);
    if (s !== undefined) g.counts[s] = (g.counts[s] ?? 0) + 1;
  });
  for (const g of groups) g.worst = WORST_FIRST.find((s) => g.counts[s]);
  return groups;
}

/** Mermaid source of `summarizeByWave`'s groups: a chain of boxes, coloured like `renderMermaid`'s nodes. */
export function renderWaveSummary(groups: readonly SummaryGroup[]): string {
  const lines = ["flowchart TD"];
  groups.forEach((g, i) => {
    const waves = g.from === g.to ? `wave ${g.from}` : `waves ${g.from}–${g.to}`;
    const counts = COUNT_ORDER.filter((s) => g.counts[s])
      .map((s) => `${g.counts[s]} ${s.toLowerCase().replace("_", " ")}`)
      .join(", ");
    lines.push(`  w${i}["${waves}: ${g.tasks} task${g.tasks === 1 ? "" : "s"}${counts ? `<br/>${counts}` : ""}"]`);
  });
  for (let i = 1; i < groups.length; i++) lines.push(`  w${i - 1} --> w${i}`);
  for (const status of Object.keys(STATUS_STYLES) as TaskStatus[]) {
    const members = groups.flatMap((g, i) => (g.worst === status ? [`w${i}`] : []));
    if (!members.length) continue;
    const cls = status.toLowerCase();
    lines.push(`  classDef ${cls} ${STATUS_STYLES[status]}`);
    lines.push(`  class ${members.join(",")} ${cls}`);
  }
  return lines.join("\n") + "\n";
}
