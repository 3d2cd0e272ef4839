// `${{ }}` expressions for the sim runner: exactly the subset Forge's workflow templates use.
//
// Semantics follow GitHub's "Evaluate expressions in workflows and actions" reference:
// - literals: 'single-quoted strings' ('' escapes a quote), numbers, true, false, null;
// - operators: ( ) . [ ] ! == != && || — `&&`/`||` yield an operand, not a boolean;
// - `==` compares strings case-insensitively and, when the types differ, both sides as numbers;
// - functions: format(), contains(), and the status checks always() success() failure() cancelled();
// - a missing property dereferences to null.
// Anything else (`<`, `>`, `*` filters, toJSON, hashFiles, matrix, needs, …) throws an
// ExpressionError naming the expression, so a template that drifts past the subset fails loudly
// instead of running with a made-up value.

export type ExprValue = null | boolean | number | string | ExprValue[] | { [key: string]: ExprValue };

export class ExpressionError extends Error {
  readonly expression: string;
  constructor(expression: string, reason: string) {
    super(`Unsupported or invalid expression \`\${{ ${expression} }}\`: ${reason}`);
    this.name = "ExpressionError";
    this.expression = expression;
  }
}

/** The job status as the status-check functions see it. */
export type JobStatus = "success" | "failure" | "cancelled";

export interface ExpressionContext {
  /** Named contexts, e.g. inputs, github, secrets, env, vars, steps, runner. */
  contexts: Record<string, ExprValue | undefined>;
  /** Required for always()/success()/failure()/cancelled(); they are refused without it. */
  jobStatus?: JobStatus;
}

/** Contexts the sim runner knows. Any other identifier fails loudly. */
export const SUPPORTED_CONTEXTS = ["inputs", "github", "secrets", "env", "vars", "steps", "runner"] as const;

type Token =
  | { kind: "string"; value: string }
  | { kind: "number"; value: number }
  | { kind: "ident"; value: string }
  | { kind: "punct"; value: string }
  | { kind: "end" };

const PUNCT = ["==", "!=", "&&", "||", "<=", ">=", "!", "(", ")", "[", "]", ".", ",", "<", ">", "*"];

function tokenize(src: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === "'") {
      let value = "";
      i++;
      for (;;) {
        if (i >= src.length) throw new ExpressionError(src, "unterminated string literal");
        if (src[i] === "'") {
          if (src[i + 1] === "'") {
            value += "'";
            i += 2;
            continue;
          }
          i++;
          break;
        }
        value += src[i];
        i++;
      }
      tokens.push({ kind: "string", value });
      continue;
    }
    const num = /^(?:0x[0-9a-fA-F]+|-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)/.exec(src.slice(i));
    if (num && (c !== "-" || /\d|\./.test(src[i + 1] ?? ""))) {
      tokens.push({ kind: "number", value: Number(num[0]) });
      i += num[0].length;
      continue;
    }
    const ident = /^[A-Za-z_][A-Za-z0-9_-]*/.exec(src.slice(i));
    if (ident) {
      tokens.push({ kind: "ident", value: ident[0] });
      i += ident[0].length;
      continue;
    }
    const p = PUNCT.find((op) => src.startsWith(op, i));
    if (p) {
      tokens.push({ kind: "punct", value: p });
      i += p.length;
      continue;
    }
    throw new ExpressionError(src, `unexpected character '${c}'`);
  }
  tokens.push({ kind: "end" });
  return tokens;
}

type Node =
  | { type: "literal"; value: ExprValue }
  | { type: "context"; name: string }
  | { type: "member"; object: Node; property: string }
  | { type: "not"; operand: Node }
  | { type: "binary"; op: "==" | "!=" | "&&" | "||"; left: Node; right: Node }
  | { type: "call"; name: string; args: Node[] };

const FUNCTIONS: Record<string, { min: number; max: number }> = {
  format: { min: 1, max: Infinity },
  contains: { min: 2, max: 2 },
  always: { min: 0, max: 0 },
  success: { min: 0, max: 0 },
  failure: { min: 0, max: 0 },
  cancelled: { min: 0, max: 0 },
};

export const STATUS_FUNCTIONS = ["always", "success", "failure", "cancelled"];

class Parser {
  private pos = 0;
  constructor(
    private readonly src: string,
    private readonly tokens: Token[],
  ) {}

  fail(reason: string): never {
    throw new ExpressionError(this.src, reason);
  }

