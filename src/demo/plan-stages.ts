/**
 * A plan folder as `forge demo` replays it: the plan a person commits first (the *base*: every
 * overlay taken out), and for the n-th Change Request of the run, the files the Captain commits
 * (overlay n, its new task files and dag.json with overlays 1..n). A plan without overlays is its own
 * base and expects no Change Request.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { readFrontMatter } from "../core/front-matter.js";
import { planDir } from "../core/layout.js";
import { loadPlan } from "../core/plan/index.js";
import { validatePlan } from "../core/plan/validate.js";
import { formatProblem } from "../core/problems.js";
import type { Dag } from "../core/schemas/dag.js";

export interface OverlayStage {
  id: string;
  /** The Change Request id written in the example; replaced by the run's real CR id. */
  cr: string;
  addedTasks: string[];
  addedEdges: { from: string; to: string }[];
}

export interface PlanStages {
  planId: string;
  dir: string;
  /** Every node of the full plan (overlays applied). */
  dag: Dag;
  overlays: OverlayStage[];
  /** Repository files of the base plan (paths under `.forge/plans/<planId>/`). */
  baseFiles: Record<string, string>;
  /** Files the Captain commits for Change Request number `n` (1-based), with `crId` filled in. */
  captainFiles(n: number, crId: string): Record<string, string>;
  /** The task file text of a node (plan-relative), for directives the demo reads. */
  taskText(id: string): string | undefined;
}

export class DemoPlanError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DemoPlanError";
  }
}

function walk(dir: string, base = dir): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir).sort()) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) Object.assign(out, walk(full, base));
    else out[path.relative(base, full).split(path.sep).join("/")] = readFileSync(full, "utf8");
  }
  return out;
}

function dagText(dag: Dag): string {
  return `${JSON.stringify(dag, null, 2)}\n`;
}

/** The DAG with only the first `keep` overlays applied. */
function dagWith(dag: Dag, overlays: OverlayStage[], keep: number): Dag {
  const later = overlays.slice(keep);
  const dropNodes = new Set(later.flatMap((o) => o.addedTasks));
  const dropEdges = new Set(later.flatMap((o) => o.addedEdges.map((e) => `${e.from}→${e.to}`)));
  const nodes = dag.nodes
    .filter((n) => !dropNodes.has(n.id))
    .map((n) => ({ ...n, dependencies: n.dependencies.filter((d) => !dropEdges.has(`${d}→${n.id}`) && !dropNodes.has(d)) }));
  const refineries = nodes.filter((n) => n.type === "refinery").length;
  return { ...dag, nodes, metadata: { ...dag.metadata, totalTasks: nodes.length - refineries, totalRefineries: refineries } };
}

/** Reads and validates a plan folder (`forge validate` rules) and splits it into stages. */
export async function loadPlanStages(dir: string): Promise<PlanStages> {
  const parsed = await loadPlan(dir);
  const problems = validatePlan(parsed);
  if (problems.length)
    throw new DemoPlanError(`the plan in ${dir} does not pass forge validate:\n${problems.map((p) => `  ${formatProblem(p)}`).join("\n")}`);
  const dag = parsed.dag.data!;
  const files = walk(dir);
  const overlays: OverlayStage[] = Object.keys(files)
    .filter((f) => /^overlays\/overlay-\d{3,}\.md$/.test(f))
    .sort()
    .map((f) => {
      const fm = readFrontMatter(f, files[f]!).data as {
        id: string;
        cr: string;
        added_tasks?: string[];
        added_edges?: { from: string; to: string }[];
      };
      return { id: fm.id, cr: fm.cr, addedTasks: fm.added_tasks ?? [], addedEdges: fm.added_edges ?? [] };
    });
  const root = planDir(dag.planId);
  const added = new Set(overlays.flatMap((o) => o.addedTasks));
  const baseFiles: Record<string, string> = {};
  for (const [rel, text] of Object.entries(files)) {
    if (rel.startsWith("overlays/")) continue;
    if (rel.startsWith("tasks/") && added.has(rel.slice("tasks/".length, -".md".length))) continue;
    baseFiles[`${root}/${rel}`] = rel === "dag.json" ? dagText(dagWith(dag, overlays, 0)) : text;
  }
  return {
    planId: dag.planId,
    dir,
    dag,
    overlays,
    baseFiles,
    captainFiles(n, crId) {
      const o = overlays[n - 1];
      if (!o)
        throw new DemoPlanError(
          `Change Request ${crId} is number ${n} of the run, but the plan has ${overlays.length} overlay(s) to answer with`,
        );
      const out: Record<string, string> = {};
      const name = `overlays/${o.id}.md`;
      // The example names the CR it was written for; the run's CR id is only known now.
      out[`${root}/${name}`] = files[name]!.replace(/^cr:.*$/m, `cr: ${crId}`).replace(
        /^applied_at:.*$/m,
        `applied_at: "${new Date().toISOString()}"`,
      );
      for (const id of o.addedTasks) out[`${root}/tasks/${id}.md`] = files[`tasks/${id}.md`]!;
      out[`${root}/dag.json`] = dagText(dagWith(dag, overlays, n));
      return out;
    },
    taskText: (id) => files[`tasks/${id}.md`],
  };
}
