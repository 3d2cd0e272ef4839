/**
 * Parsing a plan folder's texts into plain data, with no I/O: the loader reads files from disk, the
 * App can read them from the GitHub API, and both hand the texts to `parsePlan`. Parsing never
 * throws; what cannot be parsed is kept as an error with its line, and `validatePlan` turns it into
 * problems. Schema checks (zod) run here too, so validation itself stays a fast pass over data.
 */
import { LineCounter, isMap, isScalar, isSeq, parseDocument, type Node as YamlNode } from "yaml";
import type { z } from "zod";
import { readFrontMatter } from "../front-matter.js";
import { dagSchema, type Dag } from "../schemas/dag.js";
import { overlayFrontmatterSchema, type OverlayFrontmatter } from "../schemas/overlay.js";
import { taskFrontmatterSchema, type TaskFrontmatter } from "../schemas/task.js";
import { fieldPath, toIssues, type SchemaIssue } from "../problems.js";

/** The texts of a plan folder, keyed by path relative to the folder (`tasks/a.md`, `dag.json`). */
export interface PlanSource {
  /** The plan folder's name, which is the plan id. */
  planId: string;
  /**
   * Every file found under the folder's known places, with its text. Files that are listed but not
   * needed as text (anything in tasks/ or overlays/ that is not `.md`, anything under specs/) map to "".
   */
  files: ReadonlyMap<string, string>;
  /** Folders found, e.g. `tasks`, `overlays`, `specs`, and anything listed inside tasks/ that is a folder. */
  dirs: ReadonlySet<string>;
  /** Files that exist but could not be read. */
  unreadable: { file: string; message: string }[];
}

export interface ParseError {
  message: string;
  line?: number;
}

/** A Markdown file with a YAML frontmatter block, parsed. */
export interface FrontmatterFile<T> {
  /** Path relative to the plan folder. */
  file: string;
  /** File name without `.md`. */
  name: string;
  /** False when the file does not start with a `---` block (a refused `---js` block counts as one). */
  hasFrontmatter: boolean;
  /** Set when the frontmatter is not valid YAML. */
  yamlError?: ParseError;
  /** Set when the block is not YAML at all (`---js`, `---coffee`, …): refused, never evaluated. */
  refused?: ParseError;
  /** The frontmatter as YAML read it (any shape). */
  raw?: unknown;
  /** The frontmatter, when the schema accepted it. */
  data?: T;
  issues: SchemaIssue[];
  /** The YAML text of the frontmatter block; its line 1 is the file's line 1. `fieldLines` reads positions from it. */
  frontmatter: string;
}

/** A `## Heading` of a task body. */
export interface Section {
  title: string;
  line: number;
  /** No text (other than blank lines) before the next `##` heading. */
  empty: boolean;
}

export interface TaskFile extends FrontmatterFile<TaskFrontmatter> {
  /** The Markdown after the frontmatter: what an agent is given as its task. */
  body: string;
  /** File line of the body's first line. */
  bodyLine: number;
  sections: Section[];
}

export type OverlayFile = FrontmatterFile<OverlayFrontmatter>;

export interface DagFile {
  file: "dag.json";
  present: boolean;
  jsonError?: ParseError;
  raw?: unknown;
  data?: Dag;
  issues: SchemaIssue[];
  /** Line of the first `"id": "<id>"` of each id. */
  idLines: Record<string, number>;
  /** Line of the first occurrence of a few well-known keys (`planId`, `metadata`, `totalTasks`, …). */
  keyLines: Record<string, number>;
}

export interface ParsedPlan {
  planId: string;
  hasPlanMd: boolean;
  hasTasksDir: boolean;
  /** Paths of the files under specs/, relative to the plan folder. */
  specs: string[];
  tasks: TaskFile[];
  overlays: OverlayFile[];
  /** Files under overlays/ that are not `.md` files. */
  overlayOthers: string[];
  dag: DagFile;
  unreadable: { file: string; message: string }[];
  /** Entries of tasks/ that are not `.md` files. */
  unexpected: string[];
}

