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
