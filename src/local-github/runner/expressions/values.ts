// The values expressions compute with and the contexts they read, the error that refuses anything
// outside the subset, and GitHub's conversions: truthiness, numbers, strings, loose equality.

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

export function truthy(v: ExprValue): boolean {
  if (v === null || v === false || v === "" || v === 0) return false;
  if (typeof v === "number" && Number.isNaN(v)) return false;
  return true;
}

export function toNumber(v: ExprValue): number {
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

export function looseEquals(a: ExprValue, b: ExprValue): boolean {
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
