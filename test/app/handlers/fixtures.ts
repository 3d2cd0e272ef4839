/**
 * Shared fixtures of the handler tests: a real Probot instance with the Forge App loaded, GitHub's
 * REST API mocked with nock, and webhook payloads and replies filled in from the same trimmed
 * OpenAPI descriptions the local GitHub validates against. Every mocked reply is validated for its
 * operation and status when it is declared, every request the App sends is validated when it
 * arrives, and every payload is validated before Probot receives it: a violation fails the test.
 */
import { createHash } from "node:crypto";
import nock from "nock";
import { Probot, ProbotOctokit } from "probot";
import { expect } from "vitest";
import { createForgeApp, type ForgeApp, type ForgeAppOptions } from "../../../src/app/app.js";
import { journalKeyFrom, sealJournal } from "../../../src/app/journal-seal.js";
import { newStoredRun, type RunFacts, type StoredRun } from "../../../src/app/run-store.js";
import { decide, startRun, type Decision } from "../../../src/core/decide/index.js";
import type { LeafInput } from "../../../src/core/inputs.js";
import type { Journal } from "../../../src/core/journal.js";
import type { PullRequestInfo } from "../../../src/github/port.js";
import { forgeConfigSchema, type ForgeConfig } from "../../../src/core/schemas/config.js";
import { specValidator, SpecValidator } from "../../../src/local-github/openapi.js";
import { appKeys } from "../../local-github/support/helpers.js";
import { TestClock } from "../../helpers/clock.js";

export const API = "https://api.github.com";
export const OWNER = "acme";
export const REPO = "widgets";
export const APP_ID = 1001;
export const APP_SLUG = "forge";
export const INSTALLATION_ID = 42;
/** The App's clock in every test: journals and events are reproducible. */
export const NOW = Date.parse("2026-11-22T09:00:00.000Z");

export const PLAN_ID = "mini";
export const PLAN_SHA = "c0ffee0000000000000000000000000000000001";
export const RUN_ID = `${PLAN_ID}-${PLAN_SHA.slice(0, 7)}`;
export const STATE_BRANCH = `forge/${RUN_ID}/_state`;
export const INTEGRATION = `forge/${RUN_ID}/_integration`;
export const INTEGRATION_SHA = "1111111111111111111111111111111111111111";
/** An attempt's work commit, the runner's record commit on top of it, and the commit that merged its PR. */
export const WORK = "a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0";
export const RECORD = "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1";

/** Task `taskId`'s attempt-1 PR as GitHub answers it: open, its record commit the head, into the integration branch. */
export function openTaskPull(number: number, taskId = "a", overrides: Partial<PullRequestInfo> = {}): PullRequestInfo {
  return {
    number,
    state: "open",
    merged: false,
    headRef: `forge/${RUN_ID}/${taskId}/1`,
    headSha: RECORD,
    baseRef: INTEGRATION,
    draft: false,
    fromFork: false,
    ...overrides,
  };
}

/** Task `taskId`'s first attempt finished with exit 0: its work at WORK, its record commit at RECORD. */
export function finishedReady(taskId = "a"): LeafInput {
  return {
    kind: "agent.finished",
    taskId,
    attempt: 1,
    exitCode: 0,
    pushedSha: WORK,
    recordSha: RECORD,
    walkthrough: { status: "completed", confidence: 0.9, headSha: WORK, filesChanged: [`src/${taskId}.ts`], risks: [], followups: [] },
  };
}
export const MERGE = "3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e";
export const branchOf = (taskId: string, attempt: number) => `forge/${RUN_ID}/${taskId}/${attempt}`;
export const R = `/repos/${OWNER}/${REPO}`;

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Obj = Record<string, unknown>;

// ---------------------------------------------------------------- bodies from the descriptions

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

