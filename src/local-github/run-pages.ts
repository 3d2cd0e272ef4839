// The web pages the App's links open, as the local GitHub serves them in plain text: a workflow
// run's and a job's (`/{owner}/{repo}/actions/runs/{id}` and `…/runs/{id}/job/{jobId}`, their
// `html_url`: the log), a check run's (`/{owner}/{repo}/runs/{id}`: its title, summary and text), and a
// file at a commit (`/{owner}/{repo}/blob/{sha}/{path}`: its content). So a link the App writes
// beside a task — the tracker's "job log" and "check", a check run's details, its execution report —
// opens on the local GitHub too. A private repository's pages are not served: GitHub asks who is
// looking, and this stand-in has no web sign-in.
import type { ServerResponse } from "node:http";
import type { SimCore } from "./domain/index.js";
import * as git from "./git/index.js";
import type { Repo } from "./state.js";

const RUN_PAGE = /^\/([^/]+)\/([^/]+)\/actions\/runs\/(\d+)(?:\/job\/(\d+))?\/?$/;
const CHECK_PAGE = /^\/([^/]+)\/([^/]+)\/runs\/(\d+)\/?$/;
const BLOB_PAGE = /^\/([^/]+)\/([^/]+)\/blob\/([0-9a-f]{40})\/(.+)$/;

export function isRunPage(path: string): boolean {
  return RUN_PAGE.test(path) || CHECK_PAGE.test(path) || BLOB_PAGE.test(path);
}

/** The public repository a page's path names, if any. */
function publicRepo(core: SimCore, owner: string, name: string): Repo | undefined {
  const repo = core.state.repoByName(decodeURIComponent(owner), decodeURIComponent(name));
  return repo && !repo.private ? repo : undefined;
}

const notFound = (res: ServerResponse) => void res.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end("Not Found\n");

export async function handleRunPage(core: SimCore, res: ServerResponse, path: string): Promise<void> {
  const check = CHECK_PAGE.exec(path);
  if (check) return checkPage(core, res, check);
  const blob = BLOB_PAGE.exec(path);
  if (blob) return blobPage(core, res, blob);
  const [, owner = "", name = "", runId = "", jobId] = RUN_PAGE.exec(path) ?? [];
  const repo = publicRepo(core, owner, name);
  const run = repo ? core.state.runs.get(Number(runId)) : undefined;
  const jobs = run && run.repoId === repo!.id ? run.jobs.filter((j) => jobId === undefined || j.id === Number(jobId)) : [];
  if (!run || jobs.length === 0) return notFound(res);
  const text = [
    `${run.displayTitle} — ${run.path}, run ${run.id} (${run.status}${run.conclusion ? `, ${run.conclusion}` : ""})`,
    ...jobs.map(
      (j) =>
        `\n== job ${j.name} (${j.status}${j.conclusion ? `, ${j.conclusion}` : ""})\n` +
        j.steps.map((s) => `   ${s.conclusion ?? s.status}  ${s.name}`).join("\n") +
        `\n\n${j.log}`,
    ),
  ].join("\n");
  res.writeHead(200, { "content-type": "text/plain; charset=utf-8" }).end(text);
}

/** A check run's page: its name, state, title, summary and text. */
function checkPage(core: SimCore, res: ServerResponse, [, owner = "", name = "", id = ""]: RegExpExecArray): void {
  const repo = publicRepo(core, owner, name);
  const c = repo ? core.state.checkRuns.get(Number(id)) : undefined;
  if (!c || c.repoId !== repo!.id) return notFound(res);
  const text = [
    `${c.name} — ${c.status}${c.conclusion ? `, ${c.conclusion}` : ""} on ${c.headSha}`,
    ...[c.output.title, c.output.summary, c.output.text].filter((s): s is string => !!s).map((s) => `\n${s}`),
  ].join("\n");
  res.writeHead(200, { "content-type": "text/plain; charset=utf-8" }).end(`${text}\n`);
}

/** A file at a commit: its content as it is (GitHub's page shows it; its raw view gives it). */
async function blobPage(
  core: SimCore,
  res: ServerResponse,
  [, owner = "", name = "", sha = "", file = ""]: RegExpExecArray,
): Promise<void> {
  const repo = publicRepo(core, owner, name);
  const entry = repo ? await git.entryAt(repo.gitDir, sha, decodeURIComponent(file)).catch(() => undefined) : undefined;
  if (!entry || entry.type !== "blob") return notFound(res);
  res.writeHead(200, { "content-type": "text/plain; charset=utf-8" }).end(await git.readBlob(repo!.gitDir, entry.sha));
}