export function parsePlan(source: PlanSource): ParsedPlan {
  const tasks: TaskFile[] = [];
  const overlays: OverlayFile[] = [];
  const overlayOthers: string[] = [];
  const specs: string[] = [];
  const unexpected: string[] = [];
  for (const [file, text] of source.files) {
    if (file.startsWith("specs/")) specs.push(file);
    else if (file.startsWith("tasks/")) {
      if (isDirectChildMd(file, "tasks/")) tasks.push(parseTaskFile(file, text));
      else unexpected.push(file);
    } else if (file.startsWith("overlays/")) {
      if (isDirectChildMd(file, "overlays/")) overlays.push(parseFrontmatterFile(file, text, overlayFrontmatterSchema));
      else overlayOthers.push(file);
    }
  }
  for (const dir of source.dirs) if (dir.startsWith("tasks/")) unexpected.push(dir);
  const byFile = (a: { file: string }, b: { file: string }) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0);
  tasks.sort(byFile);
  overlays.sort(byFile);
  const dagText = source.files.get("dag.json");
  const dag = dagText === undefined ? emptyDag(false) : parseDagJson(dagText);
  const ids = new Map<string, string>();
  return {
    planId: source.planId,
    hasPlanMd: source.files.has("plan.md"),
    hasTasksDir: source.dirs.has("tasks"),
    specs: specs.sort(),
    tasks: tasks.map((t) => compactTask(t, ids)),
    overlays,
    overlayOthers: overlayOthers.sort(),
    dag: compactDag(dag, ids),
    unreadable: source.unreadable,
    unexpected: unexpected.sort(),
  };
}

/*
 * Compaction. Each file's objects are born among the garbage of its YAML parse, scattered over the
 * heap; validation then walks 10,000 of them and waits on memory more than it computes. Copying
 * what validation reads into fresh objects, allocated one after the other, and sharing one string
 * per id (so equal ids compare by pointer) makes `validatePlan` on a 10,000-task plan markedly faster.
 */
function intern(ids: Map<string, string>, id: string): string {
  const known = ids.get(id);
  if (known !== undefined) return known;
  ids.set(id, id);
  return id;
}

function compactTask(t: TaskFile, ids: Map<string, string>): TaskFile {
  const data = t.data && { ...t.data, id: intern(ids, t.data.id), dependencies: t.data.dependencies.map((d) => intern(ids, d)) };
  return { ...t, data, sections: t.sections.map((s) => ({ ...s })) };
}

function compactDag(dag: DagFile, ids: Map<string, string>): DagFile {
  if (!dag.data) return dag;
  const nodes = dag.data.nodes.map((n) => ({ ...n, id: intern(ids, n.id), dependencies: n.dependencies.map((d) => intern(ids, d)) }));
  return { ...dag, data: { ...dag.data, nodes } };
}

function isDirectChildMd(file: string, prefix: string): boolean {
  const rest = file.slice(prefix.length);
  return rest.endsWith(".md") && !rest.includes("/") && rest.length > 3;
}

function emptyDag(present: boolean): DagFile {
  return { file: "dag.json", present, issues: [], idLines: {}, keyLines: {} };
}

export function parseTaskFile(file: string, text: string): TaskFile {
  const parsed = parseFrontmatterFile(file, text, taskFrontmatterSchema);
  return { ...parsed, sections: parseSections(parsed.body, parsed.bodyLine) };
}

/** Reads a Markdown file's frontmatter with the core's front-matter reader (YAML only) and checks it against `schema`. */
export function parseFrontmatterFile<S extends z.ZodType>(
  file: string,
  text: string,
  schema: S,
): FrontmatterFile<z.output<S>> & { body: string; bodyLine: number } {
  const name = baseName(file).replace(/\.md$/, "");
  const fm = readFrontMatter(file, text);
  const result: FrontmatterFile<z.output<S>> & { body: string; bodyLine: number } = {
    file,
    name,
    hasFrontmatter: fm.present,
    issues: [],
    frontmatter: fm.yaml,
    body: fm.body,
    bodyLine: fm.bodyLine,
  };
  if (!fm.present) return result;
  if (fm.problem) {
    const at = { message: fm.problem.message, ...(fm.problem.line !== undefined && { line: fm.problem.line }) };
    if (fm.problem.kind === "language") result.refused = at;
    else result.yamlError = at;
    return result;
  }
  const raw = fm.data ?? {};
  result.raw = raw;
  const checked = schema.safeParse(raw);
  if (checked.success) result.data = checked.data;
  else result.issues = toIssues(checked.error);
  return result;
}

const linesOf = new WeakMap<FrontmatterFile<unknown>, Record<string, number>>();

/**
 * 1-based file line of each field of a frontmatter block: `title`, `dependencies`,
 * `dependencies[2]`, `added_edges[1].from`. Computed on first use (only problems need lines), then kept.
 */
export function fieldLines(f: FrontmatterFile<unknown>): Record<string, number> {
  let lines = linesOf.get(f);
  if (!lines) {
    lines = {};
    if (f.frontmatter) {
      const lineCounter = new LineCounter();
      const doc = parseDocument(f.frontmatter, { lineCounter });
      collectYamlLines(doc.contents, lineCounter, lines);
    }
    linesOf.set(f, lines);
  }
  return lines;
}

