/**
 * The report's DAG as geometry, read back from its SVG (src/core/render/dag-svg.ts): each node's box,
 * each edge's polyline; and the check that no edge passes through a box. An edge may touch its own
 * two boxes on their boundary (where it leaves and enters), never any box's inside.
 */
export interface Box {
  id: string;
  x: number;
  y: number;
  w: number;
  h: number;
}
export interface EdgeLine {
  from: string;
  to: string;
  points: { x: number; y: number }[];
}

const num = (s: string) => Number(s);

/** The boxes (a rect, or a refinery's hexagon by its bounds) and edges of one `dagSvg` output. */
export function readDag(svg: string): { boxes: Box[]; edges: EdgeLine[] } {
  const boxes: Box[] = [];
  for (const m of svg.matchAll(/<g class="node" data-id="([^"]+)"[^>]*>([\s\S]*?)<\/g>/g)) {
    const rect = /<rect x="([\d.-]+)" y="([\d.-]+)" width="([\d.]+)" height="([\d.]+)"/.exec(m[2]!);
    if (rect) {
      boxes.push({ id: m[1]!, x: num(rect[1]!), y: num(rect[2]!), w: num(rect[3]!), h: num(rect[4]!) });
      continue;
    }
    const poly = /<polygon points="([^"]+)"/.exec(m[2]!);
    if (!poly) throw new Error(`node ${m[1]} has no rect nor polygon`);
    const pts = poly[1]!.split(" ").map((p) => p.split(",").map(num) as [number, number]);
    const xs = pts.map((p) => p[0]);
    const ys = pts.map((p) => p[1]);
    boxes.push({
      id: m[1]!,
      x: Math.min(...xs),
      y: Math.min(...ys),
      w: Math.max(...xs) - Math.min(...xs),
      h: Math.max(...ys) - Math.min(...ys),
    });
  }
  const edges: EdgeLine[] = [];
  for (const m of svg.matchAll(/<path class="edge" data-from="([^"]+)" data-to="([^"]+)" d="M([^"]+)"/g)) {
    const points = m[3]!.split(" L").map((p) => {
      const [x, y] = p.split(",").map(num);
      return { x: x!, y: y! };
    });
    edges.push({ from: m[1]!, to: m[2]!, points });
  }
  return { boxes, edges };
}

/** Whether the segment a–b has a point strictly inside the box (shrunk by `inset` on each side). */
export function segmentEntersBox(a: { x: number; y: number }, b: { x: number; y: number }, box: Box, inset = 0.5): boolean {
  const [x0, x1, y0, y1] = [box.x + inset, box.x + box.w - inset, box.y + inset, box.y + box.h - inset];
  // Liang–Barsky clipping of the segment against the open rectangle.
  let t0 = 0;
  let t1 = 1;
  const dx = b.x - a.x;
  const dy = b.y - a.y;
  for (const [p, q] of [
    [-dx, a.x - x0],
    [dx, x1 - a.x],
    [-dy, a.y - y0],
    [dy, y1 - a.y],
  ] as const) {
    if (p === 0) {
      if (q <= 0) return false;
      continue;
    }
    const t = q / p;
    if (p < 0) t0 = Math.max(t0, t);
    else t1 = Math.min(t1, t);
    if (t0 >= t1) return false;
  }
  return true;
}

/** Every way an edge of the drawing passes through a box, as `from→to segment i through id`. */
export function edgesThroughBoxes(svg: string): string[] {
  const { boxes, edges } = readDag(svg);
  const out: string[] = [];
  for (const e of edges)
    for (let i = 0; i + 1 < e.points.length; i++)
      for (const box of boxes)
        if (segmentEntersBox(e.points[i]!, e.points[i + 1]!, box)) out.push(`${e.from}→${e.to} segment ${i} through ${box.id}`);
  return out;
}
