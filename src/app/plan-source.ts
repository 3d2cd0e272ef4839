/**
 * Reading a plan and the config from the repository at a commit, through the GitHub port. The
 * texts go to the same parser and validator as `forge validate`, so the App and the CLI judge a
 * plan by the same rules.
 */
import { agentList } from "../core/agents.js";
import { createHash } from "node:crypto";
import { CONFIG_PATH, parseConfigText, type ConfigRead } from "../core/config.js";
import type { PlanNodeInput } from "../core/inputs.js";
import type { Journal } from "../core/journal.js";
import type { Dag } from "../core/schemas/dag.js";
import { planDir } from "../core/layout.js";
import { parsePlan, type ParsedPlan, type PlanSource } from "../core/plan/parse.js";
import type { Problem } from "../core/plan/problem.js";
import { validatePlan } from "../core/plan/validate.js";
import type { GitHubPort } from "../github/port.js";

/** `.github/forge.yml` at `ref`, with every default applied; a missing file is the defaults. */
export async function readConfig(port: GitHubPort, ref: string): Promise<ConfigRead> {
  const file = await port.readFile(CONFIG_PATH, ref);
  return parseConfigText(file?.content);
}

/** Files of a plan past which they are read in batches (`GitHubPort.readFiles`): one query reads 100. */
export const BATCH_READ_FROM = 1;

/** Every file of `.forge/plans/<planId>/` validation needs, read at `ref`. */
export async function readPlanSourceFromGitHub(port: GitHubPort, planId: string, ref: string): Promise<PlanSource> {
  const root = planDir(planId);
  const files = new Map<string, string>();
  const dirs = new Set<string>();
  const unreadable: PlanSource["unreadable"] = [];
  const wanted: string[] = [];
  const top = await port.listDirectory(root, ref);
  for (const entry of top) {
    if (entry.type === "file" && (entry.name === "plan.md" || entry.name === "dag.json")) wanted.push(entry.name);
    else if (entry.type === "dir" && (entry.name === "tasks" || entry.name === "overlays" || entry.name === "specs")) {
      dirs.add(entry.name);
      for (const inner of await port.listDirectory(`${root}/${entry.name}`, ref)) {
        const rel = `${entry.name}/${inner.name}`;
        if (inner.type === "dir") dirs.add(rel);
        else if (entry.name !== "specs" && inner.name.endsWith(".md")) wanted.push(rel);
        else files.set(rel, "");
      }
    }
  }
  const got = (rel: string, f: { content: string } | null | undefined) => {
    if (f) files.set(rel, f.content);
    else unreadable.push({ file: rel, message: "cannot be read" });
  };
  // A plan's files in a few queries (100 a query) rather than a call each: a 1,000-task plan cost
  // 1,000 reads, one per task. A single file is read as it is.
  if (port.readFiles && wanted.length > BATCH_READ_FROM) {
    const read = await port.readFiles(
      wanted.map((rel) => `${root}/${rel}`),
      ref,
    );
    for (const rel of wanted) got(rel, read.get(`${root}/${rel}`));
  } else await Promise.all(wanted.map(async (rel) => got(rel, await port.readFile(`${root}/${rel}`, ref))));
  return { planId, files, dirs, unreadable };
}

export interface PlanRead {
  parsed: ParsedPlan;
  problems: Problem[];
  /** The plan as the executor takes it (valid plans only). */
  nodes: PlanNodeInput[];
  dagHash: string;
}

export async function readPlan(port: GitHubPort, planId: string, ref: string): Promise<PlanRead> {
  const source = await readPlanSourceFromGitHub(port, planId, ref);
  const parsed = parsePlan(source);
  const problems = validatePlan(parsed);
  const dagText = source.files.get("dag.json") ?? "";
  const dagHash = createHash("sha256").update(dagText).digest("hex");
  return { parsed, problems, nodes: problems.length ? [] : planNodes(parsed), dagHash };
}

/** dag.json's nodes with titles and paths from their task files. */
export function planNodes(parsed: ParsedPlan): PlanNodeInput[] {
  const tasks = new Map(parsed.tasks.filter((t) => t.data).map((t) => [t.data!.id, t.data!]));
  return (parsed.dag.data?.nodes ?? []).map((n) => {
    const t = tasks.get(n.id);
    return {
      id: n.id,
      kind: n.type,
      agentType: n.agentType,
      dependencies: [...n.dependencies],
      ...(t?.title ? { title: t.title } : {}),
      ...(t?.paths ? { paths: [...t.paths] } : {}),
      ...(t?.budget ? { budget: { ...t.budget } } : {}),
      ...(t?.retry_policy ? { retryPolicy: { ...t.retry_policy } } : {}),
      ...(agentList(t?.agent) ? { agents: agentList(t?.agent)! } : {}),
    };
  });
}

/** The DAG a run pinned (overlays included), as dag.json would hold it: what an amendment must only add to. */
export function pinnedDag(journal: Journal): Dag {
  return {
    version: 1,
    planId: journal.planId,
    nodes: journal.plan.nodes.map((n) => ({ id: n.id, type: n.kind, agentType: n.agentType, dependencies: n.dependencies })),
    metadata: { createdAt: "", createdBy: "", totalTasks: 0, totalRefineries: 0 },
  };
}
