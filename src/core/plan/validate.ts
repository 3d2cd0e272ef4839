/**
 * The rules of DESIGN.md §2, as pure functions over parsed data (see parse.ts): no I/O, no clock.
 * Linear in the size of the plan; the graph rules use the iterative algorithms of graph.ts.
 *
 * The DAG a plan *means* is built from its files: the base plan is every task file no overlay adds,
 * with its frontmatter dependencies; each overlay, in number order, adds its tasks (from their
 * files) and its edges. dag.json must equal that DAG.
 */
import { ID_PATTERN, agentTypeSchema, type AgentType } from "../schemas/common.js";
import { TASK_BODY_SECTIONS } from "../schemas/task.js";
import type { Dag } from "../schemas/dag.js";
import { findCyclesIndexed, type IndexedGraph } from "./graph.js";
import { fieldLines, type DagFile, type FrontmatterFile, type OverlayFile, type ParsedPlan, type SchemaIssue, type Section, type TaskFile } from "./parse.js";
import { fieldPath, problem, sortProblems, type Location, type PlanRule, type Problem } from "./problem.js";

/**
 * The graph the structural rules check, as parallel arrays (ids unique). `locate(v, j)` says where
 * node v's j-th dependency is written, `locate(v)` where its dependency list is; both are called
 * only for problems, so nothing is allocated per node on a valid plan.
 */
interface StructureInput {
  ids: readonly string[];
  deps: readonly (readonly string[])[];
  refinery: readonly (boolean | undefined)[];
  locate(v: number, j?: number): Location;
}

/** A task file as the graph sees it: fields read leniently, so one bad field does not hide the rest. */
interface TaskEntry {
  id: string;
  task: TaskFile;
  agentType: AgentType | undefined;
  /** Dependencies that are well-formed ids; `depPos` is their index in the frontmatter list when some were dropped. */
  deps: string[];
  depPos?: number[];
  /** False when the dependency list itself is unreadable or invalid: comparisons skip it. */
  depsKnown: boolean;
}

interface OverlayEntry {
  overlay: OverlayFile;
  label: string;
  addedTasks: { id: string; pos: number }[];
  edges: { from: string; to: string; pos: number }[];
}

interface OverlayDep {
  from: string;
  overlay: OverlayEntry;
  pos: number;
}

export function validatePlan(plan: ParsedPlan): Problem[] {
  const out: Problem[] = [];
  checkFiles(plan, out);
  const tasks = collectTasks(plan, out);
  const overlays = collectOverlays(plan, out);
  const { addedBy, overlayDeps, missingFiles } = replayOverlays(tasks, overlays, out);
  checkStructure(planGraph(tasks, overlayDeps), out, missingFiles);
  checkDagJson(plan, tasks, addedBy, overlayDeps, missingFiles, out);
  return sortProblems(out);
}

// ---------------------------------------------------------------------------------------------
// Files, frontmatter and bodies

function checkFiles(plan: ParsedPlan, out: Problem[]): void {
  const unreadable = new Set(plan.unreadable.map((u) => u.file));
  for (const u of plan.unreadable) out.push(problem({ file: u.file }, "unreadable-file", u.message));
  if (!plan.hasPlanMd && !unreadable.has("plan.md")) out.push(problem({ file: "plan.md" }, "missing-file", "plan.md is missing"));
  if (!plan.dag.present && !unreadable.has("dag.json"))
    out.push(problem({ file: "dag.json" }, "missing-file", "dag.json is missing"));
  if (!plan.hasTasksDir) out.push(problem({ file: "tasks/" }, "missing-file", "the tasks/ folder is missing"));
  else if (plan.tasks.length === 0 && plan.unreadable.length === 0)
    out.push(problem({ file: "tasks/" }, "missing-file", "tasks/ holds no task file"));
  for (const file of plan.unexpected)
    out.push(problem({ file }, "unexpected-file", "tasks/ may only hold task files named <taskId>.md"));
}

