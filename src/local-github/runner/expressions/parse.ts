// Parsing an expression into a tree, refusing at parse time what the subset leaves out (unknown
// functions and contexts, comparisons, object filters); parsed trees are cached by their text.
import { FUNCTIONS, STATUS_FUNCTIONS } from "./functions.js";
import { tokenize, type Token } from "./tokens.js";
import { ExpressionError, SUPPORTED_CONTEXTS, type ExprValue } from "./values.js";

export type Node =
  | { type: "literal"; value: ExprValue }
  | { type: "context"; name: string }
  | { type: "member"; object: Node; property: string }
  | { type: "not"; operand: Node }
  | { type: "binary"; op: "==" | "!=" | "&&" | "||"; left: Node; right: Node }
  | { type: "call"; name: string; args: Node[] };

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

export function parse(src: string): Node {
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
