/**
 * A plan folder as `forge demo` replays it. Its overlays are of two kinds:
 * - *committed*: part of the plan a person commits, as the App runs `dag.json` with every overlay
 *   the plan folder holds (docs/formats.md#overlays);
 * - *to come*: the last overlays, one for each Change Request the plan's tasks are scripted to raise
 *   (an `escalate` outcome in a `forge-scripted-agent` block, as textkit's `release` has): the
 *   Captain answers the run's n-th Change Request with the n-th of them.
 * The *base* is what the person commits: every to-come overlay taken out (its file, its new task
 * files, its nodes and edges in dag.json). A plan whose tasks escalate nowhere (any plan not
 * written for the scripted agent) is committed whole.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { readFrontMatter } from "../core/front-matter.js";
import { planDir } from "../core/layout.js";
import { loadPlan } from "../core/plan/index.js";
import { validatePlan } from "../core/plan/validate.js";
import { formatProblem } from "../core/problems.js";
import { parseScriptedTask } from "../fake-agents/scripted-agent.js";
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
  /** How many of `overlays`, from the first, the person commits with the plan (the rest are to come). */
  committed: number;
  /** The overlays the Captain writes, in order, answering the run's Change Requests. */
  toCome: OverlayStage[];
  /** Repository files of the base plan (paths under `.forge/plans/<planId>/`). */
  baseFiles: Record<string, string>;
  /**
   * Files the Captain commits for overlay number `n` (1-based, as in `overlay-NNN.md`: the first
   * to come is `committed + 1`), with `crId` filled in.
   */
  captainFiles(n: number, crId: string): Record<string, string>;
  /**
   * The plan's own checks: the distinct `test_command`s of its task files, in DAG order, run on the
   * integration branch at the end; the demo project's `npm test` when no task names one.
   */
  testCommands: string[];
  /** The task file text of a node (plan-relative), for directives the demo reads. */
  taskText(id: string): string | undefined;
  /** The agents a task names in its front matter (`agent:`, one or a list), by task id: only the tasks that name some. */
  taskAgents: Record<string, string[]>;
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

/** How many Change Requests the plan's tasks are scripted to raise: attempts whose outcome is `escalate`. */
export function scriptedEscalations(files: Record<string, string>): number {
  let n = 0;
  for (const [rel, text] of Object.entries(files)) {
    if (!/^tasks\/[^/]+\.md$/.test(rel)) continue;
    try {
      const { directives } = parseScriptedTask(text);
      n += Object.values(directives.attempts).filter((b) => b.outcome === "escalate").length;
      if (directives.default.outcome === "escalate") n++;
    } catch {
      // A block the scripted agent cannot read scripts nothing (the agent itself reports it).
    }
  }
  return n;
}

/** The plan's tasks that name an agent outside `served`, in words (`a names codex; b names opencode`); undefined when none does. */
export function unservedAgents(stages: Pick<PlanStages, "taskAgents">, served: readonly string[]): string | undefined {
  const unserved = Object.entries(stages.taskAgents).filter(([, agents]) => agents.some((a) => !served.includes(a)));
  return unserved.length ? unserved.map(([id, agents]) => `${id} names ${agents.join(", ")}`).join("; ") : undefined;
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
  const byId = new Map(parsed.tasks.map((t) => [t.data?.id, t.data?.test_command]));
  const named = [...new Set(dag.nodes.map((n) => byId.get(n.id)).filter((c): c is string => !!c?.trim()))];
  const committed = Math.max(0, overlays.length - scriptedEscalations(files));
  const toCome = overlays.slice(committed);
  const added = new Set(toCome.flatMap((o) => o.addedTasks));
  const later = new Set(toCome.map((o) => `overlays/${o.id}.md`));
  const baseFiles: Record<string, string> = {};
  for (const [rel, text] of Object.entries(files)) {
    if (later.has(rel)) continue;
    if (rel.startsWith("tasks/") && added.has(rel.slice("tasks/".length, -".md".length))) continue;
    baseFiles[`${root}/${rel}`] = rel === "dag.json" ? (toCome.length ? dagText(dagWith(dag, overlays, committed)) : text) : text;
  }
  return {
    planId: dag.planId,
    dir,
    dag,
    overlays,
    committed,
    toCome,
    baseFiles,
    captainFiles(n, crId) {
      const o = n > committed ? overlays[n - 1] : undefined;
      if (!o)
        throw new DemoPlanError(
          `Change Request ${crId} asks for overlay-${String(n).padStart(3, "0")}, but the plan has ${toCome.length} overlay(s) to come after its ${committed} committed one(s)`,
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
    testCommands: named.length ? named : ["npm test"],
    taskText: (id) => files[`tasks/${id}.md`],
    taskAgents: Object.fromEntries(
      parsed.tasks.flatMap((t) => {
        const agent = t.data?.agent;
        return t.data && agent !== undefined ? [[t.data.id, typeof agent === "string" ? [agent] : [...agent]]] : [];
      }),
    ),
  };
}
