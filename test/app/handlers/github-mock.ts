/**
 * GitHub's REST API for the handler tests, as nock interceptors whose replies are filled in from the
 * REST description (openapi-bodies.ts) and whose requests are validated against it when they arrive.
 */
import { createHash } from "node:crypto";
import nock from "nock";
import { expect } from "vitest";
import type { StoredRun } from "../../../src/app/run-store.js";
import { specValidator } from "../../../src/local-github/openapi.js";
import {
  API,
  APP_ID,
  APP_SLUG,
  blobSha,
  contentEntry,
  contentFile,
  fileCommit,
  gitRef,
  INSTALLATION_ID,
  INTEGRATION,
  JOURNAL_SHA,
  ownLeases,
  OWNER,
  R,
  RECORD,
  REPO,
  sealed,
  STATE_BRANCH,
} from "./github-facts.js";
import { operation, replyBody, type Json } from "./openapi-bodies.js";

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
