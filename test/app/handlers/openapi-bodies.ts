/**
 * Bodies from the trimmed OpenAPI descriptions the local GitHub validates against: a mocked reply
 * or a webhook payload is given in part by a test and filled in from its schema, then validated.
 */
import { specValidator, SpecValidator } from "../../../src/local-github/openapi.js";

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

function resolveRef(doc: Obj, node: Obj): Obj {
  let cur = node;
  while (typeof cur.$ref === "string") {
    const parts = cur.$ref.replace(/^#\//, "").split("/");
    let t: unknown = doc;
    for (const p of parts) t = (t as Obj)[p.replace(/~1/g, "/").replace(/~0/g, "~")];
    cur = t as Obj;
  }
  return cur;
}

/** The non-null alternatives of a schema, flattened through $ref, allOf, anyOf and oneOf. */
function shape(doc: Obj, schema: Obj): Obj {
  const s = resolveRef(doc, schema);
  if (Array.isArray(s.allOf)) {
    // Every part holds: properties named twice keep both schemas, other keywords the first one given.
    const merged: Obj = { properties: {}, required: [] };
    const { allOf, ...own } = s;
    for (const p of [own, ...(allOf as Obj[]).map((x) => shape(doc, x))]) {
      for (const [k, v] of Object.entries(p)) {
        if (k === "properties") {
          const props = merged.properties as Obj;
          for (const [name, schema] of Object.entries(v as Obj)) props[name] = props[name] ? { allOf: [props[name], schema] } : schema;
        } else if (k === "required") (merged.required as string[]).push(...(v as string[]));
        else if (merged[k] === undefined) merged[k] = v;
      }
    }
    return merged;
  }
  const alternatives = (s.anyOf ?? s.oneOf) as Obj[] | undefined;
  if (Array.isArray(alternatives)) {
    const pick = alternatives.map((a) => resolveRef(doc, a)).find((a) => a.type !== "null") ?? alternatives[0]!;
    return shape(doc, pick);
  }
  return s;
}

function typeOf(s: Obj): string | undefined {
  if (Array.isArray(s.type)) return (s.type as string[]).find((t) => t !== "null");
  if (typeof s.type === "string") return s.type;
  if (s.properties) return "object";
  if (s.items) return "array";
  return undefined;
}

const FORMATS: Record<string, string> = {
  "date-time": "2026-11-22T09:00:00Z",
  date: "2026-11-22",
  uri: "https://github.com/acme/widgets",
  url: "https://github.com/acme/widgets",
  "uri-template": "https://api.github.com/repos/acme/widgets{/path}",
  email: "forge@example.com",
  uuid: "00000000-0000-4000-8000-000000000000",
};

/** Whether a schema admits null (OpenAPI 3.0 `nullable`, a 3.1 type list, or a null alternative). */
function nullable(doc: Obj, schema: Obj): boolean {
  const s = resolveRef(doc, schema);
  // Alternatives decide when there are some (a type list beside them may say more than they allow).
  const alternatives = (s.anyOf ?? s.oneOf) as Obj[] | undefined;
  if (Array.isArray(alternatives)) return alternatives.some((a) => nullable(doc, a) || resolveRef(doc, a).type === "null");
  if (s.nullable === true) return true;
  return Array.isArray(s.type) && (s.type as string[]).includes("null");
}

/**
 * A value valid for `schema` with only its required fields, each given the plainest valid value:
 * null wherever null is allowed (a made-up `merged_at` would say a pull request was merged).
 */
function sample(doc: Obj, schema: Obj, depth = 0): unknown {
  return nullable(doc, schema) ? null : sampleOf(doc, shape(doc, schema), depth);
}

/** `sample` of a schema already resolved to one non-null alternative. */
function sampleOf(doc: Obj, s: Obj, depth: number): unknown {
  if ("const" in s) return s.const;
  if (Array.isArray(s.enum)) return (s.enum as unknown[]).find((v) => v !== null) ?? null;
  if (s.default !== undefined && s.default !== null && typeof s.default !== "object") return s.default;
  if (depth > 30) return null;
  switch (typeOf(s)) {
    case "object": {
      const out: Obj = {};
      const props = (s.properties as Obj | undefined) ?? {};
      for (const key of (s.required as string[] | undefined) ?? []) out[key] = props[key] ? sample(doc, props[key] as Obj, depth + 1) : "x";
      return out;
    }
    case "array": {
      const n = typeof s.minItems === "number" ? s.minItems : 0;
      return Array.from({ length: n }, () => sample(doc, s.items as Obj, depth + 1));
    }
    case "string": {
      const v = (typeof s.format === "string" && FORMATS[s.format]) || "x";
      return typeof s.minLength === "number" && v.length < s.minLength ? v.padEnd(s.minLength, "x") : v;
    }
    case "integer":
    case "number":
      return typeof s.minimum === "number" ? Math.max(1, s.minimum) : 1;
    case "boolean":
      return false;
    default:
      return "x";
  }
}

/**
 * `partial` filled in from `schema`: every object it names gets the required fields it lacks, and
 * an array's items are filled in one by one. What `partial` says is kept as it is.
 */
function fill(doc: Obj, schema: Obj | undefined, partial: unknown, depth = 0): unknown {
  if (!schema) return partial;
  const s = shape(doc, schema);
  if (Array.isArray(partial)) return typeOf(s) === "array" ? partial.map((p) => fill(doc, s.items as Obj, p, depth + 1)) : partial;
  if (!isObj(partial)) return partial;
  if (typeOf(s) !== "object") return partial;
  const base = sampleOf(doc, s, depth) as Obj;
  const props = (s.properties as Obj | undefined) ?? {};
  for (const [k, v] of Object.entries(partial)) base[k] = fill(doc, props[k] as Obj | undefined, v, depth + 1);
  return base;
}

export function operation(method: string, path: string): { operationId: string; op: Obj } {
  const v = specValidator();
  const m = v.match(method, path);
  if (!m) throw new Error(`${method} ${path} is not an operation of the trimmed REST description`);
  const op = ((v.api.paths as Obj)[m.template] as Obj)[method.toLowerCase()] as Obj;
  return { operationId: m.operationId, op };
}

function responseSchema(op: Obj, status: number): Obj | undefined {
  const doc = specValidator().api;
  const described = (op.responses as Obj)[String(status)] as Obj | undefined;
  if (!described) return status >= 400 ? { $ref: "#/components/schemas/basic-error" } : undefined;
  const r = resolveRef(doc, described);
  return (
    (((r.content as Obj | undefined)?.["application/json"] as Obj | undefined)?.schema as Obj | undefined) ??
    (status >= 400 ? { $ref: "#/components/schemas/basic-error" } : undefined)
  );
}

/** A reply body for an operation, filled in from its description and validated against it. */
export function replyBody(method: string, path: string, status: number, partial: unknown): unknown {
  const { operationId, op } = operation(method, path);
  const body = partial === undefined ? undefined : fill(specValidator().api, responseSchema(op, status), partial);
  const problem = specValidator().validateResponse(operationId, status, body);
  if (problem) throw new Error(`mocked reply of ${method} ${path} (${operationId}) is not valid for ${status}: ${problem}`);
  return body;
}

/** A webhook payload filled in from its description and validated against it. */
export function webhookPayload(event: string, partial: Obj): Obj {
  const v = specValidator();
  const key = SpecValidator.webhookKey(event, typeof partial.action === "string" ? partial.action : undefined);
  if (!v.hasWebhook(key)) throw new Error(`webhook ${key} is not in the trimmed description`);
  const schema = ((((((v.webhooks.webhooks as Obj)[key] as Obj).post as Obj).requestBody as Obj).content as Obj)["application/json"] as Obj)
    .schema as Obj;
  const payload = fill(v.webhooks, schema, partial) as Obj;
  const problem = v.validateWebhook(key, payload);
  if (problem) throw new Error(`${key} payload is not valid: ${problem}`);
  return payload;
}