function collectYamlLines(node: unknown, lc: LineCounter, lines: Record<string, number>, prefix: PropertyKey[] = [], depth = 0): void {
  if (depth > 3) return;
  if (isMap(node)) {
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? pair.key.value : undefined;
      if (typeof key !== "string" && typeof key !== "number") continue;
      const path = [...prefix, String(key)];
      const at = lineOf(pair.key as YamlNode, lc);
      if (at !== undefined) lines[fieldPath(path)] = at;
      collectYamlLines(pair.value, lc, lines, path, depth + 1);
    }
  } else if (isSeq(node)) {
    node.items.forEach((item, i) => {
      const path = [...prefix, i];
      const at = lineOf(item as YamlNode, lc);
      if (at !== undefined) lines[fieldPath(path)] = at;
      collectYamlLines(item, lc, lines, path, depth + 1);
    });
  }
}

function lineOf(node: YamlNode | null | undefined, lc: LineCounter): number | undefined {
  const start = node?.range?.[0];
  return start === undefined ? undefined : lc.linePos(start).line;
}

/** `## Heading` sections of a Markdown body, ignoring fenced code blocks. */
export function parseSections(body: string, bodyLine: number): Section[] {
  const sections: Section[] = [];
  const lines = body.split(/\r?\n/);
  let fence: string | undefined;
  let current: Section | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    const fenceMatch = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (fenceMatch) {
      const marker = fenceMatch[1] ?? "";
      if (fence === undefined) fence = marker;
      else if (marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
      if (current) current.empty = false;
      continue;
    }
    if (fence === undefined) {
      const heading = /^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$/.exec(line);
      if (heading && (heading[1]?.length ?? 0) <= 2) {
        current = (heading[1]?.length ?? 0) === 2 ? { title: heading[2] ?? "", line: bodyLine + i, empty: true } : undefined;
        if (current) sections.push(current);
        continue;
      }
    }
    if (current && line.trim() !== "") current.empty = false;
  }
  return sections;
}

export function parseDagJson(text: string): DagFile {
  const result = emptyDag(true);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    result.jsonError = jsonErrorOf(text, err as Error);
    return result;
  }
  result.raw = raw;
  scanDagLines(text, result);
  const checked = dagSchema.safeParse(raw);
  if (checked.success) result.data = checked.data;
  else result.issues = toIssues(checked.error);
  return result;
}

/**
 * Where JSON.parse failed. V8 names the position ("at position 247") for most errors; for an
 * unexpected token it quotes the text around it instead (…"xt": }, "pl"…, 10 characters either side),
 * which is found again in the text.
 */
function jsonErrorOf(text: string, err: Error): ParseError {
  const message = err.message.replace(/\s+/g, " ");
  if (text.trim() === "") return { message: "the file is empty", line: 1 };
  const lineCol = /\(line (\d+) column \d+\)/.exec(err.message);
  if (lineCol) return { message, line: Number(lineCol[1]) };
  const pos = /at position (\d+)/.exec(err.message);
  if (pos) return { message, line: countLines(text, Number(pos[1])) };
  const quoted = /^Unexpected token .*?, (\.\.\.)?"([\s\S]*?)"(\.\.\.)? is not valid JSON$/.exec(err.message);
  if (quoted) {
    const [, before, snippet = "", after] = quoted;
    const CONTEXT = 10;
    let offset: number | undefined;
    if (before && after) {
      const at = text.indexOf(snippet);
      if (at !== -1) offset = at + CONTEXT;
    } else if (after) offset = snippet.length - CONTEXT;
    else if (before) offset = text.length - snippet.length + CONTEXT;
    if (offset !== undefined && offset >= 0) return { message, line: countLines(text, offset) };
  }
  return { message };
}

const DAG_KEYS = /"(planId|version|metadata|totalTasks|totalRefineries|createdAt|createdBy|nodes)"\s*:|"id"\s*:\s*"((?:[^"\\\n]|\\.)*)"/g;

function scanDagLines(text: string, dag: DagFile): void {
  let line = 1;
  let last = 0;
  for (const m of text.matchAll(DAG_KEYS)) {
    line += countNewlines(text, last, m.index);
    last = m.index;
    if (m[1] !== undefined) {
      if (dag.keyLines[m[1]] === undefined) dag.keyLines[m[1]] = line;
    } else if (m[2] !== undefined && dag.idLines[m[2]] === undefined) {
      dag.idLines[m[2]] = line;
    }
  }
}

/** 1-based line of the character at `offset`. */
export function countLines(text: string, offset: number): number {
  return 1 + countNewlines(text, 0, Math.min(offset, text.length));
}

function countNewlines(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = text.indexOf("\n", from); i !== -1 && i < to; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

function baseName(file: string): string {
  const i = file.lastIndexOf("/");
  return i === -1 ? file : file.slice(i + 1);
}
