// `${{ }}` expressions evaluated by GitHub's own evaluator, @actions/expressions (from
// actions/languageservices): the values and contexts the runner hands it, the functions GitHub's
// runner adds to the language (the status checks and hashFiles), `if:` conditions, and workflow
// values whose expressions the workflow parser found (`Template`: a string with text around
// `${{ }}` is already a format() call there, as GitHub reads it).
import { data, Evaluator, Lexer, Parser, type Expr as Tree } from "@actions/expressions";
import { TokenType, type Token } from "@actions/expressions/lexer";
import type { FunctionDefinition, FunctionInfo } from "@actions/expressions/funcs/info";
import { truthy as dataTruthy } from "@actions/expressions/result";
import { hashFiles } from "./hash-files.js";

export type ExprValue = null | boolean | number | string | ExprValue[] | { [key: string]: ExprValue };

/** A `${{ }}` of a workflow or action file, as the parser read it. */
export class Expr {
  constructor(
    /** The expression, without `${{ }}`; text around expressions is a format() call. */
    readonly expression: string,
    /** The value as written in the file. */
    readonly source: string,
    /** Where it is, as GitHub names it in errors: `<file> (Line: 3, Col: 12)`. */
    readonly location?: string,
  ) {}

  toJSON(): string {
    return this.source;
  }
}

/** A value of a workflow file: data, with the expressions GitHub evaluates when the runner reaches them. */
export type Template = null | boolean | number | string | Expr | Template[] | { [key: string]: Template };

/** An expression that cannot be evaluated; GitHub fails the step (or the job) with this message. */
export class ExpressionError extends Error {
  constructor(
    readonly expression: string,
    reason: string,
    location?: string,
  ) {
    super(`The template is not valid. ${location ? `${location}: ` : ""}${reason}`);
    this.name = "ExpressionError";
  }
}

/** The job status as the status-check functions see it. */
export type JobStatus = "success" | "failure" | "cancelled";

export interface ExpressionContext {
  /** Named contexts: github, inputs, secrets, vars, env, steps, runner, job, strategy, matrix, needs. */
  contexts: Record<string, ExprValue | undefined>;
  /** For success(), failure(), cancelled(), always(): they exist only in `if:` conditions. */
  jobStatus?: JobStatus;
  /** GITHUB_WORKSPACE, for hashFiles(). */
  workspace?: string;
}

/** The contexts a runner provides (the parser has already refused each where GitHub does not allow it). */
const CONTEXTS = ["github", "inputs", "secrets", "vars", "env", "steps", "runner", "job", "jobs", "strategy", "matrix", "needs"];
/** The functions GitHub's runner adds to the language's own (contains, format, fromJSON…). */
const STATUS_FUNCTIONS: FunctionInfo[] = ["always", "success", "failure", "cancelled"].map((name) => ({ name, minArgs: 0, maxArgs: 0 }));
const HASH_FILES: FunctionInfo = { name: "hashFiles", minArgs: 1, maxArgs: 255 };

const trees = new Map<string, Tree>();

/**
 * The expression's tokens. The library's lexer unescapes only the first `''` of a string literal
 * (`value.replace("''", "'")`, in 0.3.61 as in its sources today), where GitHub's runner and its
 * docs ("escape single quotes with another single quote") unescape every one — and the workflow
 * parser turns any text around `${{ }}` into a format() literal, so a script quoting twice would
 * come out wrong. Each string literal's value is read again from its text.
 */
function lex(expression: string): Token[] {
  const tokens = new Lexer(expression).lex().tokens;
  for (const t of tokens) if (t.type === TokenType.STRING) t.value = t.lexeme.slice(1, -1).replaceAll("''", "'");
  return tokens;
}

function parse(expression: string, status: boolean): Tree {
  const key = `${status ? "1" : "0"}${expression}`;
  let tree = trees.get(key);
  if (!tree) {
    const functions = status ? [...STATUS_FUNCTIONS, HASH_FILES] : [HASH_FILES];
    try {
      tree = new Parser(lex(expression), CONTEXTS, functions).parse();
    } catch (err) {
      throw new ExpressionError(expression, `${(err as Error).message}. Located within expression: ${expression}`);
    }
    if (!tree) throw new ExpressionError(expression, "An expression was expected");
    if (trees.size > 10_000) trees.clear();
    trees.set(key, tree);
  }
  return tree;
}

/** A runner value as the evaluator's data. */
export function toData(v: ExprValue | undefined): data.ExpressionData {
  if (v === null || v === undefined) return new data.Null();
  if (typeof v === "boolean") return new data.BooleanData(v);
  if (typeof v === "number") return new data.NumberData(v);
  if (typeof v === "string") return new data.StringData(v);
  if (Array.isArray(v)) return new data.Array(...v.map(toData));
  return new data.Dictionary(...Object.entries(v).map(([key, value]) => ({ key, value: toData(value) })));
}

/** The evaluator's data as a runner value. */
export function fromData(d: data.ExpressionData): ExprValue {
  switch (d.kind) {
    case data.Kind.Null:
      return null;
    case data.Kind.Boolean:
      return (d as data.BooleanData).value;
    case data.Kind.Number:
      return d.number();
    case data.Kind.String:
      return d.coerceString();
    case data.Kind.Array:
      return (d as data.Array).values().map(fromData);
    default:
      return Object.fromEntries((d as data.Dictionary).pairs().map((p) => [p.key, fromData(p.value)]));
  }
}

