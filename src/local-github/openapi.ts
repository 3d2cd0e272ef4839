// Validation of everything the local GitHub says and hears against GitHub's own descriptions.
//
// The descriptions are the trimmed copies of @octokit/openapi (REST, OpenAPI 3.0) and
// @octokit/openapi-webhooks (OpenAPI 3.1) that scripts/trim-openapi.ts writes to ./spec.
// OpenAPI 3.0 marks optional-null with `nullable: true`, which JSON Schema does not know; it is
// rewritten into a `type` union (or an `anyOf` with `{type: "null"}`) before ajv sees it.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv, type ValidateFunction, type ErrorObject } from "ajv";
import addFormatsModule from "ajv-formats";

// ajv-formats is CommonJS; under NodeNext its default export arrives wrapped.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as unknown as (ajv: Ajv) => Ajv;

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Obj = { [k: string]: Json };

const specDir = join(dirname(fileURLToPath(import.meta.url)), "spec");

function load(name: string): Obj {
  return JSON.parse(readFileSync(join(specDir, name), "utf8")) as Obj;
}

/** Rewrites OpenAPI 3.0 `nullable` and retargets local $refs at a named document. */
function fixSchema(node: Json, docId: string, parentKey = ""): Json {
  if (Array.isArray(node)) return node.map((n) => fixSchema(n, docId));
  if (node === null || typeof node !== "object") return node;
  const out: Obj = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === "$ref" && typeof v === "string" && v.startsWith("#/")) out[k] = `${docId}${v}`;
    else out[k] = fixSchema(v, docId, k);
  }
  if (parentKey === "properties") return out;
  // GitHub's descriptions use `oneOf` where alternatives overlap (e.g. an error body matching two
  // error shapes); JSON Schema's oneOf would then reject valid bodies, so it is read as anyOf.
  if (Array.isArray(out.oneOf)) {
    out.anyOf = out.oneOf;
    delete out.oneOf;
  }
  // Erratum: some inlined copies of `installation.account` say allOf[Simple User, Enterprise]
  // where the component says anyOf; no account can be both.
  if (
    Array.isArray(out.allOf) &&
    out.allOf.some((x) => (x as Obj)?.title === "Simple User") &&
    out.allOf.some((x) => (x as Obj)?.title === "Enterprise")
  ) {
    out.anyOf = out.allOf;
    delete out.allOf;
  }
  if (out.nullable === true) {
    delete out.nullable;
    if (typeof out.type === "string") {
      out.type = [out.type, "null"];
      if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    } else {
      const inner = { ...out };
      for (const k of Object.keys(out)) delete out[k];
      out.anyOf = [inner, { type: "null" }];
    }
  } else if ("nullable" in out && typeof out.nullable === "boolean") {
    delete out.nullable;
  }
  return out;
}

/**
 * Errata of the REST description, each against what GitHub answers. Labels GitHub creates on the
 * fly (issues/add-labels, set-labels or issues/create with a new name) have `description: null`
 * (recorded in @octokit/fixtures "add-labels-to-issue"); `pull-request` and `label` say nullable,
 * but `pull-request-simple` (pulls/list) says string, refusing those pull requests.
 */
function patchErrata(api: Obj): void {
  const schemas = (api.components as Obj | undefined)?.schemas as Obj | undefined;
  const simple = schemas?.["pull-request-simple"] as Obj | undefined;
  const labels = (simple?.properties as Obj | undefined)?.labels as Obj | undefined;
  const description = ((labels?.items as Obj | undefined)?.properties as Obj | undefined)?.description as Obj | undefined;
  if (description && description.type === "string") description.nullable = true;
}

/**
 * Errata of the webhook description. The `issue_dependencies` payloads list `organization` as
 * required, which a repository a person owns cannot give: "Webhook payloads contain the
 * organization object when the webhook is configured for an organization, or when the event occurs
 * from activity in a repository owned by an organization" (docs.github.com/webhooks/webhook-events-and-payloads,
 * the `organization` field of every event). The local GitHub sends it for an organisation's
 * repositories and leaves it out otherwise.
 */
