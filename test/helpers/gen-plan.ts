/**
 * Random valid plans for tests and benchmarks: `generateDag` makes an acyclic dag.json with
 * refineries, `writePlan` writes the whole plan folder (plan.md, specs/, tasks/, dag.json).
 */
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Dag, DagNode } from "../../src/core/schemas/dag.js";

/** mulberry32: a small, fast, seedable PRNG (uniform in [0, 1)). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const nodeId = (i: number): string => `t${String(i + 1).padStart(5, "0")}`;

/**
 * A random DAG of `nodes` nodes (`t00001`, `t00002`, …) and `edges` distinct edges (fewer if the
 * graph cannot hold that many). A node only depends on nodes before it, so the graph is acyclic;
 * most edges are local (long chains), some span the whole graph. About one node in twenty is a
 * refinery, and each refinery has at least one dependency. Same arguments, same DAG.
 */
export function generateDag(nodes: number, edges: number, seed: number): Dag {
  const rand = prng(seed);
  const int = (n: number) => Math.floor(rand() * n);
  const deps: number[][] = Array.from({ length: nodes }, () => []);
  const refinery = Array.from({ length: nodes }, (_, i) => i > 0 && rand() < 0.05);
  const seen = new Set<number>();
  let count = 0;
  const add = (from: number, to: number): void => {
    const key = to * nodes + from;
    if (seen.has(key)) return;
    seen.add(key);
    deps[to]!.push(from);
    count++;
  };
  for (let j = 1; j < nodes; j++) if (refinery[j]) add(j - 1 - int(Math.min(j, 20)), j);
  const target = Math.min(edges, (nodes * (nodes - 1)) / 2);
  while (count < target) {
    const to = 1 + int(nodes - 1);
    const from = rand() < 0.7 ? to - 1 - int(Math.min(to, 50)) : int(to);
    add(from, to);
  }
  const dagNodes: DagNode[] = deps.map((d, i) => ({
    id: nodeId(i),
    type: refinery[i] ? "refinery" : "task",
    agentType: refinery[i] ? "refinery" : (["1", "2", "3"] as const)[i % 3]!,
    dependencies: d.sort((a, b) => a - b).map(nodeId),
  }));
  const totalRefineries = refinery.filter(Boolean).length;
  return {
    version: 1,
    planId: `gen-${nodes}-${edges}-${seed}`,
    nodes: dagNodes,
    metadata: { createdAt: "2026-01-01T00:00:00Z", createdBy: "gen-plan", totalTasks: nodes - totalRefineries, totalRefineries },
  };
}

/** The text of a valid task file for `node`. */
export function taskFileText(node: DagNode): string {
  const deps = node.dependencies.length ? `dependencies:\n${node.dependencies.map((d) => `  - ${d}\n`).join("")}` : "dependencies: []\n";
  return (
    `---\nid: ${node.id}\ntitle: Generated task ${node.id}\ntype: ${node.agentType === "refinery" ? "refinery" : node.agentType}\n${deps}` +
    `acceptance_criteria:\n  - src/${node.id}.ts exists and its test passes\nestimated_complexity: small\nspec: specs/generated.md\n` +
    `paths:\n  - src/${node.id}.ts\n---\n\n` +
    `## Description\n\nImplement ${node.id}.\n\n## Context\n\nA generated task of a generated plan.\n\n## Instructions\n\n1. Write src/${node.id}.ts.\n2. Test it.\n`
  );
}

/**
 * Writes a full plan folder for `dag` and returns its path: `dir` itself when it is named after
 * `dag.planId`, else `dir/<planId>` (a plan folder's name is its id).
 */
export async function writePlan(dir: string, dag: Dag): Promise<string> {
  const planDir = path.basename(dir) === dag.planId ? dir : path.join(dir, dag.planId);
  await mkdir(path.join(planDir, "tasks"), { recursive: true });
  await mkdir(path.join(planDir, "specs"), { recursive: true });
  await writeFile(path.join(planDir, "plan.md"), `# ${dag.planId}\n\nA generated plan of ${dag.nodes.length} tasks.\n`);
  await writeFile(path.join(planDir, "specs", "generated.md"), "# Generated spec\n\nEvery task writes one module.\n");
  await writeFile(path.join(planDir, "dag.json"), `${JSON.stringify(dag, null, 2)}\n`);
  const BATCH = 256;
  for (let i = 0; i < dag.nodes.length; i += BATCH) {
    await Promise.all(dag.nodes.slice(i, i + BATCH).map((n) => writeFile(path.join(planDir, "tasks", `${n.id}.md`), taskFileText(n))));
  }
  return planDir;
}

/** A plan folder's files for `dag`, as pushed under `.forge/plans/<planId>/`. */
export async function dagFiles(dag: Dag): Promise<Record<string, string>> {
  const dir = await mkdtemp(path.join(tmpdir(), "forge-bench-plan-"));
  try {
    const planDir = await writePlan(dir, dag);
    const files: Record<string, string> = {};
    const walk = async (d: string): Promise<void> => {
      for (const name of await readdir(d)) {
        const full = path.join(d, name);
        if ((await stat(full)).isDirectory()) await walk(full);
        else files[`.forge/plans/${dag.planId}/${path.relative(planDir, full).split(path.sep).join("/")}`] = await readFile(full, "utf8");
      }
    };
    await walk(planDir);
    return files;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
