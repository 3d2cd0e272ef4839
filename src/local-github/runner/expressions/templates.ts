// `${{ }}` in workflow values: splitting a template into text and expressions, interpolating it
// (one whole expression keeps its type), and `if:` conditions as GitHub evaluates them.
import { evaluate } from "./evaluate.js";
import { usesStatusFunction } from "./parse.js";
import { ExpressionError, toExprString, truthy, type ExpressionContext, type ExprValue, type JobStatus } from "./values.js";

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
