/**
 * An issue tree as a plan (docs/formats.md#plans-from-an-issue-tree): `/forge plan` on an issue that
 * has sub-issues builds the plan folder from the tree, deterministically and without an agent. Pure:
 * the App reads the tree (src/app/issue-plan.ts) and hands it here as data; the files come back as
 * texts, for the same validator as `forge validate`.
 *
 * - A task per open sub-issue that has no sub-issues of its own: its title, its body as the task's
 *   instructions, its labels choosing its agent type and size (`ISSUE_LABELS`).
 * - A sub-issue with sub-issues of its own is a group. Unlabelled, it is no task: its "blocked by"
 *   applies to every task under it, and what it blocks waits for every task under it. Given a
 *   type label, it is also a task of its own (a refinery with `forge:refinery`) that depends on the
 *   tasks of its children. Up to eight levels, as GitHub nests them.
 * - Edges from "blocked by" within the tree. A closed issue is done: no task, and a "blocked by" on
 *   it is met. An open blocker outside the tree, a cycle, conflicting labels or an issue of another
 *   repository are problems naming the issues, and no plan is built.
 *
 * Issue titles and bodies are untrusted text: bounded here, never parsed as front matter, and the
 * front matter Forge writes is YAML made by `yaml`'s stringify.
 */
import { stringify } from "yaml";
import { stripForgeMarkers } from "../render/as-data.js";
import type { AgentType } from "../schemas/common.js";
import type { Dag } from "../schemas/dag.js";
import type { TaskFrontmatter } from "../schemas/task.js";
import { findCycles } from "./graph.js";

/** An issue the tree names only (a blocker): enough to tell whether it is in the tree and still to be done. */
export interface IssueRef {
  number: number;
  state: "open" | "closed";
  /** Whether it is an issue of the plan's repository. */
  sameRepo: boolean;
}

/** A sub-issue as the App read it, with its own sub-issues and what blocks it. */
export interface IssueTreeNode extends IssueRef {
  title: string;
  body: string;
  labels: readonly string[];
  children: readonly IssueTreeNode[];
  blockedBy: readonly IssueRef[];
}

export interface IssueTree {
  /** The issue `/forge plan` was given: the plan, never a task. */
  parent: { number: number; title: string; body: string };
  children: readonly IssueTreeNode[];
  /** The plan's id (`issue-<n>`, or a fresh one when that folder exists). */
  planId: string;
  /** dag.json's `metadata.createdAt`: the command's time, so the same tree and command give the same files. */
  createdAt: string;
}

/** Labels a sub-issue may carry to choose its task's kind and size; any other label is ignored. */
export const ISSUE_LABELS = {
  type: { "forge:type-1": "1", "forge:type-2": "2", "forge:type-3": "3", "forge:refinery": "refinery" } as Record<string, AgentType>,
  size: { "forge:small": "small", "forge:medium": "medium", "forge:large": "large" } as Record<
    string,
    TaskFrontmatter["estimated_complexity"]
  >,
} as const;

/** Without a type label a task is type 2; without a size label, medium. */
export const DEFAULT_TYPE: AgentType = "2";
export const DEFAULT_SIZE: TaskFrontmatter["estimated_complexity"] = "medium";

/** GitHub nests sub-issues eight levels deep at most; a deeper tree is refused rather than cut. */
export const MAX_DEPTH = 8;
/** At most this many tasks from one tree. */
export const MAX_TREE_TASKS = 500;
/** An issue body is cut to this many characters in its task's instructions. */
export const BODY_LIMIT = 20_000;
/** A title in front matter, at most. */
export const TITLE_LIMIT = 200;
/** Task-list items read as acceptance criteria, at most, each at most `CRITERION_LIMIT` characters. */
export const CRITERIA_LIMIT = 20;
export const CRITERION_LIMIT = 300;

export interface TreePlan {
  planId: string;
  /** Files of the plan folder, by path relative to it (`plan.md`, `dag.json`, `tasks/<id>.md`). */
  files: Map<string, string>;
  /** Task id per issue number. */
  taskOf: Map<number, string>;
}

