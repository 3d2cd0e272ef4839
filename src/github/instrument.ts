/**
 * Request instrumentation of an installation's Octokit: counts of the calls the App made for a
 * repository, and each call's timing for a watcher (benchmarks, the demo's live view).
 */
import type { Octokit } from "./octokit-port.js";

/** GitHub API calls the App made for a repository (measured by an Octokit request hook). */
export interface CallStats {
  reads: number;
  writes: number;
  /** Calls that create content (issues, comments, PRs, commits, reactions, check runs): GitHub limits these to ~80/min and ~500/h. */
  contentCreating: number;
  byRoute: Record<string, number>;
}

/** One API call as a watcher sees it: its route, start and end (performance.now()) and answer status. */
export interface RequestTiming {
  route: string;
  start: number;
  end: number;
  status?: number;
}

/** Requests GitHub counts against the content-creation limit ("secondary rate limits"). */
const CONTENT_CREATING = [
  /^POST \/repos\/[^/]+\/[^/]+\/issues$/,
  /^POST \/repos\/[^/]+\/[^/]+\/issues\/\d+\/comments$/,
  /^POST \/repos\/[^/]+\/[^/]+\/pulls$/,
  /^PUT \/repos\/[^/]+\/[^/]+\/contents\//,
  /^POST \/repos\/[^/]+\/[^/]+\/git\/commits$/,
  /^POST \/repos\/[^/]+\/[^/]+\/merges$/,
  /^PUT \/repos\/[^/]+\/[^/]+\/pulls\/\d+\/merge$/,
  /^POST \/repos\/[^/]+\/[^/]+\/check-runs$/,
  /reactions$/,
];

/** A GraphQL document that only reads (not a `mutation`): a read, though it is POSTed. */
function isGraphqlQuery(path: string, o: unknown): boolean {
  const query = (o as { query?: unknown }).query;
  return path.endsWith("/graphql") && typeof query === "string" && !/^\s*mutation\b/.test(query);
}

/** Whether GitHub counts `route` (`METHOD /path`) against its content-creation limit. */
export const isContentCreating = (route: string) => CONTENT_CREATING.some((re) => re.test(route));

export function newCallStats(): CallStats {
  return { reads: 0, writes: 0, contentCreating: 0, byRoute: {} };
}

/** The request's path without host, the GitHub Enterprise `/api/v3` prefix or the query. */
export function pathOf(octokit: Octokit, o: unknown): { method: string; path: string } {
  const parsed = octokit.request.endpoint.parse(o as never) as { url: string; method: string };
  return {
    method: parsed.method.toUpperCase(),
    path: parsed.url
      .replace(/^https?:\/\/[^/]+/, "")
      .replace(/^\/api\/v3/, "")
      .split("?")[0]!,
  };
}

/** Count every request of `octokit` into `stats`, and report each with its timing to `onRequest`. */
export function instrument(octokit: Octokit, stats: CallStats, onRequest?: (call: RequestTiming) => void): void {
  if (onRequest) {
    octokit.hook.wrap("request", async (request, o) => {
      const { method, path } = pathOf(octokit, o);
      const route = `${method} ${path}`;
      const start = performance.now();
      let status: number | undefined;
      try {
        const res = await request(o);
        status = res.status;
        return res;
      } catch (e) {
        status = (e as { status?: number }).status;
        throw e;
      } finally {
        onRequest({ route, start, end: performance.now(), ...(status !== undefined ? { status } : {}) });
      }
    });
  }
  octokit.hook.before("request", (o) => {
    const { method, path } = pathOf(octokit, o);
    const route = `${method} ${path}`;
    if (method === "GET" || isGraphqlQuery(path, o)) stats.reads++;
    else stats.writes++;
    if (isContentCreating(route)) stats.contentCreating++;
    const template = `${method} ${typeof o.url === "string" && o.url.includes("{") ? o.url : path}`;
    stats.byRoute[template] = (stats.byRoute[template] ?? 0) + 1;
  });
}
