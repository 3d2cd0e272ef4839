/**
 * GitHub's web pages, as the API the App talks to names them: github.com for api.github.com, the
 * host itself for a GitHub Enterprise Server or the local GitHub (`<host>/api/v3`). A link Forge
 * writes (a check run's details, an execution report, the tracker's check column) goes to the
 * GitHub it is on, never to github.com whatever the API.
 */

/** GitHub's web root for a REST root: api.github.com → github.com; `<host>/api/v3` → `<host>`. */
export function webUrlOf(apiUrl: string): string {
  if (/^https:\/\/api\.github\.com\/?$/.test(apiUrl)) return "https://github.com";
  return apiUrl.replace(/\/+$/, "").replace(/\/api\/v3$/, "");
}

/** A repository and the web root of the GitHub it is on. */
export interface RepoOnWeb {
  readonly owner: string;
  readonly repo: string;
  /** GitHub's web root, e.g. https://github.com (no trailing slash needed). */
  readonly webUrl: string;
}

/** A page of the repository: `…/<owner>/<repo>/<path>` (`runs/12`, `blob/<sha>/<file>`, `actions/runs/34`). */
export function repoPage(r: RepoOnWeb, path: string): string {
  return `${r.webUrl.replace(/\/+$/, "")}/${r.owner}/${r.repo}/${path.replace(/^\/+/, "")}`;
}