/** Problems of a frontmatter file that could not be read, or that its schema refused. False when nothing can be read from it. */
function checkFrontmatter(f: FrontmatterFile<unknown>, out: Problem[], idRule: PlanRule): boolean {
  if (f.data !== undefined) return true;
  if (!f.hasFrontmatter) {
    out.push(problem({ file: f.file, line: 1 }, "invalid-frontmatter", "no YAML frontmatter: the file must start with a --- block"));
    return false;
  }
  if (f.refused) {
    out.push(problem({ file: f.file, line: f.refused.line }, "unreadable-yaml", f.refused.message));
    return false;
  }
  if (f.yamlError) {
    out.push(problem({ file: f.file, line: f.yamlError.line }, "unreadable-yaml", `frontmatter is not valid YAML: ${f.yamlError.message}`));
    return false;
  }
  for (const issue of f.issues) {
    const field = fieldPath(issue.path);
    const rule: PlanRule = field === "id" && issue.code === "invalid_format" ? idRule : "invalid-frontmatter";
    out.push(problem({ file: f.file, line: lineOfPath(fieldLines(f), issue.path), field: field || undefined }, rule, issueMessage(issue, f.raw)));
  }
  return true;
}

function issueMessage(issue: SchemaIssue, raw: unknown): string {
  const value = valueAt(raw, issue.path);
  if (issue.code === "invalid_format" && typeof value === "string") return `${JSON.stringify(value)} ${issue.message}`;
  return issue.message;
}

function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let v = raw;
  for (const key of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}

/** Line of the longest prefix of `path` that has one. */
function lineOfPath(lines: Record<string, number>, path: readonly PropertyKey[]): number | undefined {
  for (let n = path.length; n > 0; n--) {
    const line = lines[fieldPath(path.slice(0, n))];
    if (line !== undefined) return line;
  }
  return undefined;
}

function hasIssueUnder(issues: readonly SchemaIssue[], key: string): boolean {
  return issues.some((i) => i.path[0] === key);
}

function collectTasks(plan: ParsedPlan, out: Problem[]): Map<string, TaskEntry> {
  const specs = new Set(plan.specs);
  const entries: TaskEntry[] = [];
  for (const task of plan.tasks) {
    const readable = checkFrontmatter(task, out, "bad-id");
    entries.push(taskEntry(task, readable));
    if (readable) checkSpec(task, specs, out);
    checkSections(task, out);
  }
  // Files named after their id claim it first, so a copied file is the one reported.
  const tasks = new Map<string, TaskEntry>();
  for (const e of entries) if (e.id === e.task.name) tasks.set(e.id, e);
  for (const e of entries) {
    if (e.id === e.task.name) continue;
    const at = { file: e.task.file, line: fieldLines(e.task).id, field: "id" };
    const owner = tasks.get(e.id);
    if (owner) {
      out.push(problem(at, "duplicate-id", `id ${JSON.stringify(e.id)} is already used by ${owner.task.file}`));
      continue;
    }
    out.push(problem(at, "id-file-mismatch", `the file of task ${JSON.stringify(e.id)} must be named tasks/${e.id}.md`));
    tasks.set(e.id, e);
  }
  return tasks;
}

function taskEntry(task: TaskFile, readable: boolean): TaskEntry {
  const entry: TaskEntry = { id: task.name, task, agentType: undefined, deps: [], depsKnown: false };
  if (!readable) return entry;
  if (task.data) {
    entry.id = task.data.id;
    entry.agentType = task.data.type;
    entry.deps = task.data.dependencies;
    entry.depsKnown = true;
    return entry;
  }
  const raw = (typeof task.raw === "object" && task.raw !== null ? task.raw : {}) as Record<string, unknown>;
  if (typeof raw.id === "string") entry.id = raw.id;
  const type = agentTypeSchema.safeParse(raw.type);
  if (type.success) entry.agentType = type.data;
  const deps = raw.dependencies ?? [];
  if (Array.isArray(deps)) {
    deps.forEach((d, j) => {
      if (typeof d === "string" && ID_PATTERN.test(d)) {
        entry.deps.push(d);
        (entry.depPos ??= []).push(j);
      }
    });
    entry.depsKnown = !hasIssueUnder(task.issues, "dependencies");
  }
  return entry;
}

