/**
 * The one reader of Markdown files with a front-matter block (task files, overlays, walkthroughs,
 * type 3's subtask files): every part of Forge that reads one goes through `readFrontMatter`, and
 * no other file imports gray-matter (an ESLint rule says so).
 *
 * YAML only, and nothing is ever evaluated. gray-matter picks the engine from the opening line —
 * `---js`, `---javascript` and `---coffee` would `eval` the block — so an opening line with anything
 * after `---` but whitespace is refused here, before gray-matter sees the text, and reported at
 * line 1 of the file. gray-matter itself only splits: it runs with `language: "yaml"`, every other
 * engine it knows replaced by one that throws, and the YAML engine only hands the block back; the
 * block is read with js-yaml's core schema (YAML 1.2: no code, no custom tags; timestamps stay strings).
 * An options object is always passed, so gray-matter's cache (keyed by text alone) is never used.
 */
import matter from "gray-matter";
import jsyaml from "js-yaml";
import { parseDocument } from "yaml";

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
  return `${p.file}${p.line !== undefined ? `:${p.line}` : ""}: ${p.message}`;
}

const refuse = (): never => {
  throw new Error("Forge reads YAML front matter only");
};

/** Engines gray-matter has or documents besides YAML: each throws, whatever the opening line says. */
const NOT_YAML = ["javascript", "js", "coffee", "coffeescript", "cson", "json", "json5", "toml"] as const;

type MatterOptions = Parameters<typeof matter>[1];

/** gray-matter's options for one split: YAML forced, the YAML engine only captures the block. */
function splitOptions(capture: (block: string) => void): MatterOptions {
  const engines: Record<string, { parse: (input: string) => object; stringify: () => string }> = {};
  for (const name of NOT_YAML) engines[name] = { parse: refuse, stringify: refuse };
  const yaml = {
    parse: (block: string) => {
      capture(block);
      return {};
    },
    stringify: refuse,
  };
  engines.yaml = yaml;
  engines.yml = yaml;
  return { language: "yaml", engines } as MatterOptions;
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

  let block: string | undefined;
  let body = src;
  try {
    body = matter(
      src,
      splitOptions((b) => (block = b)),
    ).content;
  } catch {
    // gray-matter throws on nothing Forge passes it; should it, the file reads as having no block.
    return none;
  }
  const result: FrontMatter = {
    file,
    present: true,
    closed: src.indexOf("\n---", 3) !== -1,
    yaml: block ?? "",
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
 * `body` with `data` as its YAML front-matter block (gray-matter's layout: no block for no data, a
 * newline at the end). The body is never read: text that looks like a block stays text.
 */
export function writeFrontMatter(body: string, data: Record<string, unknown>): string {
  const yaml = jsyaml.dump(data).trim();
  const block = yaml === "{}" ? "" : `---\n${yaml}\n---\n`;
  return `${block}${body.endsWith("\n") ? body : `${body}\n`}`;
}

/** A YAML syntax error, worded and located by `yaml` (clearer than js-yaml's), else by js-yaml. */
function yamlErrorOf(text: string, err: unknown): { message: string; line?: number } {
  const first = parseDocument(text, { prettyErrors: true }).errors[0];
  if (first) {
    const line = first.linePos?.[0].line;
    const message = (first.message.split("\n")[0] ?? "").replace(/ at line \d+, column \d+:?$/, "");
    return { message, ...(line !== undefined && { line }) };
  }
  const mark = (err as { mark?: { line?: number } }).mark;
  const reason = (err as { reason?: string }).reason ?? (err as Error).message;
  return { message: reason, ...(typeof mark?.line === "number" && { line: mark.line + 1 }) };
}

function countNewlines(text: string, to: number): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1 && i < to; i = text.indexOf("\n", i + 1)) n++;
  return n;
}