function operation(method: string, path: string): { operationId: string; op: Obj } {
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

// ---------------------------------------------------------------- GitHub, mocked

export interface Call {
  method: string;
  /** Path with parameters decoded, without the query. */
  path: string;
  query: Record<string, string>;
  body: unknown;
  /** `METHOD /path` for order assertions. */
  route: string;
}

export interface Hit {
  /** The request that consumed the mock (undefined until it is called). */
  call?: Call;
  /** Its JSON body. */
  readonly body: unknown;
}

function parseRoute(route: string): { method: string; path: string; query?: Record<string, string> } {
  const [method, target] = route.split(" ") as [string, string];
  const [path, q] = target.split("?") as [string, string | undefined];
  return { method, path, ...(q !== undefined ? { query: Object.fromEntries(new URLSearchParams(q)) } : {}) };
}

function decodeUri(uri: string): { path: string; query: Record<string, string> } {
  const url = new URL(uri, API);
  return { path: url.pathname.split("/").map(decodeURIComponent).join("/"), query: Object.fromEntries(url.searchParams) };
}

const sameQuery = (a: Record<string, string>, b: Record<string, string>) =>
  JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort());

/**
 * GitHub's REST API as nock interceptors. `reply("GET /repos/acme/widgets/pulls/7", 200, { … })`
 * answers one request on that decoded path (and exactly that query, when one is given) with the
 * body filled in from the description; each mock answers once.
 */
