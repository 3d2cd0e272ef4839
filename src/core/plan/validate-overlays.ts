/**
 * Overlays: numbered overlay-NNN.md files, replayed in order over the base plan; each may only add
 * tasks (with their files) and edges.
 */
import { ID_PATTERN } from "../schemas/common.js";
import { fieldLines, type OverlayFile, type ParsedPlan } from "./parse.js";
import { problem, type Location, type Problem } from "./problem.js";
import { checkFrontmatter, lineOfPath, type TaskEntry } from "./validate-files.js";

export interface OverlayEntry {
  overlay: OverlayFile;
  label: string;
  addedTasks: { id: string; pos: number }[];
  edges: { from: string; to: string; pos: number }[];
}

export interface OverlayDep {
  from: string;
  overlay: OverlayEntry;
  pos: number;
}

const OVERLAY_NAME = /^overlay-(\d{3,})$/;

export function collectOverlays(plan: ParsedPlan, out: Problem[]): OverlayEntry[] {
  for (const file of plan.overlayOthers) out.push(problem({ file }, "overlay-numbering", "overlays/ may only hold overlay-NNN.md files"));
  const numbered: { n: number; entry: OverlayEntry }[] = [];
  for (const overlay of plan.overlays) {
    const readable = checkFrontmatter(overlay, out, "invalid-frontmatter");
    const m = OVERLAY_NAME.exec(overlay.name);
    if (!m) {
      out.push(
        problem(
          { file: overlay.file },
          "overlay-numbering",
          "overlay files must be named overlay-NNN.md (overlay-001.md, overlay-002.md, …)",
        ),
      );
      continue;
    }
    const entry: OverlayEntry = { overlay, label: overlay.name, addedTasks: [], edges: [] };
    if (readable) readOverlay(overlay, entry, out);
    numbered.push({ n: Number(m[1]), entry });
  }
  numbered.sort((a, b) => a.n - b.n || (a.entry.label < b.entry.label ? -1 : 1));
  let expected = 1;
  let previous: OverlayEntry | undefined;
  const ordered: OverlayEntry[] = [];
  for (const { n, entry } of numbered) {
    const at = { file: entry.overlay.file };
    if (previous && n === expected - 1) {
      out.push(problem(at, "overlay-numbering", `${entry.overlay.file} has the same number as ${previous.overlay.file}`));
      continue;
    }
    if (n !== expected) {
      const missing = `overlay-${String(expected).padStart(3, "0")}.md`;
      out.push(
        problem(
          at,
          "overlay-numbering",
          previous
            ? `${entry.overlay.file} follows ${previous.overlay.file}: ${missing} is missing`
            : `the first overlay must be ${missing}`,
        ),
      );
    }
    ordered.push(entry);
    previous = entry;
    expected = n + 1;
  }
  return ordered;
}

function readOverlay(overlay: OverlayFile, entry: OverlayEntry, out: Problem[]): void {
  const raw = (typeof overlay.raw === "object" && overlay.raw !== null ? overlay.raw : {}) as Record<string, unknown>;
  const id = overlay.data?.id ?? raw.id;
  if (typeof id === "string" && id !== overlay.name)
    out.push(
      problem(
        { file: overlay.file, line: fieldLines(overlay).id, field: "id" },
        "id-file-mismatch",
        `the overlay's id ${JSON.stringify(id)} must equal its file name ${JSON.stringify(overlay.name)}`,
      ),
    );
  const added = overlay.data?.added_tasks ?? raw.added_tasks;
  if (Array.isArray(added))
    added.forEach((t, pos) => {
      if (typeof t === "string" && ID_PATTERN.test(t)) entry.addedTasks.push({ id: t, pos });
    });
  const edges = overlay.data?.added_edges ?? raw.added_edges;
  if (Array.isArray(edges))
    edges.forEach((e: unknown, pos) => {
      const { from, to } = (typeof e === "object" && e !== null ? e : {}) as Record<string, unknown>;
      if (typeof from === "string" && typeof to === "string" && ID_PATTERN.test(from) && ID_PATTERN.test(to))
        entry.edges.push({ from, to, pos });
    });
}

