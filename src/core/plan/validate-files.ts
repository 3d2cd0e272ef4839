/**
 * A plan's files, their frontmatter and their bodies: what must be there, what the schemas refuse,
 * and each task file as the graph sees it.
 */
import { ID_PATTERN, agentTypeSchema, type AgentType } from "../schemas/common.js";
import { REMOVED_TASK_FIELDS, TASK_BODY_SECTIONS } from "../schemas/task.js";
import { fieldPath, type SchemaIssue } from "../problems.js";
import { agentRuleOf } from "../agents.js";
import { fieldLines, type FrontmatterFile, type ParsedPlan, type Section, type TaskFile } from "./parse.js";
import { problem, type PlanRule, type Problem } from "./problem.js";

/** A task file as the graph sees it: fields read leniently, so one bad field does not hide the rest. */
export interface TaskEntry {
  id: string;
  task: TaskFile;
  agentType: AgentType | undefined;
  /** Dependencies that are well-formed ids; `depPos` is their index in the frontmatter list when some were dropped. */
  deps: string[];
  depPos?: number[];
  /** False when the dependency list itself is unreadable or invalid: comparisons skip it. */
  depsKnown: boolean;
}

export function checkFiles(plan: ParsedPlan, out: Problem[]): void {
  const unreadable = new Set(plan.unreadable.map((u) => u.file));
  for (const u of plan.unreadable) out.push(problem({ file: u.file }, "unreadable-file", u.message));
  if (!plan.hasPlanMd && !unreadable.has("plan.md")) out.push(problem({ file: "plan.md" }, "missing-file", "plan.md is missing"));
  if (!plan.dag.present && !unreadable.has("dag.json")) out.push(problem({ file: "dag.json" }, "missing-file", "dag.json is missing"));
  if (!plan.hasTasksDir) out.push(problem({ file: "tasks/" }, "missing-file", "the tasks/ folder is missing"));
  else if (plan.tasks.length === 0 && plan.unreadable.length === 0)
    out.push(problem({ file: "tasks/" }, "missing-file", "tasks/ holds no task file"));
  for (const file of plan.unexpected) out.push(problem({ file }, "unexpected-file", "tasks/ may only hold task files named <taskId>.md"));
}

/**
 * Problems of a frontmatter file that could not be read, or that its schema refused. False when
 * nothing can be read from it. `removed`: top-level fields the format no longer has, with why
 * (rule `removed-field`).
 */
export function checkFrontmatter(
  f: FrontmatterFile<unknown>,
  out: Problem[],
  idRule: PlanRule,
  removed: Readonly<Record<string, string>> = {},
): boolean {
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
    const at = { file: f.file, line: lineOfPath(fieldLines(f), issue.path), field: field || undefined };
    const gone = issue.code === "unrecognized_keys" && issue.path.length === 1 ? removed[field] : undefined;
    if (gone !== undefined) {
      out.push(problem(at, "removed-field", `${field} ${gone}`));
      continue;
    }
    const rule: PlanRule =
      field === "id" && issue.code === "invalid_format"
        ? idRule
        : issue.code === "custom" && agentRuleOf(issue.message)
          ? agentRuleOf(issue.message)!
          : field === "model" && issue.code === "custom"
            ? "unknown-model"
            : "invalid-frontmatter";
    out.push(problem(at, rule, issueMessage(issue, f.raw)));
  }
  return true;
}

export function issueMessage(issue: SchemaIssue, raw: unknown): string {
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
export function lineOfPath(lines: Record<string, number>, path: readonly PropertyKey[]): number | undefined {
  for (let n = path.length; n > 0; n--) {
    const line = lines[fieldPath(path.slice(0, n))];
    if (line !== undefined) return line;
  }
  return undefined;
}

function hasIssueUnder(issues: readonly SchemaIssue[], key: string): boolean {
  return issues.some((i) => i.path[0] === key);
}

export function collectTasks(plan: ParsedPlan, out: Problem[]): Map<string, TaskEntry> {
  const specs = new Set(plan.specs);
  const entries: TaskEntry[] = [];
  for (const task of plan.tasks) {
    const readable = checkFrontmatter(task, out, "bad-id", REMOVED_TASK_FIELDS);
    entries.push(taskEntry(task, readable));
    if (readable) checkSpec(task, specs, out);
    if (readable) checkSentinel(task, out);
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
  out.push(
    problem(
      { file: task.file, line: fieldLines(task).spec, field: "spec" },
      "unknown-spec",
      `spec ${JSON.stringify(spec)} is not a file of the plan (specs/…)`,
    ),
  );
}

/** A refinery verifies in its own test and fix stages: the task sentinel is not its to turn on or off. */
function checkSentinel(task: TaskFile, out: Problem[]): void {
  if (task.data?.type !== "refinery" || task.data.sentinel === undefined) return;
  out.push(
    problem(
      { file: task.file, line: fieldLines(task).sentinel, field: "sentinel" },
      "sentinel-on-refinery",
      "a refinery verifies in its own test and fix stages (the sentinel loop); remove `sentinel`, or set `sentinel` in .github/forge.yml for the plan's tasks",
    ),
  );
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