export type TreePlanResult = { ok: true; plan: TreePlan } | { ok: false; problems: string[] };

/** The task id of an issue: `issue-<n>-<title words>`, at most 48 characters. */
export function issueTaskId(issue: number, title: string): string {
  const slug = title
    .slice(0, 200)
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .slice(0, 30)
    .replace(/^-+|-+$/g, "");
  return slug ? `issue-${issue}-${slug}` : `issue-${issue}`;
}

/** One line of outside text, bounded, without Forge's markers or line breaks. */
function oneLine(text: string, max: number): string {
  const line = stripForgeMarkers(text.slice(0, max * 2))
    .replace(/[\r\n\t]+/g, " ")
    .trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/**
 * An issue body as a task's instructions: bounded, without Forge's markers, and its `#` and `##`
 * headings made `###` and `####`, so no heading of the body can stand for a section of the task
 * file (Description, Context, Instructions).
 */
export function instructionsOf(body: string): string {
  const cut = body.length > BODY_LIMIT ? `${body.slice(0, BODY_LIMIT)}\n\n[… cut at ${BODY_LIMIT} of ${body.length} characters]` : body;
  return stripForgeMarkers(cut.replace(/\r\n?/g, "\n"))
    .split("\n")
    .map((line) => line.replace(/^( {0,3})(#{1,4})(?=[ \t]|$)/, (_m, sp: string, h: string) => `${sp}${"#".repeat(h.length + 2)}`))
    .join("\n")
    .trim();
}

/** The body's task-list items (`- [ ] …`), as acceptance criteria. */
export function criteriaOf(body: string): string[] {
  const out: string[] = [];
  for (const line of body.slice(0, BODY_LIMIT).split("\n")) {
    const m = /^\s{0,6}[-*+] \[[ xX]\] (.{1,2000})$/.exec(line.replace(/\r$/, ""));
    const text = m ? oneLine(m[1]!, CRITERION_LIMIT) : "";
    if (text) out.push(text);
    if (out.length === CRITERIA_LIMIT) break;
  }
  return out;
}

/** The one label of a kind an issue carries, or a problem when it carries several. */
function labelOf<T>(node: IssueTreeNode, table: Record<string, T>, what: string, problems: string[]): T | undefined {
  const found = [...new Set(node.labels.filter((l) => Object.hasOwn(table, l)))].sort();
  if (found.length > 1) problems.push(`#${node.number} has ${found.length} ${what} labels (${found.join(", ")}): keep one`);
  return found.length === 1 ? table[found[0]!] : undefined;
}

interface Planned {
  node: IssueTreeNode;
  id: string;
  type: AgentType;
  size: TaskFrontmatter["estimated_complexity"];
  /** Issue numbers whose completion this task waits for (blockers, its own and its groups'; a group's children). */
  waitsFor: number[];
  /** The ancestors below the parent, nearest first. */
  groups: number[];
}

/** Everything the builder learns walking the tree. */
interface Walk {
  byNumber: Map<number, IssueTreeNode>;
  /** Per issue in the tree, the tasks whose merge completes it (itself, or every task under a group). */
  exits: Map<number, string[]>;
  planned: Planned[];
  problems: string[];
}

/** Walk the tree depth-first, in GitHub's order of sub-issues; `inherited`: the blockers of the groups above. */
function walk(nodes: readonly IssueTreeNode[], depth: number, inherited: readonly IssueRef[], groups: number[], w: Walk): void {
  for (const node of nodes) {
    if (w.byNumber.has(node.number)) {
      w.problems.push(`#${node.number} appears twice in the tree`);
      continue;
    }
    w.byNumber.set(node.number, node);
    if (!node.sameRepo) {
      w.problems.push(`#${node.number} is an issue of another repository: a plan runs in this one; remove it from the tree`);
      continue;
    }
    if (depth > MAX_DEPTH) {
      w.problems.push(`#${node.number} is nested deeper than ${MAX_DEPTH} levels`);
      continue;
    }
    // A closed issue is done, and so is everything under it: known to the tree, planned as nothing.
    if (node.state === "closed") {
      registerDone(node.children, w);
      continue;
    }
    const type = labelOf(node, ISSUE_LABELS.type, "type", w.problems);
    const size = labelOf(node, ISSUE_LABELS.size, "size", w.problems) ?? DEFAULT_SIZE;
    const blockers = [...inherited, ...node.blockedBy];
    const open = node.children.filter((c) => c.state === "open");
    if (node.children.length) walk(node.children, depth + 1, blockers, [node.number, ...groups], w);
    // An unlabelled group is no task; a group whose children are all closed is a task like a leaf.
    if (open.length && type === undefined) continue;
    w.planned.push({
      node,
      id: issueTaskId(node.number, node.title),
      type: type ?? DEFAULT_TYPE,
      size,
      waitsFor: [...blockers.map((b) => b.number), ...open.map((c) => c.number)],
      groups,
    });
  }
}

/** Issues under a closed one: in the tree, done. */
function registerDone(nodes: readonly IssueTreeNode[], w: Walk): void {
  for (const node of nodes) {
    if (w.byNumber.has(node.number)) continue;
    w.byNumber.set(node.number, { ...node, state: "closed" });
    registerDone(node.children, w);
  }
}

/** Per issue, the tasks that complete it: its own, or for an unlabelled group every task under it. */
function exitsOf(node: IssueTreeNode, w: Walk, taskOf: Map<number, string>): string[] {
  const known = w.exits.get(node.number);
  if (known) return known;
  const own = taskOf.get(node.number);
  const done = w.byNumber.get(node.number)?.state === "closed";
  const out = own ? [own] : done ? [] : node.children.flatMap((c) => (c.state === "open" && c.sameRepo ? exitsOf(c, w, taskOf) : []));
  w.exits.set(node.number, out);
  return out;
}

/** Blockers outside the tree that are still open, and cycles of "blocked by" within it, as problems. */
function edgeProblems(tree: IssueTree, w: Walk): void {
  const outside = new Map<number, number[]>();
  const graph: { id: string; dependencies: string[] }[] = [];
  // `inherited`: the blockers of the groups above, each with the group that has it.
  const visit = (nodes: readonly IssueTreeNode[], inherited: ReadonlyMap<number, number>) => {
    for (const n of nodes) {
      if (!n.sameRepo || n.state === "closed") continue;
      const group = inherited.get(n.number);
      if (group !== undefined) w.problems.push(`#${group} is blocked by #${n.number}, one of its own sub-issues`);
      const inside = new Set<string>();
      for (const b of n.blockedBy) {
        const known = w.byNumber.get(b.number);
        if (known?.state === "open") inside.add(String(b.number));
        else if (!known && b.state === "open") outside.set(b.number, [...(outside.get(b.number) ?? []), n.number]);
      }
      for (const b of inherited.keys()) if (b !== n.number) inside.add(String(b));
      // A group completes when its children do: it waits for them.
      const open = n.children.filter((c) => c.sameRepo && c.state === "open");
      graph.push({ id: String(n.number), dependencies: [...inside, ...open.map((c) => String(c.number))] });
      const below = new Map(inherited);
      for (const b of n.blockedBy) if (w.byNumber.get(b.number)?.state === "open" && !below.has(b.number)) below.set(b.number, n.number);
      visit(n.children, below);
    }
  };
  visit(tree.children, new Map());
  for (const [blocker, blocked] of [...outside].sort((a, b) => a[0] - b[0]))
    w.problems.push(
      `${blocked.map((n) => `#${n}`).join(", ")} ${blocked.length > 1 ? "are" : "is"} blocked by #${blocker}, which is open and not in the tree of #${tree.parent.number}: add it to the tree, close it, or remove the dependency`,
    );
  for (const cycle of findCycles(graph))
    w.problems.push(`"blocked by" makes a cycle: ${cycle.map((n) => `#${n}`).join(" → ")} (a group waits for its sub-issues)`);
}

/** The plan folder an issue tree means, or the problems that keep it from being one. */
export function planFromIssueTree(tree: IssueTree): TreePlanResult {
  const w: Walk = { byNumber: new Map(), exits: new Map(), planned: [], problems: [] };
  walk(tree.children, 2, [], [], w);
  if (w.problems.length === 0) edgeProblems(tree, w);
  if (w.problems.length === 0 && w.planned.length === 0)
    w.problems.push(`#${tree.parent.number} has no open sub-issue to plan: every one is closed`);
  if (w.planned.length > MAX_TREE_TASKS)
    w.problems.push(`the tree of #${tree.parent.number} makes ${w.planned.length} tasks, more than ${MAX_TREE_TASKS}`);
  if (w.problems.length) return { ok: false, problems: [...new Set(w.problems)] };

  const taskOf = new Map(w.planned.map((p) => [p.node.number, p.id]));
  const files = new Map<string, string>();
  const nodes: Dag["nodes"] = [];
  for (const p of w.planned) {
    const deps = [...new Set(p.waitsFor.flatMap((n) => (w.byNumber.has(n) ? exitsOf(w.byNumber.get(n)!, w, taskOf) : [])))]
      .filter((d) => d !== p.id)
      .sort();
    nodes.push({ id: p.id, type: p.type === "refinery" ? "refinery" : "task", agentType: p.type, dependencies: deps });
    files.set(`tasks/${p.id}.md`, taskFile(tree, p, deps));
  }
  const dag: Dag = {
    version: 1,
    planId: tree.planId,
    nodes,
    metadata: {
      createdAt: tree.createdAt,
      createdBy: `forge plan from issue #${tree.parent.number}`,
      totalTasks: nodes.filter((n) => n.type === "task").length,
      totalRefineries: nodes.filter((n) => n.type === "refinery").length,
      issue: tree.parent.number,
    },
  };
  files.set("dag.json", `${JSON.stringify(dag, null, 2)}\n`);
  files.set("plan.md", planMd(tree, w.planned));
  return { ok: true, plan: { planId: tree.planId, files, taskOf } };
}

function taskFile(tree: IssueTree, p: Planned, deps: readonly string[]): string {
  const n = p.node;
  const title = oneLine(n.title, TITLE_LIMIT) || `Issue #${n.number}`;
  const front: TaskFrontmatter & { issue: number } = {
    id: p.id,
    title,
    type: p.type,
    dependencies: [...deps],
    acceptance_criteria: criteriaOf(n.body).length ? criteriaOf(n.body) : [`Issue #${n.number} is done as its text describes.`],
    estimated_complexity: p.size,
    issue: n.number,
  };
  const within = [...p.groups, tree.parent.number].map((g) => `#${g}`).join(" within ");
  const blockers = [...new Set(n.blockedBy.map((b) => b.number))].sort((a, b) => a - b);
  return [
    "---",
    stringify(front, { lineWidth: 0 }).trimEnd(),
    "---",
    "",
    "## Description",
    "",
    `${title} (issue #${n.number}).`,
    "",
    "## Context",
    "",
    `Sub-issue #${n.number} of ${within}, planned by \`/forge plan\` on #${tree.parent.number}.`,
    ...(blockers.length ? ["", `Blocked by ${blockers.map((b) => `#${b}`).join(", ")}.`] : []),
    ...(p.type === "refinery" ? ["", "It integrates the work of its sub-issues."] : []),
    "",
    "## Instructions",
    "",
    instructionsOf(n.body) || `Do what the title of issue #${n.number} says.`,
    "",
  ].join("\n");
}

function planMd(tree: IssueTree, planned: readonly Planned[]): string {
  const title = oneLine(tree.parent.title, TITLE_LIMIT) || `Issue #${tree.parent.number}`;
  return [
    `# ${title}`,
    "",
    `Built by \`/forge plan\` from the sub-issues of #${tree.parent.number}: a task per open sub-issue, edges from "blocked by".`,
    "",
    "## Tasks",
    "",
    ...planned.map((p) => `- \`${p.id}\`: #${p.node.number}`),
    "",
  ].join("\n");
}
