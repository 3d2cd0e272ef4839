/**
 * Small plans as files, for tests that push a plan to a repository: `planFiles("mini", { a: [], r: ["a"] })`
 * gives plan.md, dag.json and one task file per node (ids starting with `r` are refineries).
 */
export type Spec = Record<string, string[]>;

const isRefinery = (id: string) => id.startsWith("r");

export function taskFile(id: string, deps: string[]): string {
  const type = isRefinery(id) ? "refinery" : "2";
  return [
    "---",
    `id: ${id}`,
    `title: Task ${id}`,
    `type: ${type}`,
    `dependencies: [${deps.join(", ")}]`,
    "acceptance_criteria:",
    `  - src/${id}.ts exists`,
    "estimated_complexity: small",
    "paths:",
    `  - src/${id}.ts`,
    "---",
    "",
    "## Description",
    "",
    `Write src/${id}.ts.`,
    "",
    "## Context",
    "",
    "A test plan.",
    "",
    "## Instructions",
    "",
    `1. Create src/${id}.ts.`,
    "",
  ].join("\n");
}

export function dagJson(planId: string, spec: Spec): string {
  const nodes = Object.entries(spec).map(([id, dependencies]) => ({
    id,
    type: isRefinery(id) ? "refinery" : "task",
    agentType: isRefinery(id) ? "refinery" : "2",
    dependencies,
  }));
  const refineries = nodes.filter((n) => n.type === "refinery").length;
  return (
    JSON.stringify(
      {
        version: 1,
        planId,
        nodes,
        metadata: {
          createdAt: "2026-11-01T00:00:00Z",
          createdBy: "test",
          totalTasks: nodes.length - refineries,
          totalRefineries: refineries,
        },
      },
      null,
      2,
    ) + "\n"
  );
}

/** Files of `.forge/plans/<planId>/`, keyed by repository path. */
export function planFiles(planId: string, spec: Spec): Record<string, string> {
  const root = `.forge/plans/${planId}`;
  const files: Record<string, string> = {
    [`${root}/plan.md`]: `# ${planId}\n\nA test plan.\n`,
    [`${root}/dag.json`]: dagJson(planId, spec),
  };
  for (const [id, deps] of Object.entries(spec)) files[`${root}/tasks/${id}.md`] = taskFile(id, deps);
  return files;
}

/** An overlay adding `tasks` (with their dependencies) and `edges`, with dag.json updated to match. */
export function overlayFiles(
  planId: string,
  base: Spec,
  n: number,
  cr: string,
  tasks: Spec,
  edges: { from: string; to: string }[],
): Record<string, string> {
  const root = `.forge/plans/${planId}`;
  const id = `overlay-${String(n).padStart(3, "0")}`;
  const next: Spec = { ...base, ...tasks };
  for (const e of edges) next[e.to] = [...(next[e.to] ?? []), e.from];
  const files: Record<string, string> = {
    [`${root}/overlays/${id}.md`]: [
      "---",
      `id: ${id}`,
      `cr: ${cr}`,
      "emitted_by: captain",
      'applied_at: "2026-11-22T00:00:00Z"',
      `added_tasks: [${Object.keys(tasks).join(", ")}]`,
      "added_edges:",
      ...edges.map((e) => `  - { from: ${e.from}, to: ${e.to} }`),
      "---",
      "",
      "Adds the missing work.",
      "",
    ].join("\n"),
    [`${root}/dag.json`]: dagJson(planId, next),
  };
  for (const [tid, deps] of Object.entries(tasks)) files[`${root}/tasks/${tid}.md`] = taskFile(tid, deps);
  return files;
}
