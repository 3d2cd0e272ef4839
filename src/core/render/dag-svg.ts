/**
 * The run's DAG as inline SVG, drawn without a browser or a network (Mermaid needs both): nodes in
 * layers by longest path from a root, ordered by the mean position of their dependencies, edges as
 * curves from a dependency to its dependent, colours of the tracker's Mermaid chart by status.
 */
import { escapeHtml } from "./html.js";
import { STATUS_STYLES } from "./mermaid.js";
import type { TaskStatus } from "../schemas/common.js";

export interface SvgNode {
  id: string;
  kind: "task" | "refinery";
  title?: string;
  dependencies: readonly string[];
  status?: TaskStatus;
  /** Extra line under the title, e.g. "attempt 2 · PR #7". */
  note?: string;
  href?: string;
}

const W = 168;
const H = 54;
const GAP_X = 28;
const GAP_Y = 56;
const PAD = 16;

/** Text as HTML/SVG. */
export const esc = escapeHtml;

function style(status: TaskStatus | undefined): { fill: string; stroke: string; color: string } {
  const raw = STATUS_STYLES[status ?? "PENDING"];
  const get = (k: string) => new RegExp(`${k}:([^,]+)`).exec(raw)?.[1] ?? "#000";
  return { fill: get("fill"), stroke: get("stroke"), color: get("color") };
}

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

export function dagSvg(nodes: readonly SvgNode[]): string {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const layer = new Map<string, number>();
  const depth = (id: string, seen = new Set<string>()): number => {
    const known = layer.get(id);
    if (known !== undefined) return known;
    if (seen.has(id)) return 0;
    seen.add(id);
    const deps = (byId.get(id)?.dependencies ?? []).filter((d) => byId.has(d));
    const d = deps.length ? 1 + Math.max(...deps.map((x) => depth(x, seen))) : 0;
    layer.set(id, d);
    return d;
  };
  for (const n of nodes) depth(n.id);
  const layers: SvgNode[][] = [];
  for (const n of nodes) (layers[layer.get(n.id)!] ??= []).push(n);
  const x = new Map<string, number>();
  for (const row of layers) {
    if (!row) continue;
    // Under the mean position of its dependencies (plan order breaks ties).
    const key = (n: SvgNode) => {
      const xs = n.dependencies.map((d) => x.get(d)).filter((v): v is number => v !== undefined);
      return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0;
    };
    row.sort((a, b) => key(a) - key(b));
    row.forEach((n, i) => x.set(n.id, i));
  }
  const widest = Math.max(1, ...layers.map((r) => r?.length ?? 0));
  const width = PAD * 2 + widest * W + (widest - 1) * GAP_X;
  const pos = new Map<string, { x: number; y: number }>();
  layers.forEach((row, li) => {
    if (!row) return;
    const rowWidth = row.length * W + (row.length - 1) * GAP_X;
    const left = (width - rowWidth) / 2;
    row.forEach((n, i) => pos.set(n.id, { x: left + i * (W + GAP_X), y: PAD + li * (H + GAP_Y) }));
  });
  const height = PAD * 2 + layers.length * H + (layers.length - 1) * GAP_Y;

  const edges: string[] = [];
  for (const n of nodes) {
    const to = pos.get(n.id)!;
    for (const d of n.dependencies) {
      const from = pos.get(d);
      if (!from) continue;
      const x1 = from.x + W / 2;
      const y1 = from.y + H;
      const x2 = to.x + W / 2;
      const y2 = to.y;
      const my = (y1 + y2) / 2;
      edges.push(
        `<path d="M${x1},${y1} C${x1},${my} ${x2},${my} ${x2},${y2 - 6}" fill="none" stroke="#8c959f" stroke-width="1.5" marker-end="url(#arrow)"/>`,
      );
    }
  }
  const boxes = nodes.map((n) => {
    const p = pos.get(n.id)!;
    const s = style(n.status);
    const shape =
      n.kind === "refinery"
        ? `<polygon points="${p.x + 12},${p.y} ${p.x + W - 12},${p.y} ${p.x + W},${p.y + H / 2} ${p.x + W - 12},${p.y + H} ${p.x + 12},${p.y + H} ${p.x},${p.y + H / 2}" fill="${s.fill}" stroke="${s.stroke}" stroke-width="2"/>`
        : `<rect x="${p.x}" y="${p.y}" width="${W}" height="${H}" rx="6" fill="${s.fill}" stroke="${s.stroke}" stroke-width="2"/>`;
    const cx = p.x + W / 2;
    const text = [
      `<text x="${cx}" y="${p.y + 18}" text-anchor="middle" font-weight="600" fill="${s.color}">${esc(clip(n.id, 22))}</text>`,
      n.title
        ? `<text x="${cx}" y="${p.y + 32}" text-anchor="middle" font-size="10" fill="${s.color}">${esc(clip(n.title, 30))}</text>`
        : "",
      `<text x="${cx}" y="${p.y + 46}" text-anchor="middle" font-size="10" fill="${s.color}">${esc(clip([n.status ?? "PENDING", n.note].filter(Boolean).join(" · "), 30))}</text>`,
    ].join("");
    const inner = `<title>${esc(`${n.id}${n.title ? `: ${n.title}` : ""} — ${n.status ?? "PENDING"}`)}</title>${shape}${text}`;
    return `<g class="node" data-id="${esc(n.id)}" data-status="${n.status ?? "PENDING"}">${n.href ? `<a href="${esc(n.href)}">${inner}</a>` : inner}</g>`;
  });
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" class="forge-dag" role="img" aria-label="The run's DAG" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="-apple-system, Segoe UI, Helvetica, Arial, sans-serif" font-size="12">`,
    `<defs><marker id="arrow" viewBox="0 0 10 10" refX="8" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#8c959f"/></marker></defs>`,
    ...edges,
    ...boxes,
    "</svg>",
  ].join("\n");
}