/** The named contexts, each turned into the evaluator's data only when an expression reads it. */
class Contexts extends data.Dictionary {
  private readonly converted = new Map<string, data.ExpressionData>();
  constructor(private readonly contexts: Record<string, ExprValue | undefined>) {
    super();
  }
  override get(key: string): data.ExpressionData | undefined {
    const name = key.toLowerCase();
    let d = this.converted.get(name);
    if (!d) {
      // A context the runner has nothing for is null (GitHub's `matrix` outside a matrix job).
      d = toData(this.contexts[name]);
      this.converted.set(name, d);
    }
    return d;
  }
}

/** hashFiles(), and the status checks in conditions (elsewhere they are not parsed: "Unrecognized function"). */
function functionsFor(ctx: ExpressionContext): Map<string, FunctionDefinition> {
  const status = ctx.jobStatus;
  const fns = new Map<string, FunctionDefinition>([
    [
      "hashfiles",
      {
        ...HASH_FILES,
        call: (...args) => {
          if (!ctx.workspace) throw new Error("hashFiles() is only available where a job has a workspace");
          return new data.StringData(
            hashFiles(
              ctx.workspace,
              args.map((a) => a.coerceString()),
            ),
          );
        },
      },
    ],
  ]);
  if (status) {
    const is: Record<string, () => boolean> = {
      always: () => true,
      success: () => status === "success",
      failure: () => status === "failure",
      cancelled: () => status === "cancelled",
    };
    for (const f of STATUS_FUNCTIONS) fns.set(f.name, { ...f, call: () => new data.BooleanData(is[f.name]!()) });
  }
  return fns;
}

function evaluateData(expression: string, ctx: ExpressionContext, location?: string): data.ExpressionData {
  const tree = parse(expression, ctx.jobStatus !== undefined);
  try {
    return new Evaluator(tree, new Contexts(ctx.contexts), functionsFor(ctx)).evaluate();
  } catch (err) {
    throw new ExpressionError(expression, (err as Error).message, location);
  }
}

/** Evaluates one expression (the text between `${{` and `}}`). */
export function evaluate(expression: string, ctx: ExpressionContext): ExprValue {
  return fromData(evaluateData(expression, ctx));
}

/** Truthiness as GitHub defines it: false, 0, NaN, '' and null are false. */
export function truthy(v: ExprValue): boolean {
  return dataTruthy(toData(v));
}

/** A workflow value with its expressions evaluated (a lone `${{ }}` keeps its type). */
export function evaluateTemplate(t: Template | undefined, ctx: ExpressionContext): ExprValue {
  if (t === undefined) return null;
  if (t instanceof Expr) return fromData(evaluateData(t.expression, ctx, t.location));
  if (Array.isArray(t)) return t.map((x) => evaluateTemplate(x, ctx));
  if (t !== null && typeof t === "object") return Object.fromEntries(Object.entries(t).map(([k, v]) => [k, evaluateTemplate(v, ctx)]));
  return t;
}

/** A workflow value evaluated and read as a string, as GitHub converts values (null is '', 1.50 is '1.5', objects 'Object'). */
export function evaluateString(t: Template | undefined, ctx: ExpressionContext): string {
  if (t === undefined) return "";
  if (t instanceof Expr) return evaluateData(t.expression, ctx, t.location).coerceString();
  return toData(evaluateTemplate(t, ctx)).coerceString();
}

/**
 * An `if:` condition. The workflow parser has already made it GitHub's: `success() && (…)` unless
 * it calls a status function, `success()` when absent.
 */
export function evaluateCondition(condition: string, ctx: ExpressionContext & { jobStatus: JobStatus }): boolean {
  return dataTruthy(evaluateData(condition, ctx));
}

/**
 * A mapping of a workflow (`env:`, `with:`, `outputs:`) with its values evaluated to strings; a
 * mapping that is one expression (`env: ${{ fromJSON(…) }}`) too. Each value's context is
 * `ctx(values so far)`.
 */
export function evaluateStringMap(
  t: Template | undefined,
  ctx: (soFar: Record<string, string>) => ExpressionContext,
): Record<string, string> {
  const out: Record<string, string> = {};
  if (t instanceof Expr) {
    const v = evaluateData(t.expression, ctx(out), t.location);
    if (v.kind === data.Kind.Dictionary) for (const p of (v as data.Dictionary).pairs()) out[p.key] = p.value.coerceString();
    return out;
  }
  if (t === null || typeof t !== "object" || Array.isArray(t)) return out;
  for (const [k, v] of Object.entries(t)) out[k] = evaluateString(v, ctx(out));
  return out;
}

/** A workflow value as written in the file (for names GitHub shows before evaluating anything). */
export function sourceOf(t: Template | undefined): string {
  if (t === undefined || t === null) return "";
  if (t instanceof Expr) return t.source;
  return typeof t === "object" ? JSON.stringify(t) : String(t);
}
