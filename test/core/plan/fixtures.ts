// In-memory plans for the validator's tests: texts in, ParsedPlan out, no disk.
import { parsePlan, type ParsedPlan } from "../../../src/core/plan/parse.js";

export interface TaskSpec {
  id: string;
  type?: "1" | "2" | "3" | "refinery";
  deps?: string[];
}

export function taskText({ id, type = "2", deps = [] }: TaskSpec): string {
  const list = deps.length ? `dependencies:\n${deps.map((d) => `  - ${d}\n`).join("")}` : "dependencies: []\n";
  return (
    `---\nid: ${id}\ntitle: Task ${id}\ntype: ${type}\n${list}acceptance_criteria:\n  - it works\nestimated_complexity: small\n---\n\n` +
    `## Description\n\nDo ${id}.\n\n## Context\n\nNone.\n\n## Instructions\n\n1. Do it.\n`
  );
}

export function dagText(planId: string, nodes: TaskSpec[]): string {
  const refineries = nodes.filter((n) => n.type === "refinery").length;
  return JSON.stringify(
    {
      version: 1,
      planId,
      nodes: nodes.map((n) => ({
        id: n.id,
        type: n.type === "refinery" ? "refinery" : "task",
        agentType: n.type ?? "2",
        dependencies: n.deps ?? [],
      })),
      metadata: {
        createdAt: "2026-11-21T08:00:00Z",
        createdBy: "test",
        totalTasks: nodes.length - refineries,
        totalRefineries: refineries,
      },
    },
    null,
    2,
  );
}

export function overlayText(id: string, addedTasks: string[], edges: [string, string][]): string {
  const tasks = addedTasks.length ? `added_tasks:\n${addedTasks.map((t) => `  - ${t}\n`).join("")}` : "added_tasks: []\n";
  const list = edges.length ? `added_edges:\n${edges.map(([f, t]) => `  - from: ${f}\n    to: ${t}\n`).join("")}` : "added_edges: []\n";
  return `---\nid: ${id}\ncr: cr-test\nemitted_by: captain\napplied_at: 2026-11-21T09:00:00Z\n${tasks}${list}---\n\nWhy.\n`;
}

/** A plan from file texts; `tasks` become task files, and dag.json is `dag` (default: the same nodes). */
export function plan(opts: { planId?: string; tasks: TaskSpec[]; dag?: TaskSpec[] | string; files?: Record<string, string> }): ParsedPlan {
  const planId = opts.planId ?? "test-plan";
  const files = new Map<string, string>([["plan.md", "# Test\n"]]);
  for (const t of opts.tasks) files.set(`tasks/${t.id}.md`, taskText(t));
  files.set("dag.json", typeof opts.dag === "string" ? opts.dag : dagText(planId, opts.dag ?? opts.tasks));
  for (const [k, v] of Object.entries(opts.files ?? {})) files.set(k, v);
  const dirs = new Set(["tasks"]);
  for (const k of files.keys()) if (k.startsWith("overlays/")) dirs.add("overlays");
  return parsePlan({ planId, files, dirs, unreadable: [] });
}