  peek(): Token {
    return this.tokens[this.pos]!;
  }

  next(): Token {
    return this.tokens[this.pos++]!;
  }

  isPunct(value: string): boolean {
    const t = this.peek();
    return t.kind === "punct" && t.value === value;
  }

  expectPunct(value: string): void {
    if (!this.isPunct(value)) this.fail(`expected '${value}' but found ${describe(this.peek())}`);
    this.pos++;
  }

  parseAll(): Node {
    const node = this.parseOr();
    if (this.peek().kind !== "end") this.fail(`unexpected ${describe(this.peek())}`);
    return node;
  }

  parseOr(): Node {
    let left = this.parseAnd();
    while (this.isPunct("||")) {
      this.pos++;
      left = { type: "binary", op: "||", left, right: this.parseAnd() };
    }
    return left;
  }

  parseAnd(): Node {
    let left = this.parseEquality();
    while (this.isPunct("&&")) {
      this.pos++;
      left = { type: "binary", op: "&&", left, right: this.parseEquality() };
    }
    return left;
  }

  parseEquality(): Node {
    let left = this.parseUnary();
    for (;;) {
      const t = this.peek();
      if (t.kind === "punct" && (t.value === "==" || t.value === "!=")) {
        this.pos++;
        left = { type: "binary", op: t.value, left, right: this.parseUnary() };
        continue;
      }
      if (t.kind === "punct" && ["<", ">", "<=", ">="].includes(t.value)) {
        this.fail(`operator '${t.value}' is not supported by the Forge sim runner`);
      }
      return left;
    }
  }

  parseUnary(): Node {
    if (this.isPunct("!")) {
      this.pos++;
      return { type: "not", operand: this.parseUnary() };
    }
    return this.parsePostfix(this.parsePrimary());
  }

  parsePrimary(): Node {
    const t = this.next();
    switch (t.kind) {
      case "string":
      case "number":
        return { type: "literal", value: t.value };
      case "punct":
        if (t.value === "(") {
          const inner = this.parseOr();
          this.expectPunct(")");
          return inner;
        }
        return this.fail(`unexpected '${t.value}'`);
      case "ident": {
        if (t.value === "true") return { type: "literal", value: true };
        if (t.value === "false") return { type: "literal", value: false };
        if (t.value === "null") return { type: "literal", value: null };
        // Context and function names are case-insensitive on GitHub.
        const lower = t.value.toLowerCase();
        if (this.isPunct("(")) {
          const spec = Object.prototype.hasOwnProperty.call(FUNCTIONS, lower) ? FUNCTIONS[lower] : undefined;
          if (!spec) this.fail(`function '${t.value}()' is not supported by the Forge sim runner`);
          this.pos++;
          const args: Node[] = [];
          if (!this.isPunct(")")) {
            for (;;) {
              args.push(this.parseOr());
              if (this.isPunct(",")) {
                this.pos++;
                continue;
              }
              break;
            }
          }
          this.expectPunct(")");
          if (args.length < spec.min || args.length > spec.max) {
            this.fail(`${t.value}() takes ${spec.min === spec.max ? spec.min : `at least ${spec.min}`} argument(s)`);
          }
          return { type: "call", name: lower, args };
        }
        if (!(SUPPORTED_CONTEXTS as readonly string[]).includes(lower)) {
          this.fail(`context '${t.value}' is not supported by the Forge sim runner`);
        }
        return { type: "context", name: lower };
      }
      case "end":
        return this.fail("unexpected end of expression");
    }
  }

  parsePostfix(node: Node): Node {
    for (;;) {
      if (this.isPunct(".")) {
        this.pos++;
        const t = this.next();
        if (t.kind === "punct" && t.value === "*") this.fail("object filters (.*) are not supported by the Forge sim runner");
        if (t.kind !== "ident") this.fail(`expected a property name after '.' but found ${describe(t)}`);
        node = { type: "member", object: node, property: t.value };
        continue;
      }
      if (this.isPunct("[")) {
        this.pos++;
        const t = this.next();
        if (t.kind === "punct" && t.value === "*") this.fail("object filters ([*]) are not supported by the Forge sim runner");
        if (t.kind !== "string") this.fail("only string literals may index an object");
        this.expectPunct("]");
        node = { type: "member", object: node, property: t.value };
        continue;
      }
      return node;
    }
  }
}

function describe(t: Token): string {
  if (t.kind === "end") return "end of expression";
  if (t.kind === "string") return `'${t.value}'`;
  return `'${String(t.value)}'`;
}

