/**
 * The one reader of Markdown files with a front-matter block (task files, overlays, walkthroughs,
 * type 3's subtask files): every part of Forge that reads one goes through `readFrontMatter`, and
 * no other file imports gray-matter (an ESLint rule says so).
 *
 * YAML only, and nothing is ever evaluated. gray-matter picks the engine from the opening line —
 * `---js`, `---javascript` and `---coffee` would `eval` the block — so an opening line with anything
 * after `---` but whitespace is refused here and reported at line 1 of the file. The block is split
 * off by gray-matter's rules but not by gray-matter (`split` below: its own split is quadratic on
 * some blocks), and read with js-yaml's core schema (YAML 1.2: no code, no custom tags; timestamps
 * stay strings).
 */
import jsyaml from "js-yaml";
import { parseDocument } from "yaml";
import { formatProblem } from "./problems.js";

/** Why a front-matter block was refused (`language`) or could not be read (`yaml`). */
export interface FrontMatterProblem {
  kind: "language" | "yaml";
  /** The file, as the caller named it. */
  file: string;
  /** 1-based line in the file, when known (always 1 for `language`). */
  line?: number;
  message: string;
}

export interface FrontMatter {
  file: string;
  /** The text opens with a `---` line: a front-matter block, YAML or not. */
  present: boolean;
  /** A line starting with `---` closes the block (gray-matter's rule); false for an unclosed block. */
  closed: boolean;
  /**
   * The block's text, from just after the opening `---` to the closing line, so its line 1 is the
   * file's line 1 (YAML positions are file lines). "" when there is no block, an empty one, or a refused one.
   */
  yaml: string;
  /** The block read as YAML (any shape; undefined when the block is absent, empty, refused or unreadable). */
  data: unknown;
  /** The Markdown after the block; the whole text when there is no block or it was refused. */
  body: string;
  /** 1-based file line of the body's first line. */
  bodyLine: number;
  problem?: FrontMatterProblem;
}

/** `file:line: message`, the way a person is told about it. */
export function describeFrontMatterProblem(p: FrontMatterProblem): string {
  return formatProblem({ file: p.file, ...(p.line !== undefined ? { line: p.line } : {}), message: p.message });
}

/**
 * Splits `text` (the content of `file`) into its front-matter block and body and reads the block
 * as YAML. Never throws and never evaluates anything: a block opened by `---<language>` comes back
 * with a `language` problem and no data; invalid YAML with a `yaml` problem located in the file.
 */
export function readFrontMatter(file: string, text: string): FrontMatter {
  const none: FrontMatter = { file, present: false, closed: false, yaml: "", data: undefined, body: text, bodyLine: 1 };
  const src = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  // gray-matter's rule for a block: the text starts with `---` not followed by a fourth `-`.
  if (!src.startsWith("---") || src[3] === "-") return none;
  const eol = src.indexOf("\n");
  const opening = (eol === -1 ? src.slice(3) : src.slice(3, eol)).replace(/\r$/, "");
  const language = opening.trim();
  if (language !== "") {
    const shown = language.length > 40 ? `${language.slice(0, 40)}…` : language;
    return {
      ...none,
      present: true,
      problem: { kind: "language", file, line: 1, message: `front matter language '${shown}' is not allowed: Forge reads YAML only` },
    };
  }
  if (eol === -1) return none;

  const { block, body } = split(src);
  const result: FrontMatter = {
    file,
    present: true,
    closed: src.indexOf("\n---", 3) !== -1,
    yaml: block,
    data: undefined,
    body,
    bodyLine: 1 + countNewlines(text, text.length - body.length),
  };
  try {
    // js-yaml reads the data (an order of magnitude faster than `yaml` on small documents); the
    // core schema is YAML 1.2's: plain data only, and timestamps stay strings.
    result.data = jsyaml.load(result.yaml, { schema: jsyaml.CORE_SCHEMA, filename: file });
  } catch (err) {
    result.problem = { kind: "yaml", file, ...yamlErrorOf(result.yaml, err) };
  }
  return result;
}

/**
 * gray-matter's split of a text that opens with `---` and a blank rest of the line: the block runs
 * from there to the first line starting with `---` (or to the end), the body from the line after it.
 * A block of only blank and `#` comment lines is empty. Done here, in one pass over the text, because
 * gray-matter's own test for an empty block (`/^\s*#[^\n]+/gm` over the block) takes time quadratic
 * in a block of blank lines — and walkthroughs are an agent's text.
 */
function split(src: string): { block: string; body: string } {
  const rest = src.slice(3);
  const close = rest.indexOf("\n---");
  const block = close === -1 ? rest : rest.slice(0, close);
  let body = close === -1 ? "" : rest.slice(close + 4);
  if (body[0] === "\r") body = body.slice(1);
  if (body[0] === "\n") body = body.slice(1);
  const empty = block.split("\n").every((line) => line.trim() === "" || /^\s*#[^\n]/.test(line));
  return { block: empty ? "" : block, body };
}

/**
 * `body` with `data` as its YAML front-matter block (gray-matter's layout: no block for no data, a
 * newline at the end). The body is never read: text that looks like a block stays text.
 */
export function writeFrontMatter(body: string, data: Record<string, unknown>): string {
  const yaml = jsyaml.dump(data).trim();
  const block = yaml === "{}" ? "" : `---\n${yaml}\n---\n`;
  return `${block}${body.endsWith("\n") ? body : `${body}\n`}`;
}

/** Above this many characters, `yaml` words the error from the lines up to js-yaml's only: it takes about 4 ms per KB of a broken block. */
const YAML_WORDING_MAX = 16_384;

/** A YAML syntax error, worded and located by `yaml` (clearer than js-yaml's), else by js-yaml. */
function yamlErrorOf(text: string, err: unknown): { message: string; line?: number } {
  const mark = (err as { mark?: { line?: number } }).mark;
  let scope = text;
  if (scope.length > YAML_WORDING_MAX && typeof mark?.line === "number") scope = firstLines(text, mark.line + 1);
  const first = scope.length <= YAML_WORDING_MAX ? parseDocument(scope, { prettyErrors: true }).errors[0] : undefined;
  if (first) {
    const line = first.linePos?.[0].line;
    const message = (first.message.split("\n")[0] ?? "").replace(/ at line \d+, column \d+:?$/, "");
    return { message, ...(line !== undefined && { line }) };
  }
  const reason = (err as { reason?: string }).reason ?? (err as Error).message;
  return { message: reason, ...(typeof mark?.line === "number" && { line: mark.line + 1 }) };
}

/** The first `n` lines of `text`. */
function firstLines(text: string, n: number): string {
  let end = -1;
  for (let i = 0; i < n; i++) {
    end = text.indexOf("\n", end + 1);
    if (end === -1) return text;
  }
  return text.slice(0, end);
}

function countNewlines(text: string, to: number): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1 && i < to; i = text.indexOf("\n", i + 1)) n++;
  return n;
}