function patchWebhookErrata(hooks: Obj): void {
  const schemas = (hooks.components as Obj | undefined)?.schemas as Obj | undefined;
  addAppEvents(hooks);
  for (const [name, schema] of Object.entries(schemas ?? {})) {
    if (!name.startsWith("webhook-issue-dependencies-")) continue;
    const sc = schema as Obj;
    if (Array.isArray(sc.required)) sc.required = sc.required.filter((r) => r !== "organization");
  }
}

/**
 * The enum of events an App subscribes to (`app.events` in check_suite and other payloads) lags
 * behind GitHub's events: an App subscribed to `sub_issues` or `issue_dependencies` (events the
 * same description documents) would fail it. Those two names are added wherever the enum is.
 */
function addAppEvents(node: Json): void {
  if (Array.isArray(node)) return node.forEach(addAppEvents);
  if (node === null || typeof node !== "object") return;
  const o = node as Obj;
  if (Array.isArray(o.enum) && o.enum.includes("workflow_job") && o.enum.includes("check_suite")) {
    for (const e of ["sub_issues", "issue_dependencies"]) if (!o.enum.includes(e)) o.enum.push(e);
  }
  for (const v of Object.values(o)) addAppEvents(v);
}

export interface Violation {
  kind: "request" | "response" | "webhook";
  /** operationId or webhook key (`pull-request-opened`). */
  id: string;
  status?: number;
  errors: string;
}

export interface RouteMatch {
  operationId: string;
  method: string;
  template: string;
  params: Record<string, string>;
}

interface CompiledRoute {
  method: string;
  template: string;
  regex: RegExp;
  names: string[];
  operationId: string;
}

function compileTemplate(template: string): { regex: RegExp; names: string[] } {
  const names: string[] = [];
  // Path parameters match one segment, except `ref`/`path`-like ones that GitHub lets span slashes
  // (e.g. GET /repos/{o}/{r}/git/ref/heads/feature/x, GET /contents/a/b/c.txt).
  const src = template
    .split(/(\{[^}]+\})/)
    .map((part) => {
      const m = /^\{([^}]+)\}$/.exec(part);
      if (!m) return part.replace(/[.*+?^$()|[\]\\]/g, "\\$&");
      names.push(m[1]!);
      // `path` may be empty: GET …/contents/ lists the repository root.
      if (m[1] === "path") return "(.*?)";
      return ["ref", "branch", "base", "head"].includes(m[1]!) ? "(.+?)" : "([^/]+)";
    })
    .join("");
  return { regex: new RegExp(`^${src}$`), names };
}

function formatErrors(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? [])
    .slice(0, 8)
    .map((e) => `${e.instancePath || "/"} ${e.message ?? ""} ${JSON.stringify(e.params)}`)
    .join("; ");
}

export class SpecValidator {
  readonly api: Obj;
  readonly webhooks: Obj;
  private readonly ajv: Ajv;
  private readonly implemented: CompiledRoute[] = [];
  private readonly all: CompiledRoute[] = [];
  private readonly ops = new Map<string, { method: string; template: string; op: Obj }>();
  private readonly cache = new Map<string, ValidateFunction | null>();