const parsed = new Map<string, Node>();

function parse(src: string): Node {
  let node = parsed.get(src);
  if (!node) {
    node = new Parser(src, tokenize(src)).parseAll();
    if (parsed.size > 10_000) parsed.clear();
    parsed.set(src, node);
  }
  return node;
}

/** Parse without evaluating: throws ExpressionError for anything outside the subset. */
export function checkExpression(src: string): void {
  parse(src.trim());
}

/** True when the expression calls one of the status-check functions. */
export function usesStatusFunction(src: string): boolean {
  const visit = (n: Node): boolean => {
    switch (n.type) {
      case "call":
        return STATUS_FUNCTIONS.includes(n.name) || n.args.some(visit);
      case "binary":
        return visit(n.left) || visit(n.right);
      case "not":
        return visit(n.operand);
      case "member":
        return visit(n.object);
      default:
        return false;
    }
  };
  return visit(parse(src.trim()));
}

export function truthy(v: ExprValue): boolean {
  if (v === null || v === false || v === "" || v === 0) return false;
  if (typeof v === "number" && Number.isNaN(v)) return false;
  return true;
}

function toNumber(v: ExprValue): number {
  if (v === null) return 0;
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v === "number") return v;
  if (typeof v === "string") {
    const s = v.trim();
    if (s === "") return 0;
    return Number(s);
  }
  return NaN;
}

/** The string form GitHub gives a value in format() and string interpolation. */
export function toExprString(v: ExprValue): string {
  if (v === null) return "";
  if (typeof v === "boolean") return v ? "true" : "false";
  if (typeof v === "number") return String(v);
  if (typeof v === "string") return v;
  // GitHub renders objects/arrays as JSON in interpolation.
  return JSON.stringify(v, null, 2);
}

function looseEquals(a: ExprValue, b: ExprValue): boolean {
  const ta = a === null ? "null" : Array.isArray(a) ? "array" : typeof a;
  const tb = b === null ? "null" : Array.isArray(b) ? "array" : typeof b;
  if (ta === tb) {
    if (ta === "string") return (a as string).toLowerCase() === (b as string).toLowerCase();
    if (ta === "object" || ta === "array") return a === b;
    return a === b;
  }
  if (ta === "object" || ta === "array" || tb === "object" || tb === "array") return false;
  return toNumber(a) === toNumber(b);
}

function evaluateNode(src: string, n: Node, ctx: ExpressionContext): ExprValue {
  switch (n.type) {
    case "literal":
      return n.value;
    case "context": {
      const v = ctx.contexts[n.name];
      if (v === undefined) throw new ExpressionError(src, `context '${n.name}' is not available here`);
      return v;
    }
    case "member": {
      const obj = evaluateNode(src, n.object, ctx);
      if (obj === null || typeof obj !== "object" || Array.isArray(obj)) return null;
      // Object keys are case-insensitive in GitHub's contexts.
      if (Object.prototype.hasOwnProperty.call(obj, n.property)) return obj[n.property] ?? null;
      const lower = n.property.toLowerCase();
      const key = Object.keys(obj).find((k) => k.toLowerCase() === lower);
      return key === undefined ? null : (obj[key] ?? null);
    }
    case "not":
      return !truthy(evaluateNode(src, n.operand, ctx));
    case "binary": {
      const left = evaluateNode(src, n.left, ctx);
      if (n.op === "&&") return truthy(left) ? evaluateNode(src, n.right, ctx) : left;
      if (n.op === "||") return truthy(left) ? left : evaluateNode(src, n.right, ctx);
      const right = evaluateNode(src, n.right, ctx);
      return n.op === "==" ? looseEquals(left, right) : !looseEquals(left, right);
    }
    case "call": {
      if (STATUS_FUNCTIONS.includes(n.name)) {
        const status = ctx.jobStatus;
        if (status === undefined) throw new ExpressionError(src, `${n.name}() is only allowed in 'if:' conditions`);
        if (n.name === "always") return true;
        if (n.name === "success") return status === "success";
        if (n.name === "failure") return status === "failure";
        return status === "cancelled";
      }
      const args = n.args.map((a) => evaluateNode(src, a, ctx));
      if (n.name === "contains") {
        const [search, item] = args as [ExprValue, ExprValue];
        if (Array.isArray(search)) return search.some((e) => looseEquals(e, item));
        return toExprString(search).toLowerCase().includes(toExprString(item).toLowerCase());
      }
      // format('{0} and {{literal}}', a)
      const [fmt, ...rest] = args;
      const template = toExprString(fmt ?? null);
      let out = "";
      for (let i = 0; i < template.length; i++) {
        const c = template[i]!;
        if (c === "{" && template[i + 1] === "{") {
          out += "{";
          i++;
        } else if (c === "}" && template[i + 1] === "}") {
          out += "}";
          i++;
        } else if (c === "{") {
          const m = /^\{(\d+)\}/.exec(template.slice(i));
          if (!m) throw new ExpressionError(src, `format(): invalid format string '${template}'`);
          const idx = Number(m[1]);
          if (idx >= rest.length) throw new ExpressionError(src, `format(): index {${idx}} has no argument`);
          out += toExprString(rest[idx]!);
          i += m[0].length - 1;
        } else if (c === "}") {
          throw new ExpressionError(src, `format(): invalid format string '${template}'`);
        } else {
          out += c;
        }
      }
      return out;
    }
  }
}

