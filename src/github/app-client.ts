/**
 * The App's own calls to GitHub, as the App (a JWT) and as its installations: where it is
 * installed, its name, and a repository's port over an installation's Octokit. With
 * `octokit-port.ts`, the only code of the App that touches Octokit.
 */
import Bottleneck from "bottleneck";
import { realClock, type Clock } from "../core/clock.js";
import { ProbotOctokit, type Probot } from "probot";
import { instrument, isContentCreating, pathOf, type CallStats, type RequestTiming } from "./instrument.js";
import { GITHUB_PACE, Pacer, type PaceLimits } from "./pacing.js";
import { OctokitPort, type Octokit } from "./octokit-port.js";
import { OctokitIssuesPort } from "./octokit-issue-tree.js";
import { rateLimitWaitMs } from "./octokit-rest.js";
import type { GitHubPort } from "./port.js";

/** What the App's calls need of Probot: an Octokit as the App (no id) or as an installation. */
export type AppAuth = Pick<Probot, "auth">;

export interface InstallationRepositories {
  installationId: number;
  repositories: { owner: string; repo: string; id: number }[];
}

const asApp = async (app: AppAuth): Promise<Octokit> => (await app.auth()) as unknown as Octokit;
const asInstallation = async (app: AppAuth, installationId: number): Promise<Octokit> =>
  (await app.auth(installationId)) as unknown as Octokit;

/** Every installation of the App with the repositories it holds, one installation at a time. */
export async function* installedRepositories(app: AppAuth): AsyncGenerator<InstallationRepositories> {
  const octokit = await asApp(app);
  const installations = await octokit.paginate(octokit.rest.apps.listInstallations, { per_page: 100 });
  for (const installation of installations) {
    // A suspended installation's tokens are refused ("This installation has been suspended"): it holds nothing to serve.
    if ((installation as { suspended_at?: string | null }).suspended_at) continue;
    const own = await asInstallation(app, installation.id);
    const repos = await own.paginate(own.rest.apps.listReposAccessibleToInstallation, { per_page: 100 });
    yield { installationId: installation.id, repositories: repos.map((r) => ({ owner: r.owner.login, repo: r.name, id: r.id })) };
  }
}

/** One pace per installation of an App, shared by the ports of its repositories. */
const pacers = new WeakMap<AppAuth, Map<number, Pacer>>();

/** The pace of an installation's requests (src/github/pacing.ts). */
export function pacerOf(app: AppAuth, installationId: number, limits: PaceLimits = GITHUB_PACE, clock: Clock = realClock): Pacer {
  const own = pacers.get(app) ?? pacers.set(app, new Map()).get(app)!;
  return own.get(installationId) ?? own.set(installationId, new Pacer(limits, clock)).get(installationId)!;
}

/** Closes every pace of an App (its process is shutting down): what still waits is refused, never sent. */
export function closePaces(app: AppAuth): void {
  for (const pacer of pacers.get(app)?.values() ?? []) pacer.close();
  pacers.delete(app);
}

/** Requests of each App's installations at GitHub now (sent, their answer not yet back). */
const atGitHub = new WeakMap<AppAuth, { n: number }>();

/**
 * Whether the App's work waits for the clock: something waits — requests for their pace's window or
 * hold, or `asleep` turns of the engine for a rate limit — and no request of the App is at GitHub
 * (a test clock may skip ahead then).
 */
export function waitsForClock(app: AppAuth, asleep: number): boolean {
  const waiting = asleep + [...(pacers.get(app)?.values() ?? [])].reduce((n, p) => n + p.waiting, 0);
  return waiting > 0 && (atGitHub.get(app)?.n ?? 0) === 0;
}

/**
 * Octokit options for an App that paces its own requests per installation (`Pacer`). Octokit's
 * throttling otherwise holds every Octokit of the process — all installations together — to 10
 * requests at once and one write a second (three seconds between those that notify): the App's
 * effects would queue behind each other whatever GitHub allows. Its groups are replaced by unbounded
 * ones; its retry after a rate-limit answer stays.
 */
export function pacedOctokitDefaults(): Record<string, unknown> {
  const free = () => new Bottleneck.Group({});
  return { throttle: { global: free(), write: free(), notifications: free() } };
}

/** Slugs learned, by App: an App's slug never changes. */
const slugs = new WeakMap<AppAuth, string>();