export function overlayAt(o: OverlayEntry, field: string): Location {
  const lines = fieldLines(o.overlay);
  return {
    file: o.overlay.file,
    line:
      lines[field] ??
      lineOfPath(
        lines,
        field
          .split(/[.[\]]+/)
          .filter(Boolean)
          .map((k) => (/^\d+$/.test(k) ? Number(k) : k)),
      ),
    field,
  };
}

/**
 * Replays the overlays in order over the base plan and reports what is not an addition. Returns
 * which overlay adds each task, the edges overlays add (by dependent), and added tasks without a file.
 */
export function replayOverlays(tasks: Map<string, TaskEntry>, overlays: OverlayEntry[], out: Problem[]) {
  const addedBy = new Map<string, number>();
  const missingFiles = new Set<string>();
  overlays.forEach((o, k) => {
    const inThis = new Set<string>();
    for (const { id, pos } of o.addedTasks) {
      const at = overlayAt(o, `added_tasks[${pos}]`);
      const earlier = addedBy.get(id);
      if (earlier !== undefined && earlier < k) {
        out.push(
          problem(at, "overlay-not-append-only", `task ${JSON.stringify(id)} already existed: ${overlays[earlier]!.label} added it`),
        );
      } else if (inThis.has(id)) {
        out.push(problem(at, "overlay-not-append-only", `task ${JSON.stringify(id)} is listed twice`));
      } else {
        inThis.add(id);
        addedBy.set(id, k);
        if (!tasks.has(id)) {
          missingFiles.add(id);
          out.push(problem(at, "overlay-not-append-only", `added task ${JSON.stringify(id)} has no task file tasks/${id}.md`));
        }
      }
    }
  });
  const when = (id: string): number => addedBy.get(id) ?? -1;
  const describe = (k: number): string => (k < 0 ? "the base plan" : overlays[k]!.label);

  // A task that an older task depends on in its frontmatter existed before the overlay that claims to add it.
  const reported = new Set<string>();
  for (const e of tasks.values()) {
    const te = when(e.id);
    for (const d of e.deps) {
      const td = addedBy.get(d);
      if (td === undefined || td <= te || reported.has(d) || !tasks.has(d)) continue;
      reported.add(d);
      const o = overlays[td]!;
      const pos = o.addedTasks.find((t) => t.id === d)!.pos;
      out.push(
        problem(
          overlayAt(o, `added_tasks[${pos}]`),
          "overlay-not-append-only",
          `task ${JSON.stringify(d)} already existed: ${e.task.file} (from ${describe(te)}) depends on it`,
        ),
      );
    }
  }

  const overlayDeps = new Map<string, OverlayDep[]>();
  overlays.forEach((o, k) => {
    for (const { from, to, pos } of o.edges) {
      const base = `added_edges[${pos}]`;
      let known = true;
      for (const [end, id] of [
        ["from", from],
        ["to", to],
      ] as const) {
        const at = overlayAt(o, `${base}.${end}`);
        if (!tasks.has(id) && !missingFiles.has(id)) {
          out.push(problem(at, "overlay-not-append-only", `edge names unknown task ${JSON.stringify(id)}`));
          known = false;
        } else if (when(id) > k) {
          out.push(problem(at, "overlay-not-append-only", `edge names ${JSON.stringify(id)}, which only ${describe(when(id))} adds`));
        }
      }
      if (!known) continue;
      const target = tasks.get(to);
      const listed = overlayDeps.get(to) ?? [];
      const earlier = listed.find((d) => d.from === from);
      if (target?.deps.includes(from) || earlier) {
        const where = earlier
          ? earlier.overlay === o
            ? `${base} repeats it`
            : `${earlier.overlay.label} added it`
          : `${target!.task.file} lists it`;
        out.push(problem(overlayAt(o, base), "overlay-not-append-only", `edge ${from} → ${to} already existed (${where})`));
        continue;
      }
      listed.push({ from, overlay: o, pos });
      overlayDeps.set(to, listed);
    }
  });
  return { addedBy, overlayDeps, missingFiles };
}
