// Forge's local GitHub: one HTTP server shaped like GitHub Enterprise Server.
//   /api/v3/…            REST (the operations in ./rest/ and ./workflows/actions-api.ts, validated)
//   /{owner}/{repo}.git  git smart HTTP (git http-backend)
//   /_sim/…              control API for tests and demos (see ./README.md)
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Clock } from "../core/clock.js";
import { authenticate, authorize, HttpError } from "./auth.js";
import { Control, handleControl } from "./control.js";
import { SimCore } from "./domain/index.js";
import type { FaultConfig } from "./faults.js";
import { isContentCreating, type RateLimitConfig } from "./rate-limits.js";
import { handleGit, isGitRequest } from "./githttp.js";
import { handleManifestWeb, isManifestWebRequest, manifestHandlers } from "./manifest.js";
import { handleGraphql } from "./graphql.js";
import { handlePreReceive, PRE_RECEIVE_PATH } from "./push-hook.js";
import { handleRunPage, isRunPage } from "./run-pages.js";
import { restLatencyClass, type LatencyProfileName, type LatencySettings } from "./latency/profile.js";
import { Model } from "./resources/index.js";
import type { RouteMatch, Violation } from "./openapi.js";
import { handlers as restHandlers, type Handler, type RestCtx, type Result } from "./rest/index.js";
import type { App, Token, User } from "./state.js";
import type { EmittedEvent } from "./webhooks.js";
import { Workflows, type DispatchHandler } from "./workflows/index.js";

export interface SimOptions {
  port?: number;
  host?: string;
  /**
   * Strict mode (default: on under vitest): a response that violates GitHub's schema is replaced
   * by a 500 naming the violation, so the calling test fails. Violations are always collected in
   * `sim.violations`.
   */
  strict?: boolean;
  /** "noop" completes every dispatched job at once; "none" (default) leaves runs to a registered executor */
  workflowExecutor?: "none" | "noop";
  webhookTimeoutMs?: number;
  faults?: Partial<FaultConfig>;
  /**
   * GitHub's rate limits (./rate-limits.ts): always counted per installation for the `x-ratelimit-*`
   * headers; refused past them when `enabled` (default off). `{ enabled: true }` is GitHub's numbers.
   */
  rateLimits?: Partial<RateLimitConfig>;
  /**
   * GitHub's latency: "none" (default) answers at once; "github" delays REST, GraphQL, git, webhook
   * deliveries and job starts as GitHub does (./latency/README.md), seeded for reproducible runs.
   */
  latency?: LatencyProfileName | LatencySettings;
  /** log each request to stderr */
  verbose?: boolean;
  /**
   * What the local GitHub's timers run on — webhook and latency delays, runner queue time, the
   * release of webhooks held for reordering, an unreachable App's outage (src/core/clock.ts). Real
   * time by default; a test gives the clock it gives the App, and moves it.
   */
  clock?: Clock;
  /**
   * How long GitHub's job computing a pull request's `mergeable` takes, in ms of the clock
   * (./mergeability.ts; default `MERGEABILITY_MS`): reads before then answer null.
   */
  mergeabilityMs?: number;
}

export interface Sim {
  /** web root, e.g. http://127.0.0.1:PORT */
  url: string;
  /** REST root (GHES style): http://127.0.0.1:PORT/api/v3 */
  apiUrl: string;
  /** git root: clone `${gitUrl}/owner/repo.git` */
  gitUrl: string;
  core: SimCore;
  control: Control;
  /** operationIds the simulator implements */
  operations: string[];
  /** schema violations seen so far (requests, responses, webhooks) */
  violations: Violation[];
  /** register the job executor called for each workflow_dispatch */
  onWorkflowDispatch(handler: DispatchHandler | undefined): void;
  /** observe every event (before delivery) */
  onEvent(fn: (e: EmittedEvent) => void): () => void;
  /** resolves when every queued webhook delivery has settled */
  idle(): Promise<void>;
  /**
   * Whether nothing goes on until the clock moves: no request is being served but those waiting out
   * a latency delay, no webhook is being sent, no event is being turned into workflow runs. A test
   * clock may skip ahead then (test/helpers/clock.ts).
   */
  quiet(): boolean;
  close(): Promise<void>;
}

const API_PREFIX = "/api/v3";

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const h: Record<string, string> = { ...headers };
  if (body === undefined || status === 204 || status === 304) {
    res.writeHead(status, h);
    res.end();
    return;
  }
  if (Buffer.isBuffer(body) || typeof body === "string") {
    res.writeHead(status, h);
    res.end(body);
    return;
  }
  const text = JSON.stringify(body);
  h["content-type"] = "application/json; charset=utf-8";
  h["content-length"] = String(Buffer.byteLength(text));
  res.writeHead(status, h);
  res.end(text);
}

