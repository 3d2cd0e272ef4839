/**
 * Whether two JSON-shaped values have the same content, as `JSON.stringify` would tell — without
 * serialising them: shared references (a decision copies only what it changes) are equal at once,
 * so comparing a journal with the next one costs what changed plus a pointer per task, not the plan.
 *
 * As in JSON, an object's fields whose value is `undefined` do not count, and `undefined` in an
 * array stands for `null`. Unlike `JSON.stringify`, the order of an object's fields does not count.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return JSON.stringify(a) === JSON.stringify(b);
  if (hasToJson(a) || hasToJson(b)) return JSON.stringify(a) === JSON.stringify(b);
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i] ?? null, b[i] ?? null)) return false;
    return true;
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let fields = 0;
  for (const k of Object.keys(x)) {
    if (!shown(x[k])) continue;
    fields++;
    if (!Object.prototype.hasOwnProperty.call(y, k) || !shown(y[k]) || !sameJson(x[k], y[k])) return false;
  }
  for (const k of Object.keys(y)) if (shown(y[k])) fields--;
  return fields === 0;
}

/** Whether a field's value appears in JSON (`undefined`, functions and symbols do not). */
const shown = (v: unknown) => v !== undefined && typeof v !== "function" && typeof v !== "symbol";

const hasToJson = (v: object) => typeof (v as { toJSON?: unknown }).toJSON === "function";
