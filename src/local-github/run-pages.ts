// The web pages of workflow runs and jobs — the `html_url` GitHub gives them,
// `/{owner}/{repo}/actions/runs/{id}` and `…/runs/{id}/job/{jobId}` — served as the log in plain
// text, so that a link to a job's page (the tracker's "job log" beside a job that ended without a
// result) opens on the local GitHub too. A private repository's pages are not served: GitHub asks
// who is looking, and this stand-in has no web sign-in.
import type { ServerResponse } from "node:http";
import type { SimCore } from "./domain/index.js";

const RUN_PAGE = /^\/([^/]+)\/([^/]+)\/actions\/runs\/(\d+)(?:\/job\/(\d+))?\/?$/;

export function isRunPage(path: string): boolean {
  return RUN_PAGE.test(path);
}

export function handleRunPage(core: SimCore, res: ServerResponse, path: string): void {
  const [, owner = "", name = "", runId = "", jobId] = RUN_PAGE.exec(path) ?? [];
  const repo = core.state.repoByName(decodeURIComponent(owner), decodeURIComponent(name));
  const run = repo && !repo.private ? core.state.runs.get(Number(runId)) : undefined;
  const jobs = run && run.repoId === repo!.id ? run.jobs.filter((j) => jobId === undefined || j.id === Number(jobId)) : [];
  if (!run || jobs.length === 0) {
    res.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end("Not Found\n");
    return;
  }
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
