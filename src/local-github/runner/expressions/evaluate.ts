// Evaluating a parsed expression against the contexts: members, `!`, `==`/`!=`, the short-circuit
// `&&`/`||`, and function calls.
import { callFunction, STATUS_FUNCTIONS, statusFunction } from "./functions.js";
import { parse, type Node } from "./parse.js";
import { ExpressionError, looseEquals, truthy, type ExpressionContext, type ExprValue } from "./values.js";

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
      if (STATUS_FUNCTIONS.includes(n.name)) return statusFunction(src, n.name, ctx);
      return callFunction(
        src,
        n.name,
        n.args.map((a) => evaluateNode(src, a, ctx)),
      );
    }
  }
}

/** Evaluate one expression (the text between `${{` and `}}`). */
export function evaluate(src: string, ctx: ExpressionContext): ExprValue {
  const trimmed = src.trim();
  return evaluateNode(trimmed, parse(trimmed), ctx);
}