  constructor() {
    const api = load("api.json");
    const hooks = load("webhooks.json");
    this.api = api;
    this.webhooks = hooks;
    this.ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false });
    addFormats(this.ajv);
    // GitHub-specific formats carry no constraint we can check.
    for (const f of ["repo.nwo", "timestamp", "int64", "uri-template", "ssh-key"]) this.ajv.addFormat(f, true);
    // Deviation: GitHub's own no-reply addresses for Apps carry the bot's login, brackets included
    // (`41898282+github-actions[bot]@users.noreply.github.com` is what GitHub sends as the author
    // of Actions' commits), which the strict `email` format refuses. A trailing "[bot]" in the
    // local part is accepted; everything else is checked as before.
    const email = this.ajv.formats.email;
    if (email instanceof RegExp) this.ajv.addFormat("email", (s: string) => email.test(s.replace(/\[bot\]@/, "-bot@")));
    patchErrata(api);
    patchWebhookErrata(hooks);
    this.ajv.addSchema({ $id: "api", components: fixSchema(api.components as Json, "api") } as object);
    this.ajv.addSchema({ $id: "hooks", components: fixSchema(hooks.components as Json, "hooks") } as object);

    for (const [template, item] of Object.entries(api.paths as Obj)) {
      for (const [method, op] of Object.entries(item as Obj)) {
        const o = op as Obj;
        const id = o.operationId as string;
        this.ops.set(id, { method: method.toUpperCase(), template, op: fixSchema(o, "api") as Obj });
        this.implemented.push({ method: method.toUpperCase(), template, operationId: id, ...compileTemplate(template) });
      }
    }
    const routes = (load("routes.json").routes as Array<[string, string, string]>).map(([method, template, operationId]) => ({
      method,
      template,
      operationId,
      ...compileTemplate(template),
    }));
    // Literal segments win over parameters, as GitHub's router does (…/git/refs vs …/git/{x}).
    const specificity = (t: string) => -t.replace(/\{[^}]+\}/g, "").length;
    this.all.push(...routes.sort((a, b) => specificity(a.template) - specificity(b.template)));
    this.implemented.sort((a, b) => specificity(a.template) - specificity(b.template));
  }

  /** Finds the described operation for a request path (without /api/v3). */
  match(method: string, path: string, implementedOnly = true): RouteMatch | undefined {
    for (const r of implementedOnly ? this.implemented : this.all) {
      if (r.method !== method) continue;
      const m = r.regex.exec(path);
      if (!m) continue;
      const params: Record<string, string> = {};
      r.names.forEach((n, i) => (params[n] = decodeURIComponent(m[i + 1]!)));
      return { operationId: r.operationId, method: r.method, template: r.template, params };
    }
    return undefined;
  }

  /** GitHub's documentation page of an operation (used as documentation_url in errors). */
  docUrl(operationId: string): string {
    const url = this.ops.get(operationId)?.op["x-doc-url"];
    return typeof url === "string" ? url : "https://docs.github.com/rest";
  }

  /** Any described operation for this path, implemented or not (for 501 answers). */
  describe(method: string, path: string): RouteMatch | undefined {
    return this.match(method, path, false);
  }

  private compile(key: string, schema: Json | undefined): ValidateFunction | null {
    if (this.cache.has(key)) return this.cache.get(key)!;
    const fn = schema ? this.ajv.compile(schema as object) : null;
    this.cache.set(key, fn);
    return fn;
  }

  private resolve(node: Json): Obj {
    let cur = node as Obj;
    while (cur && typeof cur.$ref === "string" && cur.$ref.startsWith("api#/")) {
      const parts = cur.$ref.slice("api#/components/".length).split("/");
      let t: Json = this.fixedComponents();
      for (const p of parts) t = (t as Obj)[p.replace(/~1/g, "/").replace(/~0/g, "~")] as Json;
      cur = t as Obj;
    }
    return cur;
  }

  private fixedCache: Obj | undefined;
  private fixedComponents(): Obj {
    return (this.fixedCache ??= fixSchema(this.api.components as Json, "api") as Obj);
  }

  /** Validates a request body and query against the operation; returns an error text or undefined. */
  validateRequest(operationId: string, body: unknown, query: URLSearchParams): string | undefined {
    const entry = this.ops.get(operationId);
    if (!entry) return `unknown operation ${operationId}`;
    const problems: string[] = [];
    for (const p of (entry.op.parameters as Json[] | undefined) ?? []) {
      const param = this.resolve(p);
      if (param.in !== "query") continue;
      const raw = query.get(param.name as string);
      if (raw === null) continue;
      const schema = param.schema as Obj;
      const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
      const value: unknown =
        type === "integer" || type === "number"
          ? Number(raw)
          : type === "boolean"
            ? raw === "true"
              ? true
              : raw === "false"
                ? false
                : raw
            : raw;
      const fn = this.compile(`q:${operationId}:${param.name as string}`, schema);
      if (fn && !fn(value)) problems.push(`query ${param.name as string}: ${formatErrors(fn.errors)}`);
    }
    const rb = entry.op.requestBody as Obj | undefined;
    if (rb) {
      const schema = ((rb.content as Obj | undefined)?.["application/json"] as Obj | undefined)?.schema;
      if (body === undefined) {
        if (rb.required === true) problems.push("request body required");
      } else {
        const fn = this.compile(`req:${operationId}`, schema);
        if (fn && !fn(body)) problems.push(`body: ${formatErrors(fn.errors)}`);
      }
    }
    return problems.length ? problems.join("; ") : undefined;
  }

  /** Validates a response; returns an error text or undefined. */
  validateResponse(operationId: string, status: number, body: unknown): string | undefined {
    const entry = this.ops.get(operationId);
    if (!entry) return `unknown operation ${operationId}`;
    const responses = entry.op.responses as Obj;
    const described = responses[String(status)];
    if (!described) {
      // GitHub's descriptions omit most auth, rate-limit and server errors; any such answer must
      // still have GitHub's error shape. A success status that is not described is a bug.
      if (status >= 400) return this.validateError(body);
      return `status ${status} not described for ${operationId}`;
    }
    const resp = this.resolve(described);
    const content = resp.content as Obj | undefined;
    if (!content) {
      if (body === undefined || body === "") return undefined;
      // Error responses described without content still carry GitHub's error body.
      return status >= 400 ? this.validateError(body) : `status ${status} of ${operationId} has no body`;
    }
    const json = content["application/json"] as Obj | undefined;
    if (!json) return undefined; // non-JSON bodies (e.g. logs redirect) are not schema-checked
    const fn = this.compile(`res:${operationId}:${status}`, json.schema);
    if (fn && !fn(body)) return `response ${status}: ${formatErrors(fn.errors)}`;
    return undefined;
  }

  private validateError(body: unknown): string | undefined {
    const fn = this.compile("basic-error", { $ref: "api#/components/schemas/basic-error" });
    if (fn && !fn(body)) return `error body: ${formatErrors(fn.errors)}`;
    return undefined;
  }

  /** Validates a webhook payload; `key` is e.g. `pull-request-opened` or `push`. */
  validateWebhook(key: string, payload: unknown): string | undefined {
    const hook = (this.webhooks.webhooks as Obj)[key] as Obj | undefined;
    if (!hook) return `webhook ${key} not in the trimmed description`;
    const schema = ((((hook.post as Obj).requestBody as Obj).content as Obj)["application/json"] as Obj).schema as Obj;
    const fn = this.compile(`hook:${key}`, fixSchema(schema, "hooks"));
    if (fn && !fn(payload)) return formatErrors(fn.errors);
    return undefined;
  }

  /** Key of the webhook description for an event and action (`pull_request`,`opened` → `pull-request-opened`). */
  static webhookKey(event: string, action?: string): string {
    return [event, action].filter(Boolean).join("-").replace(/_/g, "-");
  }

  hasWebhook(key: string): boolean {
    return key in (this.webhooks.webhooks as Obj);
  }
}

let shared: SpecValidator | undefined;
/** One validator per process: compiling schemas is the slow part, and they never change. */
export function specValidator(): SpecValidator {
  return (shared ??= new SpecValidator());
}