/** Evaluate one expression (the text between `${{` and `}}`). */
export function evaluate(src: string, ctx: ExpressionContext): ExprValue {
  const trimmed = src.trim();
  return evaluateNode(trimmed, parse(trimmed), ctx);
}

/** Find the `}}` that closes an expression starting at `from`, skipping string literals. */
function findClose(text: string, from: number): number {
  let inString = false;
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "'") {
        if (text[i + 1] === "'") i++;
        else inString = false;
      }
    } else if (c === "'") {
      inString = true;
    } else if (c === "}" && text[i + 1] === "}") {
      return i;
    }
  }
  return -1;
}

/** Split a template into literal text and expressions. */
export function splitTemplate(text: string): Array<{ text: string } | { expr: string }> {
  const parts: Array<{ text: string } | { expr: string }> = [];
  let i = 0;
  while (i < text.length) {
    const open = text.indexOf("${{", i);
    if (open < 0) {
      parts.push({ text: text.slice(i) });
      break;
    }
    if (open > i) parts.push({ text: text.slice(i, open) });
    const close = findClose(text, open + 3);
    if (close < 0) throw new ExpressionError(text.slice(open + 3).trim(), "missing closing '}}'");
    parts.push({ expr: text.slice(open + 3, close) });
    i = close + 2;
  }
  return parts;
}

/**
 * Interpolate `${{ }}` in a workflow value. A string that is exactly one expression keeps the
 * expression's type (so `continue-on-error: ${{ inputs.flag }}` is a boolean); otherwise the
 * pieces are joined as strings. Non-string values pass through.
 */
export function interpolate(value: unknown, ctx: ExpressionContext): unknown {
  if (typeof value !== "string") return value;
  if (!value.includes("${{")) return value;
  const parts = splitTemplate(value);
  if (parts.length === 1 && "expr" in parts[0]!) return evaluate(parts[0].expr, ctx);
  return parts.map((p) => ("text" in p ? p.text : toExprString(evaluate(p.expr, ctx)))).join("");
}

/** Interpolate and cast to a string (for env values, `run:` scripts, inputs). */
export function interpolateString(value: unknown, ctx: ExpressionContext): string {
  const v = interpolate(value, ctx);
  if (v === undefined) return "";
  return toExprString(v as ExprValue);
}

/**
 * Evaluate an `if:` condition as GitHub does: the `${{ }}` wrapper is optional, and a condition
 * that calls no status function is implicitly `success() && (condition)`.
 */
export function evaluateCondition(condition: unknown, ctx: ExpressionContext & { jobStatus: JobStatus }): boolean {
  if (condition === undefined || condition === null || condition === "") return ctx.jobStatus === "success";
  if (typeof condition === "boolean") return condition && ctx.jobStatus === "success";
  if (typeof condition === "number") return truthy(condition) && ctx.jobStatus === "success";
  let src = String(condition).trim();
  const parts = splitTemplate(src);
  if (parts.length === 1 && "expr" in parts[0]!) src = parts[0].expr.trim();
  else if (src.includes("${{")) {
    // A condition mixing text and ${{ }} is a non-empty string: always truthy on GitHub, which is
    // a classic mistake. Refuse it rather than run a step by accident.
    throw new ExpressionError(src, "an 'if:' condition must be a single expression");
  }
  if (usesStatusFunction(src)) return truthy(evaluate(src, ctx));
  return ctx.jobStatus === "success" && truthy(evaluate(src, ctx));
}