export class GitHubMock {
  readonly calls: Call[] = [];
  /** Requests that broke the REST description. */
  readonly violations: string[] = [];
  /** Requests no mock answered. */
  readonly unmatched: string[] = [];
  readonly #mocks: { route: string; hit: Hit }[] = [];
  readonly #onNoMatch = (req: { method?: string; path?: string; href?: string; options?: { method?: string; href?: string } }) => {
    this.unmatched.push(`${req.method ?? req.options?.method ?? "?"} ${req.path ?? req.href ?? req.options?.href ?? "?"}`);
  };

  constructor() {
    nock.disableNetConnect();
    nock.emitter.on("no match", this.#onNoMatch);
  }

  reply(route: string, status: number, partial?: unknown, headers: Record<string, string> = {}): Hit {
    const want = parseRoute(route);
    const { operationId } = operation(want.method, want.path);
    const body = replyBody(want.method, want.path, status, partial);
    const hit: Hit = {
      get body() {
        return this.call?.body;
      },
    };
    this.#mocks.push({ route, hit });
    nock(API)
      .intercept((uri: string) => {
        const got = decodeUri(uri);
        return got.path === want.path && (!want.query || sameQuery(got.query, want.query));
      }, want.method)
      .reply((uri, requestBody) => {
        const got = decodeUri(uri);
        const parsed =
          typeof requestBody === "string" && requestBody !== ""
            ? (JSON.parse(requestBody) as unknown)
            : requestBody === ""
              ? undefined
              : requestBody;
        const call: Call = { method: want.method, path: got.path, query: got.query, body: parsed, route: `${want.method} ${got.path}` };
        this.calls.push(call);
        hit.call = call;
        const problem = specValidator().validateRequest(operationId, parsed, new URLSearchParams(got.query));
        if (problem) this.violations.push(`${want.method} ${got.path}: ${problem}`);
        return body === undefined
          ? [status, "", headers]
          : [status, body as Json as nock.Body, { "content-type": "application/json; charset=utf-8", ...headers }];
      });
    return hit;
  }

  /**
   * The merge's read of a pull request and the paths it changes, in one GraphQL query
   * (docs.github.com/graphql/reference/objects#pullrequest): the task's own PR into the integration
   * branch unless `over` says otherwise.
   */
  pullWithFiles(number: number, headRef: string, files: string[], over: Record<string, unknown> = {}): Hit {
    const route = `POST /graphql pullRequest(${number})`;
    const hit: Hit = {
      get body() {
        return this.call?.body;
      },
    };
    this.#mocks.push({ route, hit });
    nock(API)
      .post(
        "/graphql",
        (body: { query?: string; variables?: { number?: number } }) =>
          /pullRequest\(number: \$number\)/.test(body.query ?? "") && body.variables?.number === number,
      )
      .reply((_uri, requestBody) => {
        const call: Call = { method: "POST", path: "/graphql", query: {}, body: requestBody, route: `POST /graphql` };
        this.calls.push(call);
        hit.call = call;
        const pullRequest = {
          number,
          state: "OPEN",
          merged: false,
          mergeCommit: null,
          headRefName: headRef,
          headRefOid: RECORD,
          baseRefName: INTEGRATION,
          isDraft: false,
          isCrossRepository: false,
          headRepository: { id: "R_1" },
          files: { pageInfo: { hasNextPage: false }, nodes: files.map((path) => ({ path })) },
          reviews: { nodes: [] },
          ...over,
        };
        return [200, { data: { repository: { pullRequest } } }, { "content-type": "application/json; charset=utf-8" }];
      });
    return hit;
  }

  /**
   * An issue's title, body and last edit, in one GraphQL query
   * (docs.github.com/graphql/reference/objects#issue, `lastEditedAt`): `/forge plan` reads them.
   */
  issueAsEdited(number: number, issue: { title: string; body: string; lastEditedAt: string | null }): Hit {
    const route = `POST /graphql issue(${number})`;
    const hit: Hit = {
      get body() {
        return this.call?.body;
      },
    };
    this.#mocks.push({ route, hit });
    nock(API)
      .post(
        "/graphql",
        (body: { query?: string; variables?: { number?: number } }) =>
          /issue\(number: \$number\)/.test(body.query ?? "") && body.variables?.number === number,
      )
      .reply((_uri, requestBody) => {
        const call: Call = { method: "POST", path: "/graphql", query: {}, body: requestBody, route: `POST /graphql` };
        this.calls.push(call);
        hit.call = call;
        return [200, { data: { repository: { issue } } }, { "content-type": "application/json; charset=utf-8" }];
      });
    return hit;
  }

  /** A batch of files read at `ref` in one GraphQL query (`OctokitPort.readFiles`: `object(expression: "<ref>:<path>")`). */
  filesAt(ref: string, files: Record<string, string>): Hit {
    const route = `POST /graphql repository.object ×${Object.keys(files).length}`;
    const hit: Hit = {
      get body() {
        return this.call?.body;
      },
    };
    this.#mocks.push({ route, hit });
    nock(API)
      .post("/graphql", (body: { query?: string }) => /object\(expression:/.test(body.query ?? ""))
      .reply((_uri, requestBody) => {
        const call: Call = { method: "POST", path: "/graphql", query: {}, body: requestBody, route: "POST /graphql" };
        this.calls.push(call);
        hit.call = call;
        const vars = (requestBody as { variables: Record<string, string> }).variables;
        const repository: Record<string, unknown> = {};
        for (const [k, expression] of Object.entries(vars)) {
          if (!/^e\d+$/.test(k)) continue;
          const [at, ...rest] = expression.split(":");
          const text = at === ref ? files[rest.join(":")] : undefined;
          repository[`f${k.slice(1)}`] =
            text === undefined
              ? null
              : { __typename: "Blob", oid: createHash("sha1").update(text).digest("hex"), text, isBinary: false, isTruncated: false };
        }
        return [200, { data: { repository } }, { "content-type": "application/json; charset=utf-8" }];
      });
    return hit;
  }

  /** Every request was expected and valid, and every mock was used. */
  verify(): void {
    expect(this.unmatched).toEqual([]);
    expect(this.#mocks.filter((m) => !m.hit.call).map((m) => m.route)).toEqual([]);
    expect(this.violations).toEqual([]);
    expect(nock.pendingMocks()).toEqual([]);
  }

  close(): void {
    nock.emitter.removeListener("no match", this.#onNoMatch);
    nock.cleanAll();
  }

  /** Routes called, in order (`METHOD /path`). */
  routes(): string[] {
    return this.calls.map((c) => c.route);
  }

  // ---- the App's authentication ----

  /** `GET /app` (the App's slug, to recognise its own events). */
  app(): Hit {
    return this.reply("GET /app", 200, { id: APP_ID, slug: APP_SLUG, name: "Forge", owner: { login: OWNER, type: "Organization" } });
  }

  /** The installation token Probot asks for before its first installation request. */
  token(): Hit {
    return this.reply(`POST /app/installations/${INSTALLATION_ID}/access_tokens`, 201, {
      token: "ghs_installation",
      expires_at: "2099-01-01T00:00:00Z",
    });
  }

  // ---- frequent replies ----

  repo(): Hit {
    return this.reply(`GET ${R}`, 200, {
      id: 77,
      name: REPO,
      full_name: `${OWNER}/${REPO}`,
      default_branch: "main",
      owner: { login: OWNER },
    });
  }

  /** `.github/forge.yml` at `ref`: absent (the defaults) unless `content` is given. */
  config(ref: string, content?: string): Hit {
    return content === undefined ? this.missing(".github/forge.yml", ref) : this.file(".github/forge.yml", ref, content);
  }

  file(path: string, ref: string, content: string, sha = blobSha(content)): Hit {
    return this.reply(`GET ${R}/contents/${path}?ref=${ref}`, 200, contentFile(path, content, sha));
  }

  missing(path: string, ref: string): Hit {
    return this.reply(`GET ${R}/contents/${path}?ref=${ref}`, 404, {
      message: "Not Found",
      documentation_url: "https://docs.github.com/rest/repos/contents#get-repository-content",
      status: "404",
    });
  }

  dir(path: string, ref: string, entries: { name: string; type: "file" | "dir" }[]): Hit {
    return this.reply(
      `GET ${R}/contents/${path}?ref=${ref}`,
      200,
      entries.map((e) => ({ ...contentEntry(`${path}/${e.name}`, e.type === "dir" ? "" : e.name), type: e.type })),
    );
  }

  /** The run's journal on its state branch. */
  /**
   * The stored journal. Its pending effects are leased to the test App's replica name unless the
   * run names other leases: the App reading it is the process that wrote it, restarted under the
   * same name (another process's effects are given leases of their own in the tests about them).
   */
  journal(state: StoredRun, sha = JOURNAL_SHA): Hit {
    const leases = Object.keys(state.leases ?? {}).length ? state.leases : ownLeases(state);
    return this.file("journal.json", STATE_BRANCH, sealed({ ...state, leases }), sha);
  }

  /** A compare-and-swap write of the journal answered with `status` (200: written, 409: it moved). */
  writeJournal(status: 200 | 201 | 409, newSha = "b10b000000000000000000000000000000000002"): Hit {
    if (status === 409)
      return this.reply(`PUT ${R}/contents/journal.json`, 409, {
        message: "journal.json does not match b10b",
        documentation_url: "https://docs.github.com/rest/repos/contents#create-or-update-file-contents",
        status: "409",
      });
    return this.reply(`PUT ${R}/contents/journal.json`, status, fileCommit("journal.json", newSha, `c0${newSha.slice(2)}`));
  }

  ref(branch: string, sha: string): Hit {
    return this.reply(`GET ${R}/git/ref/heads/${branch}`, 200, gitRef(branch, sha));
  }

  createRef(branch: string, sha: string): Hit {
    return this.reply(`POST ${R}/git/refs`, 201, gitRef(branch, sha));
  }

  dispatch(runId: number): Hit {
    return this.reply(`POST ${R}/actions/workflows/forge-agent.yml/dispatches`, 200, {
      workflow_run_id: runId,
      run_url: `${API}${R}/actions/runs/${runId}`,
      html_url: `https://github.com/${OWNER}/${REPO}/actions/runs/${runId}`,
    });
  }

  permission(user: string, permission: "admin" | "maintain" | "write" | "triage" | "read" | "none"): Hit {
    return this.reply(`GET ${R}/collaborators/${user}/permission`, 200, {
      permission,
      role_name: permission,
      user: { login: user, type: "User" },
    });
  }

  reaction(commentId: number, content: string): Hit {
    return this.reply(`POST ${R}/issues/comments/${commentId}/reactions`, 201, {
      id: 900,
      content,
      user: { login: `${APP_SLUG}[bot]`, type: "Bot" },
    });
  }

  comment(issue: number, id = 700): Hit {
    return this.reply(`POST ${R}/issues/${issue}/comments`, 201, {
      id,
      body: "(as sent)",
      user: { login: `${APP_SLUG}[bot]`, type: "Bot" },
    });
  }

  /** `PATCH` of the tracker issue (its body is re-rendered in place). */
  tracker(issue: number): Hit {
    return this.reply(`PATCH ${R}/issues/${issue}`, 200, { number: issue, title: "Forge run", state: "open", labels: [] });
  }
}

export const JOURNAL_SHA = "b10b000000000000000000000000000000000001";

/** The test App's journal key: derived from its private key, as a real App's is. */
export const JOURNAL_KEY = journalKeyFrom(appKeys().privateKeyPem);
/** The repository's id as the fixtures' GitHub answers it (`GET /repos/{owner}/{repo}`). */
export const REPOSITORY_ID = 77;
/** `journal.json`'s text for `state`, sealed as the App seals it in this repository. */
export const sealed = (state: StoredRun, repositoryId = REPOSITORY_ID) =>
  sealJournal(JOURNAL_KEY, state, { repositoryId, runId: state.journal.runId });

/** A blob sha for a file's text (any 40 hex digits are fine here; this one is stable per text). */
export function blobSha(content: string): string {
  let h = 0;
  for (const ch of content) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return h.toString(16).padStart(8, "0").repeat(5);
}

function contentEntry(path: string, name: string) {
  const url = `${API}${R}/contents/${path}`;
  return {
    name: name || path.split("/").pop()!,
    path,
    sha: blobSha(path),
    size: 0,
    url,
    git_url: `${API}${R}/git/blobs/${blobSha(path)}`,
    html_url: `https://github.com/${OWNER}/${REPO}/blob/main/${path}`,
    download_url: null,
    _links: { self: url, git: null, html: null },
  };
}

export function contentFile(path: string, content: string, sha: string) {
  return {
    ...contentEntry(path, path.split("/").pop()!),
    type: "file",
    encoding: "base64",
    size: Buffer.byteLength(content),
    sha,
    content: Buffer.from(content, "utf8").toString("base64"),
  };
}

function fileCommit(path: string, blob: string, commit: string) {
  return {
    content: {
      ...contentEntry(path, path.split("/").pop()!),
      sha: blob,
      type: "file",
      download_url: `https://raw.githubusercontent.com/${OWNER}/${REPO}/HEAD/${path}`,
      _links: {
        self: `${API}${R}/contents/${path}`,
        git: `${API}${R}/git/blobs/${blob}`,
        html: `https://github.com/${OWNER}/${REPO}/blob/HEAD/${path}`,
      },
    },
    commit: { sha: commit, message: "forge: journal", parents: [] },
  };
}

export function gitRef(branch: string, sha: string) {
  return {
    ref: `refs/heads/${branch}`,
    node_id: "REF_1",
    url: `${API}${R}/git/refs/heads/${branch}`,
    object: { type: "commit", sha, url: `${API}${R}/git/commits/${sha}` },
  };
}

/** The JSON a journal write sent (its base64 content decoded). */
export function decodedJournal(hit: Hit): StoredRun {
  const body = hit.body as { content: string };
  const { seal: _seal, ...state } = JSON.parse(Buffer.from(body.content, "base64").toString("utf8")) as StoredRun & { seal?: string };
  return state;
}

/** A short view of a journal for snapshots: statuses, the outbox and the events of the write. */
export function journalView(state: StoredRun, previous?: StoredRun) {
  const before = previous?.events.tail.length ?? 0;
  return {
    status: state.journal.status,
    seq: state.journal.seq,
    tasks: state.journal.tasks.map((t) => `${t.id} ${t.status} #${t.attempt}${t.hold ? ` (${t.hold})` : ""}`),
    outbox: state.journal.outbox.map((e) => e.key),
    events: state.events.tail.slice(before).map((e) => `${e.type}${e.taskId ? ` ${e.taskId}` : ""}`),
  };
}

// ---------------------------------------------------------------- runs

export type PlanSpec = Record<string, string[]>;

export function testConfig(overrides: Obj = {}): ForgeConfig {
  return forgeConfigSchema.parse({ retry_backoff: { base_seconds: 0, max_seconds: 0 }, ...overrides });
}

/**
 * A stored run of a small plan (`{ a: [], b: ["a"] }`), started a minute before NOW with every
 * start-up effect carried out, then moved on by `steps` (each a batch of inputs, decided at NOW-30 s,
 * then the effects they produced acknowledged). The tracker issue is #3.
 */
export function storedRun(
  spec: PlanSpec,
  opts: {
    config?: ForgeConfig;
    steps?: LeafInput[][];
    facts?: Partial<RunFacts>;
    pendingOutbox?: boolean;
    /** The issue number each Change Request's opening is acknowledged with. */
    crIssues?: Record<string, number>;
  } = {},
): StoredRun {
  const config = opts.config ?? testConfig();
  const nodes = Object.entries(spec).map(([id, dependencies]) => ({
    id,
    kind: "task" as const,
    agentType: "2" as const,
    title: `Task ${id}`,
    dependencies,
  }));
  const started = startRun(
    {
      runId: RUN_ID,
      planId: PLAN_ID,
      planCommit: PLAN_SHA,
      dagHash: "d".repeat(64),
      nodes,
      integrationBranch: INTEGRATION,
      baseBranch: "main",
    },
    NOW - 60_000,
    config,
  );
  let journal = started.journal;
  const events = [...started.events];
  const settle = (at: number) => {
    for (let round = 0; round < 5 && journal.outbox.length; round++) {
      const acks: LeafInput[] = journal.outbox.map((e) => ({
        kind: "effect.done",
        key: e.key,
        result:
          e.kind === "DispatchAgent"
            ? { workflowRunId: 5000 + e.attempt }
            : e.kind === "OpenChangeRequest" && opts.crIssues?.[e.crId] !== undefined
              ? { issueNumber: opts.crIssues[e.crId] }
              : {},
      }));
      const d: Decision = decide(journal, { kind: "batch", inputs: acks }, at, config);
      journal = d.journal;
      events.push(...d.events);
    }
  };
  settle(NOW - 60_000);
  const steps = opts.steps ?? [];
  steps.forEach((inputs, k) => {
    const d = decide(journal, { kind: "batch", inputs }, NOW - 30_000 + k, config);
    journal = d.journal;
    events.push(...d.events);
    if (!opts.pendingOutbox || k < steps.length - 1) settle(NOW - 30_000 + k);
  });
  return newStoredRun(
    journal,
    config,
    { trackerIssue: 3, trackerUpdatedAt: new Date(NOW - 60_000).toISOString(), planSha: PLAN_SHA, ...opts.facts },
    events,
  );
}

export const taskOf = (j: Journal, id: string) => j.tasks.find((t) => t.id === id)!;

// ---------------------------------------------------------------- payloads

export function repository(): Obj {
  return {
    id: 77,
    node_id: "R_77",
    name: REPO,
    full_name: `${OWNER}/${REPO}`,
    private: false,
    default_branch: "main",
    owner: user(OWNER, "Organization"),
  };
}

export function user(login: string, type: "User" | "Bot" | "Organization" = "User"): Obj {
  return { login, id: login.length * 1000 + 7, node_id: `U_${login}`, type, html_url: `https://github.com/${login.replace("[bot]", "")}` };
}

export const installation = { id: INSTALLATION_ID, node_id: "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uNDI=" };

/** A webhook as Probot receives it, its payload validated for its event and action. */
export interface Delivery {
  id: string;
  name: string;
  payload: Obj;
}

export function delivery(name: string, partial: Obj, id = `delivery-${name}-${Math.random().toString(16).slice(2)}`): Delivery {
  return { id, name, payload: webhookPayload(name, { repository: repository(), installation, ...partial }) };
}

// ---------------------------------------------------------------- the App

export interface TestApp {
  probot: Probot;
  forge: ForgeApp;
  /** The App's clock: it stands at NOW until a test moves it. */
  clock: TestClock;
  receive(d: Delivery): Promise<void>;
}

/** A real Probot with the Forge App loaded; handlers finish before `receive` resolves. */
/** The replica name of the App the handler tests start. */
export const TEST_REPLICA = "forge-test";

/** Every pending effect of `state` leased to `owner` until a minute after NOW. */
export function ownLeases(state: StoredRun, owner = TEST_REPLICA, until = NOW + 60_000): StoredRun["leases"] {
  return Object.fromEntries(state.journal.outbox.map((e) => [e.key, { owner, until: new Date(until).toISOString() }]));
}

export async function startApp(options: ForgeAppOptions = {}): Promise<TestApp> {
  const probot = new Probot({
    appId: APP_ID,
    privateKey: appKeys().privateKeyPem,
    logLevel: "fatal",
    // Tests disable retries and throttling (the function form replaces Probot's defaults).
    Octokit: ProbotOctokit.defaults((instanceOptions: object) => ({
      ...instanceOptions,
      retry: { enabled: false },
      throttle: { enabled: false },
    })),
  });
  const clock = new TestClock(NOW);
  const forge = createForgeApp({ background: false, clock, replicaId: TEST_REPLICA, journalKey: JOURNAL_KEY, ...options });
  await probot.load(forge);
  return {
    probot,
    forge,
    clock,
    receive: (d) => probot.receive({ id: d.id, name: d.name, payload: d.payload } as never),
  };
}

export type { Journal };