/** What the REST path shares across requests. */
interface RestService {
  core: SimCore;
  handlers: Record<string, Handler>;
  strict: boolean;
  verbose: boolean;
}

/** A REST request: routed by GitHub's description (501 for a described operation without a handler), run, validated, answered. */
async function serveRest(s: RestService, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  const { core } = s;
  // GitHub's pagination links name a repository by id (`/repositories/{id}/issues?page=2`, the
  // example of "Using pagination in the REST API"): served as the repository's own routes.
  const byId = /^\/repositories\/(\d+)(\/.*)?$/.exec(url.pathname.slice(API_PREFIX.length));
  const named = byId ? core.state.repos.get(Number(byId[1])) : undefined;
  if (named) url = new URL(`${API_PREFIX}/repos/${named.owner.login}/${named.name}${byId![2] ?? ""}${url.search}`, url);
  const path = url.pathname.slice(API_PREFIX.length) || "/";
  const method = (req.method ?? "GET").toUpperCase();
  const requestId = randomUUID().toUpperCase().slice(0, 23);
  const headers: Record<string, string> = {
    "x-github-request-id": requestId,
    "x-github-api-version-selected": "2022-11-28",
    "x-github-media-type": "github.v3; format=json",
  };
  const match = core.validator.match(method, path);
  // GitHub's response time (latency profile): the operation takes effect at the end of it.
  await core.latency.wait(restLatencyClass(method, match?.operationId));
  if (!match) {
    const described = core.validator.describe(method, path);
    if (described) {
      // Never invent a body for an operation the simulator does not implement.
      return send(
        res,
        501,
        Model.error(
          `Forge's local GitHub does not implement ${described.operationId} (${described.method} ${described.template})`,
          501,
          core.validator.docUrl(described.operationId),
          { operationId: described.operationId },
        ),
        headers,
      );
    }
    return send(res, 404, Model.error("Not Found", 404), headers);
  }
  const op = match.operationId;
  const doc = core.validator.docUrl(op);
  // A call that arrives while the simulator shuts down finds no repositories left.
  if (core.closed) return send(res, 503, Model.error("Service Unavailable", 503), headers);
  const handler = s.handlers[op];
  if (!handler) return send(res, 501, Model.error(`Forge's local GitHub does not implement ${op}`, 501, doc, { operationId: op }), headers);

  const raw = await readBody(req);
  let body: Record<string, unknown> | undefined;
  if (raw.length) {
    try {
      body = JSON.parse(raw.toString("utf8")) as Record<string, unknown>;
    } catch {
      return send(res, 400, Model.error("Problems parsing JSON", 400, doc), headers);
    }
  }

  const run = await runOperation(core, handler, { req, url, match, body, headers, requestId });
  let result = run.result;
  Object.assign(headers, run.rateHeaders ?? {}, result.headers ?? {});
  if (result.raw === undefined && result.status !== 302) {
    const err = core.validator.validateResponse(op, result.status, result.body);
    if (err) {
      core.violation({ kind: "response", id: op, status: result.status, errors: err });
      if (s.strict)
        result = {
          status: 500,
          body: Model.error(`Forge's local GitHub produced a response that violates GitHub's description of ${op}: ${err}`, 500),
        };
    }
  }
  core.served.add(`${op} ${result.status}`);
  res.on("finish", () => core.bus.flush());
  if (s.verbose) console.error(`[forge-sim] ${method} ${url.pathname}${url.search} → ${result.status} (${op})`);
  send(res, result.status, result.raw ?? result.body, {
    ...headers,
    ...(result.contentType ? { "content-type": result.contentType } : {}),
  });
}

interface OperationRequest {
  req: IncomingMessage;
  url: URL;
  match: RouteMatch;
  body: Record<string, unknown> | undefined;
  /** The response's headers so far (pagination adds `link`). */
  headers: Record<string, string>;
  requestId: string;
}

/**
 * The operation behind GitHub's edge: injected faults, authentication, permissions, request
 * validation, then its handler. Errors become GitHub's error bodies; the token is known for the
 * rate-limit headers even when the call failed.
 */
