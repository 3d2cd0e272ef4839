// The functions of the subset: their arity, the status checks (always, success, failure, cancelled)
// against the job's status, and contains() and format() over their evaluated arguments.
import { ExpressionError, looseEquals, toExprString, type ExpressionContext, type ExprValue } from "./values.js";

export const FUNCTIONS: Record<string, { min: number; max: number }> = {
  format: { min: 1, max: Infinity },
  contains: { min: 2, max: 2 },
  always: { min: 0, max: 0 },
  success: { min: 0, max: 0 },
  failure: { min: 0, max: 0 },
  cancelled: { min: 0, max: 0 },
};

export const STATUS_FUNCTIONS = ["always", "success", "failure", "cancelled"];

/** A status-check function's value for the job's status; refused where no status is known. */
export function statusFunction(src: string, name: string, ctx: ExpressionContext): boolean {
  const status = ctx.jobStatus;
  if (status === undefined) throw new ExpressionError(src, `${name}() is only allowed in 'if:' conditions`);
  if (name === "always") return true;
  if (name === "success") return status === "success";
  if (name === "failure") return status === "failure";
  return status === "cancelled";
}

/** contains() or format() over its evaluated arguments. */
export function callFunction(src: string, name: string, args: ExprValue[]): ExprValue {
  if (name === "contains") {
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