/** The App's slug (its `<slug>[bot]` login signs what it does), or undefined when GitHub did not say. */
export function appSlug(app: AppAuth): Promise<string | undefined> {
  const known = slugs.get(app);
  if (known !== undefined) return Promise.resolve(known);
  return asApp(app)
    .then((o) => o.rest.apps.getAuthenticated())
    .then((r) => {
      const slug = r.data?.slug;
      if (slug) slugs.set(app, slug);
      return slug;
    })
    .catch(() => undefined);
}

/** The id of the installation that holds a repository. */
export async function repositoryInstallationId(app: AppAuth, owner: string, repo: string): Promise<number> {
  const { data } = await (await asApp(app)).rest.apps.getRepoInstallation({ owner, repo });
  return data.id;
}

/**
 * A repository's port over its installation's Octokit, every request counted into `stats` and
 * timed for `onRequest`. The installation Octokit refreshes its token by itself; it carries
 * throttling and retry.
 */
export async function installationPort(
  app: AppAuth,
  installationId: number,
  owner: string,
  repo: string,
  stats: CallStats,
  onRequest?: (call: RequestTiming) => void,
  pace: PaceLimits | false = GITHUB_PACE,
  /** What the pace reads the time from and waits on. */
  clock: Clock = realClock,
): Promise<GitHubPort> {
  const octokit = await asInstallation(app, installationId);
  instrument(octokit, stats, onRequest);
  const pacer = pace ? pacerOf(app, installationId, pace, clock) : undefined;
  const sent = atGitHub.get(app) ?? atGitHub.set(app, { n: 0 }).get(app)!;
  octokit.hook.wrap("request", (request, o) => {
    const send = async () => {
      sent.n++;
      try {
        return await request(o);
      } catch (e) {
        // GitHub said no for the whole installation: every request of it waits, not only this one.
        const wait = rateLimitWaitMs(e, clock.now());
        if (wait !== undefined) pacer?.holdUntil(clock.now() + wait);
        throw e;
      } finally {
        sent.n--;
      }
    };
    if (!pacer) return send();
    const { method, path } = pathOf(octokit, o);
    return pacer.run(isContentCreating(`${method} ${path}`), send);
  });
  return new OctokitIssuesPort(octokit, owner, repo, async () => {
    const slug = await appSlug(app);
    return slug ? `${slug}[bot]` : undefined;
  });
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * ProbotOctokit with `defaults` applied over Probot's own. Probot derives its Octokit class once more
 * with its throttling options, and those are merged after the options of an object given to
 * `.defaults()` — so `throttle` given that way was silently replaced. The function form sees what
 * Probot set and overrides it (nested `throttle`, `retry` and `request` are merged key by key).
 */
export function octokitWithDefaults(defaults: Record<string, unknown>): typeof ProbotOctokit {
  return ProbotOctokit.defaults((instance: Record<string, unknown>) => {
    const merged: Record<string, unknown> = { ...instance, ...defaults };
    for (const key of ["throttle", "retry", "request"]) {
      if (isRecord(defaults[key]) && isRecord(instance[key])) merged[key] = { ...instance[key], ...defaults[key] };
    }
    return merged;
  }) as typeof ProbotOctokit;
}

/** What GitHub answers for a manifest's code: the new App and its credentials. */
export interface ManifestConversion {
  id: number;
  slug?: string;
  html_url: string;
  pem: string;
  webhook_secret: string | null;
  client_id: string;
  client_secret: string;
}

/**
 * Exchanges the code GitHub gave after registering an App from a manifest (no authentication; once,
 * within an hour): docs.github.com/rest/apps/apps#create-a-github-app-from-a-manifest.
 */
export async function convertManifestCode(apiUrl: string, code: string): Promise<ManifestConversion> {
  const octokit = new ProbotOctokit({ baseUrl: apiUrl });
  const { data } = await octokit.rest.apps.createFromManifest({ code });
  return data as unknown as ManifestConversion;
}

/**
 * A repository's port with a token (a person's or a job's), for commands that read a run from any
 * repository (`forge report`). Throttling and retry as the App's.
 */
export function tokenPort(token: string, apiUrl: string, owner: string, repo: string): GitHubPort {
  const octokit = new ProbotOctokit({ auth: { token }, baseUrl: apiUrl.replace(/\/$/, "") });
  return new OctokitPort(octokit, owner, repo);
}