function checkSpec(task: TaskFile, specs: ReadonlySet<string>, out: Problem[]): void {
  const spec = task.data ? task.data.spec : (task.raw as Record<string, unknown> | undefined)?.spec;
  if (typeof spec !== "string" || specs.has(spec) || (spec.startsWith("./") && specs.has(spec.slice(2)))) return;
  out.push(problem({ file: task.file, line: fieldLines(task).spec, field: "spec" }, "unknown-spec", `spec ${JSON.stringify(spec)} is not a file of the plan (specs/…)`));
}

function checkSections(task: TaskFile, out: Problem[]): void {
  const { sections } = task;
  for (const required of TASK_BODY_SECTIONS) {
    let section: Section | undefined;
    for (const s of sections) if (s.title === required) section = s;
    if (!section) for (const s of sections) if (s.title.toLowerCase() === required.toLowerCase()) section = s;
    if (section && !section.empty) continue;
    const field = `## ${required}`;
    if (!section) out.push(problem({ file: task.file, field }, "missing-section", `the body has no ${field} section`));
    else out.push(problem({ file: task.file, line: section.line, field }, "missing-section", `the ${field} section is empty`));
  }
}

// ---------------------------------------------------------------------------------------------
// Overlays

const OVERLAY_NAME = /^overlay-(\d{3,})$/;