async function runOperation(
  core: SimCore,
  handler: Handler,
  r: OperationRequest,
): Promise<{ result: Result; token: Token | undefined; rateHeaders?: Record<string, string> }> {
  const { req, url, match, body } = r;
  const op = match.operationId;
  const doc = core.validator.docUrl(op);
  let token: Token | undefined;
  let rateHeaders: Record<string, string> | undefined;
  try {
    throwInjectedFault(core, op, req, r.requestId);
    const cred = authenticate(core.state, req.headers.authorization);
    let app: App | undefined;
    let actor: User | undefined;
    if (cred.kind === "jwt") {
      app = cred.app;
      actor = app.bot;
    } else if (cred.kind === "token") {
      token = cred.token;
      actor = token.actor;
    }
    const repo = match.params.owner && match.params.repo ? core.state.repoByName(match.params.owner, match.params.repo) : undefined;
    // Counted against the budget of the installation (all its tokens), person or repository
    // before anything else is looked at; refused here when the limits are enforced and spent.
    const rate = core.rateLimits.take(token ?? app, repo?.id, op, isContentCreating(op, match.method), r.requestId);
    rateHeaders = rate.headers;
    if (rate.refuse) throw new HttpError(rate.refuse.status, rate.refuse.message, rate.refuse.doc, {}, rate.refuse.headers);
    if (match.params.owner && match.params.repo && !repo) throw new HttpError(404, "Not Found", doc);
    // Issue endpoints aimed at a pull request also accept the pull_requests permission.
    let targetIsPull = false;
    if (repo && match.params.issue_number) targetIsPull = !!core.state.issue(repo.id, Number(match.params.issue_number))?.pull;
    if (repo && match.params.comment_id) {
      const c = core.state.comments.get(Number(match.params.comment_id));
      targetIsPull = !!(c && core.state.issue(repo.id, c.issueNumber)?.pull);
    }
    authorize(core.state, cred, op, repo, doc, targetIsPull);
    const reqErr = core.validator.validateRequest(op, body, url.searchParams);
    if (reqErr) {
      core.violation({ kind: "request", id: op, errors: reqErr });
      throw new HttpError(422, `Invalid request.\n\n${reqErr}`, doc);
    }
    actor ??= core.ensureUser("ghost");
    const ctx: RestCtx = {
      core,
      op,
      params: match.params,
      query: url.searchParams,
      body,
      repo,
      token,
      app,
      actor,
      doc,
      accept: String(req.headers.accept ?? ""),
      page: pager(core, url, r.headers),
    };
    return { result: await handler(ctx), token, rateHeaders };
  } catch (e) {
    if (e instanceof HttpError)
      return {
        result: { status: e.status, body: Model.error(e.message, e.status, e.doc, e.extra), headers: e.headers },
        token,
        rateHeaders,
      };
    const msg = (e as Error).stack ?? String(e);
    if (!core.closed) core.violation({ kind: "response", id: op, status: 500, errors: `simulator error: ${msg}` });
    return { result: { status: 500, body: Model.error(`Forge's local GitHub failed: ${(e as Error).message}`, 500) }, token, rateHeaders };
  }
}

/** Injected faults come first: GitHub's edge answers them before looking at the request. */
function throwInjectedFault(core: SimCore, op: string, req: IncomingMessage, requestId: string): void {
  let credential = "none";
  try {
    const c = authenticate(core.state, req.headers.authorization);
    credential = c.kind === "token" ? c.token.kind : c.kind;
  } catch {
    /* a bad credential is answered below */
  }
  const fault = core.faults.api(op, credential);
  if (!fault) return;
  if (fault.retryAfter !== undefined) {
    throw new HttpError(
      fault.status,
      "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID " +
        requestId +
        ".",
      "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits",
      {},
      { "retry-after": String(fault.retryAfter) },
    );
  }
  throw new HttpError(
    fault.status,
    fault.status === 502 ? "Server Error" : fault.status === 503 ? "Service Unavailable" : "Internal Server Error",
  );
}

