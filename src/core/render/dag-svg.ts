/**
 * The run's DAG as inline SVG, drawn without a browser or a network (Mermaid needs both): laid out
 * top to bottom by dagre (`@dagrejs/dagre`: ranks, an order that keeps crossings few, coordinates),
 * colours of the tracker's Mermaid chart by status. An edge leaves its dependency's bottom and enters
 * its dependent's top; where it spans ranks it runs straight down through each rank between, at the
 * place dagre keeps free for it, and turns only in the gaps between ranks: no edge passes through a
 * box (every box has the same height, and dagre centres a rank's boxes on one line).
 */
import dagre from "@dagrejs/dagre";
import type { TaskStatus } from "../schemas/common.js";
import { escapeHtml } from "./html.js";
import { STATUS_STYLES } from "./mermaid.js";
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

interface Laid {
  width: number;
  height: number;
  /** Top-left corner of each node's box. */
  pos: Map<string, { x: number; y: number }>;
  /** Each edge's polyline, from its dependency's bottom to its dependent's top. */
  edges: { from: string; to: string; points: { x: number; y: number }[] }[];
}

/** The nodes' boxes and the edges' routes, by dagre. */
export function layoutDag(nodes: readonly SvgNode[]): Laid {
  const g = new dagre.graphlib.Graph({ multigraph: false });
  g.setGraph({ rankdir: "TB", nodesep: GAP_X, ranksep: GAP_Y, edgesep: 12, marginx: PAD, marginy: PAD });
  g.setDefaultEdgeLabel(() => ({}));
  const ids = new Set(nodes.map((n) => n.id));
  for (const n of nodes) g.setNode(n.id, { width: W, height: H });
  for (const n of nodes) for (const d of new Set(n.dependencies)) if (ids.has(d) && d !== n.id) g.setEdge(d, n.id);
  dagre.layout(g);
  const pos = new Map<string, { x: number; y: number }>();
  for (const n of nodes) {
    const l = g.node(n.id);
    pos.set(n.id, { x: l.x! - W / 2, y: l.y! - H / 2 });
  }
  // The ranks' centres: where boxes are. dagre's other points lie in the gaps between ranks.
  const rankCentres = new Set(nodes.map((n) => g.node(n.id).y!));
  const edges: Laid["edges"] = [];
  for (const e of g.edges()) {
    const from = pos.get(e.v)!;
    const to = pos.get(e.w)!;
    const route = g.edge(e).points ?? [];
    const inBox = (x: number | undefined, box: { x: number }) => Math.min(box.x + W - 8, Math.max(box.x + 8, x ?? box.x + W / 2));
    // Out of the dependency's bottom, into the dependent's top, where dagre has them meet the box.
    const points = [{ x: inBox(route[0]?.x, from), y: from.y + H }];
    for (const p of route.slice(1, -1))
      if (rankCentres.has(p.y)) points.push({ x: p.x, y: p.y - H / 2 }, { x: p.x, y: p.y + H / 2 });
      else points.push({ x: p.x, y: p.y });
    points.push({ x: inBox(route.at(-1)?.x, to), y: to.y });
    edges.push({ from: e.v, to: e.w, points });
  }
  // dagre sizes the drawing by its boxes; an edge routed round the outside can lie beyond them.
  const xs = [...[...pos.values()].flatMap((p) => [p.x, p.x + W]), ...edges.flatMap((e) => e.points.map((p) => p.x))];
  const ys = [...[...pos.values()].flatMap((p) => [p.y, p.y + H]), ...edges.flatMap((e) => e.points.map((p) => p.y))];
  const [dx, dy] = [PAD - Math.min(...xs), PAD - Math.min(...ys)];
  for (const p of [...pos.values(), ...edges.flatMap((e) => e.points)]) {
    p.x += dx;
    p.y += dy;
  }
  return { width: Math.ceil(Math.max(...xs) + dx + PAD), height: Math.ceil(Math.max(...ys) + dy + PAD), pos, edges };
}

const r1 = (n: number) => Math.round(n * 10) / 10;

export function dagSvg(nodes: readonly SvgNode[]): string {
  const { width, height, pos, edges: routes } = layoutDag(nodes);
  const edges = routes.map(
    (e) =>
      `<path class="edge" data-from="${esc(e.from)}" data-to="${esc(e.to)}" d="M${e.points.map((p) => `${r1(p.x)},${r1(p.y)}`).join(" L")}" fill="none" stroke="#8c959f" stroke-width="1.5" stroke-linejoin="round" marker-end="url(#arrow)"/>`,
  );
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
    `<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#8c959f"/></marker></defs>`,
    ...edges,
    ...boxes,
    "</svg>",
  ].join("\n");
}