function collectOverlays(plan: ParsedPlan, out: Problem[]): OverlayEntry[] {
  for (const file of plan.overlayOthers)
    out.push(problem({ file }, "overlay-numbering", "overlays/ may only hold overlay-NNN.md files"));
  const numbered: { n: number; entry: OverlayEntry }[] = [];
  for (const overlay of plan.overlays) {
    const readable = checkFrontmatter(overlay, out, "invalid-frontmatter");
    const m = OVERLAY_NAME.exec(overlay.name);
    if (!m) {
      out.push(problem({ file: overlay.file }, "overlay-numbering", "overlay files must be named overlay-NNN.md (overlay-001.md, overlay-002.md, …)"));
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
          previous ? `${entry.overlay.file} follows ${previous.overlay.file}: ${missing} is missing` : `the first overlay must be ${missing}`,
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

function overlayAt(o: OverlayEntry, field: string): Location {
  const lines = fieldLines(o.overlay);
  return { file: o.overlay.file, line: lines[field] ?? lineOfPath(lines, field.split(/[.[\]]+/).filter(Boolean).map((k) => (/^\d+$/.test(k) ? Number(k) : k))), field };
}

/**
 * Replays the overlays in order over the base plan and reports what is not an addition. Returns
 * which overlay adds each task, the edges overlays add (by dependent), and added tasks without a file.
 */
function replayOverlays(tasks: Map<string, TaskEntry>, overlays: OverlayEntry[], out: Problem[]) {
  const addedBy = new Map<string, number>();
  const missingFiles = new Set<string>();
  overlays.forEach((o, k) => {
    const inThis = new Set<string>();
    for (const { id, pos } of o.addedTasks) {
      const at = overlayAt(o, `added_tasks[${pos}]`);
      const earlier = addedBy.get(id);
      if (earlier !== undefined && earlier < k) {
        out.push(problem(at, "overlay-not-append-only", `task ${JSON.stringify(id)} already existed: ${overlays[earlier]!.label} added it`));
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
      for (const [end, id] of [["from", from], ["to", to]] as const) {
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
        const where = earlier ? (earlier.overlay === o ? `${base} repeats it` : `${earlier.overlay.label} added it`) : `${target!.task.file} lists it`;
        out.push(problem(overlayAt(o, base), "overlay-not-append-only", `edge ${from} → ${to} already existed (${where})`));
        continue;
      }
      listed.push({ from, overlay: o, pos });
      overlayDeps.set(to, listed);
    }
  });
  return { addedBy, overlayDeps, missingFiles };
}

// ---------------------------------------------------------------------------------------------
// The graph the files describe, and its structural rules

function planGraph(tasks: Map<string, TaskEntry>, overlayDeps: Map<string, OverlayDep[]>): StructureInput {
  const entries = [...tasks.values()];
  const ids: string[] = new Array<string>(entries.length);
  const deps: (readonly string[])[] = new Array<readonly string[]>(entries.length);
  const refinery: (boolean | undefined)[] = new Array<boolean | undefined>(entries.length);
  for (let v = 0; v < entries.length; v++) {
    const e = entries[v]!;
    const extra = overlayDeps.get(e.id);
    ids[v] = e.id;
    deps[v] = extra ? [...e.deps, ...extra.map((d) => d.from)] : e.deps;
    refinery[v] = e.agentType === undefined ? undefined : e.agentType === "refinery";
  }
  return {
    ids,
    deps,
    refinery,
    locate(v, j) {
      const e = entries[v]!;
      const lines = fieldLines(e.task);
      if (j === undefined) return { file: e.task.file, line: lines.dependencies ?? lines.type, field: "dependencies" };
      if (j < e.deps.length) {
        const field = `dependencies[${e.depPos?.[j] ?? j}]`;
        return { file: e.task.file, line: lines[field] ?? lines.dependencies, field };
      }
      const d = overlayDeps.get(e.id)![j - e.deps.length]!;
      return overlayAt(d.overlay, `added_edges[${d.pos}]`);
    },
  };
}

/**
 * Unknown, self and repeated dependencies, refineries without dependencies, cycles. Dependencies on
 * `reported` ids (overlay tasks without a file) were reported already. One pass builds the
 * compressed graph that the cycle search then walks.
 */
function checkStructure(input: StructureInput, out: Problem[], reported: ReadonlySet<string> = new Set()): void {
  const { ids, deps, refinery } = input;
  const n = ids.length;
  const index = new Map<string, number>();
  for (let v = 0; v < n; v++) index.set(ids[v]!, v);
  let edges = 0;
  for (let v = 0; v < n; v++) edges += deps[v]!.length;
  const start = new Int32Array(n + 1);
  const targets = new Int32Array(edges);
  const depIndex = new Int32Array(edges);
  const stamp = new Int32Array(n).fill(-1);
  let e = 0;
  for (let v = 0; v < n; v++) {
    start[v] = e;
    const list = deps[v]!;
    for (let j = 0; j < list.length; j++) {
      const d = list[j]!;
      const w = index.get(d);
      if (w === v) out.push(problem(input.locate(v, j), "self-dependency", `${d} depends on itself`));
      else if (w === undefined) {
        if (!reported.has(d)) out.push(problem(input.locate(v, j), "unknown-dependency", `unknown dependency ${JSON.stringify(d)}: no task has this id`));
      } else if (stamp[w] === v) out.push(problem(input.locate(v, j), "duplicate-dependency", `${JSON.stringify(d)} is listed twice`));
      else {
        stamp[w] = v;
        targets[e] = w;
        depIndex[e++] = j;
      }
    }
    if (refinery[v] && list.length === 0)
      out.push(problem(input.locate(v), "refinery-without-dependencies", `refinery ${ids[v]!} has no dependencies: a refinery integrates upstream work`));
  }
  start[n] = e;
  const g: IndexedGraph = { ids: ids as string[], index, start, targets: targets.subarray(0, e), depIndex: depIndex.subarray(0, e) };
  for (const cycle of findCyclesIndexed(g)) {
    // Point at an edge an overlay added, when there is one: the plan before it was acyclic.
    const edges = cycle.depIndex.map((j, i) => input.locate(cycle.path[i]!, j));
    let at = edges.findIndex((loc) => loc.file.startsWith("overlays/"));
    if (at === -1) at = 0;
    const nodes = [...cycle.path.slice(at, -1), ...cycle.path.slice(0, at + 1)];
    const path = nodes.map((v) => ids[v]!).join(" → ");
    out.push(problem(edges[at]!, "cycle", `dependency cycle ${path} (→ reads "depends on")`));
  }
}

// ---------------------------------------------------------------------------------------------
// dag.json

interface DagEntry {
  id: string;
  pos: number;
  type: "task" | "refinery" | undefined;
  agentType: AgentType | undefined;
  deps: string[];
  depsKnown: boolean;
}

/** dag.json's nodes, read leniently when the schema refused the file. */
function dagEntries(dag: DagFile): DagEntry[] {
  if (dag.data) {
    return dag.data.nodes.map((n, pos) => ({ id: n.id, pos, type: n.type, agentType: n.agentType, deps: n.dependencies, depsKnown: true }));
  }
  const nodes = (dag.raw as { nodes?: unknown } | undefined)?.nodes;
  if (!Array.isArray(nodes)) return [];
  const entries: DagEntry[] = [];
  nodes.forEach((n: unknown, pos) => {
    if (typeof n !== "object" || n === null) return;
    const raw = n as Record<string, unknown>;
    if (typeof raw.id !== "string") return;
    const agentType = agentTypeSchema.safeParse(raw.agentType);
    const deps = Array.isArray(raw.dependencies) ? raw.dependencies.filter((d): d is string => typeof d === "string" && ID_PATTERN.test(d)) : [];
    entries.push({
      id: raw.id,
      pos,
      type: raw.type === "task" || raw.type === "refinery" ? raw.type : undefined,
      agentType: agentType.success ? agentType.data : undefined,
      deps,
      depsKnown: Array.isArray(raw.dependencies) && !dag.issues.some((i) => i.path[0] === "nodes" && i.path[1] === pos && i.path[2] === "dependencies"),
    });
  });
  return entries;
}

function dagAt(dag: DagFile, field: string, id?: string): Location {
  const key = field.replace(/^metadata\./, "");
  return { file: "dag.json", line: (id !== undefined ? dag.idLines[id] : undefined) ?? dag.keyLines[key], field };
}

function checkDagJson(
  plan: ParsedPlan,
  tasks: Map<string, TaskEntry>,
  addedBy: Map<string, number>,
  overlayDeps: Map<string, OverlayDep[]>,
  missingFiles: Set<string>,
  out: Problem[],
): void {
  const dag = plan.dag;
  if (!dag.present) return;
  if (dag.jsonError) {
    out.push(problem({ file: "dag.json", line: dag.jsonError.line }, "unreadable-json", `dag.json is not valid JSON: ${dag.jsonError.message}`));
    return;
  }
  const nodeIds = (dag.raw as { nodes?: { id?: unknown }[] } | undefined)?.nodes;
  for (const issue of dag.issues) {
    const field = fieldPath(issue.path);
    const node = issue.path[0] === "nodes" && typeof issue.path[1] === "number" && Array.isArray(nodeIds) ? nodeIds[issue.path[1]] : undefined;
    const id = typeof node?.id === "string" ? node.id : undefined;
    const isId = issue.path.length === 3 && issue.path[2] === "id" && issue.code === "invalid_format";
    const lastKey = [...issue.path].reverse().find((k) => typeof k === "string");
    const at = dagAt(dag, field, id);
    if (at.line === undefined && typeof lastKey === "string") at.line = dag.keyLines[lastKey];
    out.push(problem({ ...at, field: field || undefined }, isId ? "bad-id" : "invalid-dag", issueMessage(issue, dag.raw)));
  }
  const planId = (dag.raw as { planId?: unknown } | undefined)?.planId;
  if (typeof planId === "string" && planId !== plan.planId)
    out.push(
      problem(dagAt(dag, "planId"), "plan-id-mismatch", `planId ${JSON.stringify(planId)} must equal the plan folder's name ${JSON.stringify(plan.planId)}`),
    );

  const entries = dagEntries(dag);
  const byId = new Map<string, DagEntry>();
  for (const e of entries) {
    const first = byId.get(e.id);
    if (first) out.push(problem(dagAt(dag, `nodes[${e.pos}].id`, e.id), "duplicate-id", `node ${JSON.stringify(e.id)} is also nodes[${first.pos}]`));
    else byId.set(e.id, e);
    if (e.type !== undefined && e.agentType !== undefined && (e.type === "refinery") !== (e.agentType === "refinery"))
      out.push(
        problem(
          dagAt(dag, `nodes[${e.pos}].type`, e.id),
          "type-mismatch",
          `type ${JSON.stringify(e.type)} does not go with agentType ${JSON.stringify(e.agentType)}: type is "refinery" exactly when agentType is`,
        ),
      );
  }
  if (dag.data) {
    let refineries = 0;
    for (const n of dag.data.nodes) if (n.type === "refinery") refineries++;
    const { totalTasks, totalRefineries } = dag.data.metadata;
    const taskCount = dag.data.nodes.length - refineries;
    if (totalTasks !== taskCount)
      out.push(problem(dagAt(dag, "metadata.totalTasks"), "metadata-totals", `totalTasks is ${totalTasks} but dag.json has ${taskCount} task nodes`));
    if (totalRefineries !== refineries)
      out.push(
        problem(dagAt(dag, "metadata.totalRefineries"), "metadata-totals", `totalRefineries is ${totalRefineries} but dag.json has ${refineries} refinery nodes`),
      );
  }
  if (!dag.raw || !Array.isArray((dag.raw as { nodes?: unknown }).nodes)) return;

  // dag.json against the DAG the task files and overlays describe.
  const byOverlay = (id: string) => addedBy.get(id) !== undefined || overlayDeps.has(id);
  for (const t of tasks.values()) {
    const d = byId.get(t.id);
    if (!d) {
      const k = addedBy.get(t.id);
      out.push(
        k !== undefined
          ? problem(dagAt(dag, "nodes"), "dag-not-base-plus-overlays", `task ${JSON.stringify(t.id)}, added by an overlay (${t.task.file}), is missing from dag.json`)
          : problem(dagAt(dag, "nodes"), "dag-disagrees", `task ${JSON.stringify(t.id)} (${t.task.file}) is missing from dag.json`),
      );
      continue;
    }
    if (t.agentType !== undefined && d.agentType !== undefined && t.agentType !== d.agentType)
      out.push(
        problem(
          dagAt(dag, `nodes[${d.pos}].agentType`, d.id),
          "dag-disagrees",
          `agentType ${JSON.stringify(d.agentType)} differs from type ${JSON.stringify(t.agentType)} in ${t.task.file}`,
        ),
      );
    if (!t.depsKnown || !d.depsKnown) continue;
    const extra = overlayDeps.get(t.id);
    if (!extra && sameList(t.deps, d.deps)) continue; // the usual case: same ids in the same order
    const expected = new Set(t.deps);
    if (extra) for (const e of extra) expected.add(e.from);
    const actual = new Set(d.deps);
    const lacking: string[] = [];
    const surplus: string[] = [];
    for (const x of expected) if (!actual.has(x)) lacking.push(x);
    for (const x of actual) if (!expected.has(x)) surplus.push(x);
    if (lacking.length === 0 && surplus.length === 0) continue;
    const parts: string[] = [];
    if (lacking.length) parts.push(`lacks ${lacking.join(", ")}`);
    if (surplus.length) parts.push(`has ${surplus.join(", ")} in excess`);
    const from = byOverlay(t.id) ? `${t.task.file} plus overlays` : t.task.file;
    out.push(
      problem(
        dagAt(dag, `nodes[${d.pos}].dependencies`, d.id),
        byOverlay(t.id) ? "dag-not-base-plus-overlays" : "dag-disagrees",
        `dependencies differ from ${from}: dag.json ${parts.join(" and ")}`,
      ),
    );
  }
  for (const d of byId.values()) {
    if (tasks.has(d.id) || missingFiles.has(d.id)) continue;
    out.push(problem(dagAt(dag, `nodes[${d.pos}]`, d.id), "dag-disagrees", `node ${JSON.stringify(d.id)} has no task file tasks/${d.id}.md`));
  }
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

// ---------------------------------------------------------------------------------------------
// A dag.json on its own, and changes to it

/** The rules a DAG must satisfy on its own: ids, type/agentType, totals, dependencies, refineries, cycles. */
export function validateDag(dag: Dag, file = "dag.json"): Problem[] {
  const out: Problem[] = [];
  const seen = new Map<string, number>();
  const positions: number[] = [];
  const ids: string[] = [];
  const deps: (readonly string[])[] = [];
  const refinery: boolean[] = [];
  let refineries = 0;
  for (let pos = 0; pos < dag.nodes.length; pos++) {
    const n = dag.nodes[pos]!;
    if (n.type === "refinery") refineries++;
    if (!ID_PATTERN.test(n.id)) out.push(problem({ file, field: `nodes[${pos}].id` }, "bad-id", `${JSON.stringify(n.id)} is not a valid id`));
    const first = seen.get(n.id);
    if (first !== undefined) {
      out.push(problem({ file, field: `nodes[${pos}].id` }, "duplicate-id", `node ${JSON.stringify(n.id)} is also nodes[${first}]`));
      continue;
    }
    seen.set(n.id, pos);
    if ((n.type === "refinery") !== (n.agentType === "refinery"))
      out.push(problem({ file, field: `nodes[${pos}].type` }, "type-mismatch", `type ${n.type} does not go with agentType ${n.agentType}`));
    positions.push(pos);
    ids.push(n.id);
    deps.push(n.dependencies);
    refinery.push(n.type === "refinery");
  }
  const taskCount = dag.nodes.length - refineries;
  if (dag.metadata.totalTasks !== taskCount)
    out.push(problem({ file, field: "metadata.totalTasks" }, "metadata-totals", `totalTasks is ${dag.metadata.totalTasks} but there are ${taskCount} task nodes`));
  if (dag.metadata.totalRefineries !== refineries)
    out.push(
      problem({ file, field: "metadata.totalRefineries" }, "metadata-totals", `totalRefineries is ${dag.metadata.totalRefineries} but there are ${refineries} refinery nodes`),
    );
  checkStructure(
    {
      ids,
      deps,
      refinery,
      locate: (v, j) => ({ file, field: j === undefined ? `nodes[${positions[v]!}].dependencies` : `nodes[${positions[v]!}].dependencies[${j}]` }),
    },
    out,
  );
  return sortProblems(out);
}

/**
 * Proves that `after` only adds nodes and edges to `before` (an overlay PR), and is itself a valid
 * DAG. Problems are located in `after`'s dag.json.
 */
export function validateDagChange(before: Dag, after: Dag, file = "dag.json"): Problem[] {
  const out = validateDag(after, file);
  if (before.planId !== after.planId)
    out.push(problem({ file, field: "planId" }, "overlay-not-append-only", `planId changed from ${JSON.stringify(before.planId)} to ${JSON.stringify(after.planId)}`));
  const afterById = new Map<string, { node: Dag["nodes"][number]; pos: number }>();
  after.nodes.forEach((node, pos) => {
    if (!afterById.has(node.id)) afterById.set(node.id, { node, pos });
  });
  for (const old of before.nodes) {
    const now = afterById.get(old.id);
    if (!now) {
      out.push(problem({ file, field: "nodes" }, "overlay-not-append-only", `node ${JSON.stringify(old.id)} was removed`));
      continue;
    }
    const { node, pos } = now;
    if (node.type !== old.type || node.agentType !== old.agentType)
      out.push(
        problem(
          { file, field: `nodes[${pos}].agentType` },
          "overlay-not-append-only",
          `node ${JSON.stringify(old.id)} changed from ${old.type}/${old.agentType} to ${node.type}/${node.agentType}`,
        ),
      );
    const deps = new Set(node.dependencies);
    const removed = old.dependencies.filter((d) => !deps.has(d));
    if (removed.length)
      out.push(
        problem(
          { file, field: `nodes[${pos}].dependencies` },
          "overlay-not-append-only",
          `node ${JSON.stringify(old.id)} lost dependencies ${removed.join(", ")}`,
        ),
      );
  }
  return sortProblems(out);
}