/** `ctx.page()`: `per_page` (≤ 100) and `page` from the query, and the `link` header GitHub sends. */
function pager(core: SimCore, url: URL, headers: Record<string, string>): <T>(items: T[]) => T[] {
  return <T>(items: T[]): T[] => {
    const perPage = Math.min(100, Math.max(1, Number(url.searchParams.get("per_page") ?? 30) || 30));
    const page = Math.max(1, Number(url.searchParams.get("page") ?? 1) || 1);
    const last = Math.max(1, Math.ceil(items.length / perPage));
    // A repository's lists link to `/repositories/{id}/…`, as GitHub's do.
    const inRepo = /^(\/api\/v3)\/repos\/([^/]+)\/([^/]+)(\/.*)?$/.exec(url.pathname);
    const repo = inRepo ? core.state.repoByName(decodeURIComponent(inRepo[2]!), decodeURIComponent(inRepo[3]!)) : undefined;
    const linkPath = repo ? `${inRepo![1]}/repositories/${repo.id}${inRepo![4] ?? ""}` : url.pathname;
    const link = (p: number, rel: string) => {
      const u = new URL(`${core.baseUrl}${linkPath}${url.search}`);
      u.searchParams.set("page", String(p));
      u.searchParams.set("per_page", String(perPage));
      return `<${u.toString()}>; rel="${rel}"`;
    };
    // docs: "Using pagination in the REST API" — Link with prev/next/last/first.
    const links: string[] = [];
    if (page > 1) links.push(link(page - 1, "prev"));
    if (page < last) links.push(link(page + 1, "next"), link(last, "last"));
    if (page > 1) links.push(link(1, "first"));
    if (links.length) headers.link = links.join(", ");
    return items.slice((page - 1) * perPage, page * perPage);
  };
}

export async function createSim(options: SimOptions = {}): Promise<Sim> {
  const strict = options.strict ?? !!process.env.VITEST;
  const core = new SimCore({
    strict,
    webhookTimeoutMs: options.webhookTimeoutMs,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.mergeabilityMs !== undefined ? { mergeabilityMs: options.mergeabilityMs } : {}),
  });
  if (options.faults) core.faults.set(options.faults);
  if (options.rateLimits) core.rateLimits.set(options.rateLimits);
  if (options.latency) core.latency.set(options.latency);
  const workflows = new Workflows(core, options.workflowExecutor ?? "none");
  const handlers: Record<string, Handler> = { ...restHandlers, ...manifestHandlers, ...workflows.handlers() };
  const control = new Control(core, workflows);
  const restService: RestService = { core, handlers, strict, verbose: !!options.verbose };
  const rest = (req: IncomingMessage, res: ServerResponse, url: URL) => serveRest(restService, req, res, url);

  // Requests being served, for `quiet`.
  let serving = 0;
  const server: Server = createServer((req, res) => {
    serving++;
    res.once("close", () => serving--);
    const url = new URL(req.url ?? "/", core.baseUrl);
    const p = url.pathname;
    const work =
      p === API_PREFIX || p.startsWith(`${API_PREFIX}/`)
        ? rest(req, res, url)
        : p === "/api/graphql"
          ? // GHES serves GraphQL at /api/graphql.
            req.method === "POST"
            ? readBody(req).then(async (b) => {
                await core.latency.wait("graphql");
                return handleGraphql(core, req, res, b, send);
              })
            : Promise.resolve(send(res, 404, Model.error("Not Found", 404)))
          : p === PRE_RECEIVE_PATH
            ? handlePreReceive(core, req, res, readBody)
            : p.startsWith("/_sim/") || p === "/_sim"
              ? handleControl(control, req, res, url, readBody, send)
              : isGitRequest(p)
                ? handleGit(core, req, res, url)
                : isManifestWebRequest(p)
                  ? handleManifestWeb(core, req, res, url, readBody)
                  : isRunPage(p) && req.method === "GET"
                    ? handleRunPage(core, res, p)
                    : Promise.resolve(send(res, 404, Model.error("Not Found", 404)));
    work.catch((e: unknown) => {
      console.error("[forge-sim] request failed", e);
      if (!res.headersSent) send(res, 500, Model.error(`Forge's local GitHub failed: ${(e as Error).message}`, 500));
      else res.end();
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === "IPv6" ? `[${addr.address}]` : addr.address;
  core.baseUrl = `http://${host}:${addr.port}`;
  control.baseUrl = core.baseUrl;

  return {
    url: core.baseUrl,
    apiUrl: `${core.baseUrl}${API_PREFIX}`,
    gitUrl: core.baseUrl,
    core,
    control,
    violations: core.violations,
    operations: Object.keys(handlers).sort(),
    onWorkflowDispatch: (h) => workflows.onDispatch(h),
    onEvent: (fn) => core.bus.onEvent(fn),
    // Every webhook delivered, and every event that starts workflows turned into its runs (whose
    // webhooks are then delivered too).
    async idle() {
      do {
        await core.bus.idle();
        await workflows.idle();
        await core.jobsIdle();
      } while (workflows.busy() || core.working);
      await core.bus.idle();
    },
    quiet: () => serving <= core.latency.asleep && !core.bus.busy && !workflows.busy() && !core.working,
    async close() {
      await core.bus.idle().catch(() => undefined);
      await workflows.idle();
      await core.jobsIdle();
      workflows.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      core.close();
    },
  };
}
