/**
 * `forge report <runId>` — a run's HTML report (the one `forge demo` writes) and its outcome figures
 * as JSON, for any repository, read through the API with a token: `GITHUB_TOKEN` (or `GH_TOKEN`),
 * `GITHUB_API_URL` for GitHub Enterprise Server or the local GitHub.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import type { Command } from "commander";
import { RUN_ID_PATTERN } from "../../core/layout.js";
import { renderOutcomeTable } from "../../core/outcomes.js";
import { writableDir } from "../args.js";
import { CLI_EXIT, CliError } from "../io.js";
import type { CommandContext } from "./index.js";

interface ReportFlags {
  repo?: string;
  out?: string;
  apiUrl?: string;
  json?: boolean;
}

/** The repository, the API and the token, checked before any call. */
function target(runId: string, opts: ReportFlags): { owner: string; repo: string; apiUrl: string; token: string } {
  if (!RUN_ID_PATTERN.test(runId))
    throw new CliError(`run id ${JSON.stringify(runId.slice(0, 80))}: expected letters, digits, '.', '_' or '-'`);
  const full = opts.repo ?? process.env.GITHUB_REPOSITORY;
  if (!full) throw new CliError("say which repository: --repo owner/name (or set GITHUB_REPOSITORY)");
  if (!/^[^/\s]+\/[^/\s]+$/.test(full))
    throw new CliError(
      `${opts.repo !== undefined ? "--repo" : "GITHUB_REPOSITORY"} ${JSON.stringify(full)}: expected a repository as owner/name`,
    );
  const apiUrl = opts.apiUrl ?? (process.env.GITHUB_API_URL || "https://api.github.com");
  let url: URL;
  try {
    url = new URL(apiUrl);
  } catch {
    throw new CliError(`--api-url ${JSON.stringify(apiUrl)}: not a URL`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new CliError(`--api-url ${JSON.stringify(apiUrl)}: expected http(s)`);
  const token = process.env.GITHUB_TOKEN || process.env.GH_TOKEN;
  if (!token) throw new CliError("reads the run through the API: set GITHUB_TOKEN (or GH_TOKEN) to a token that can read the repository");
  const [owner, repo] = full.split("/") as [string, string];
  return { owner, repo, apiUrl, token };
}

export function registerReport(program: Command, { io, setExitCode }: CommandContext): void {
  program
    .command("report")
    .description("Write a run's HTML report and its outcome figures (JSON), read from its repository through the API.")
    .argument("<runId>", "the run's id (its tracker issue and state branch forge/<runId>/_state name it)")
    .option("--repo <owner/name>", "repository (default: $GITHUB_REPOSITORY)")
    .option("--out <dir>", "where forge-report-<runId>.html and .json go (default: the current folder)")
    .option("--api-url <url>", "the REST API (default: $GITHUB_API_URL, else https://api.github.com)")
    .option("--json", "print the outcome figures as JSON on stdout")
    .action(async (runId: string, opts: ReportFlags) => {
      const t = target(runId, opts);
      // Where the report goes is tried before the API is read: a folder it cannot write stops it at once.
      const outDir = writableDir(opts.out !== undefined ? "--out" : undefined, opts.out ?? ".", io.cwd);
      const [{ tokenPort }, { buildRunReport, RunReportError }] = await Promise.all([
        import("../../github/app-client.js"),
        import("../../app/run-report.js"),
      ]);
      const port = tokenPort(t.token, t.apiUrl, t.owner, t.repo);
      const host = new URL(t.apiUrl).host === "api.github.com" ? "GitHub" : new URL(t.apiUrl).host;
      let report;
      try {
        report = await buildRunReport(port, runId, host);
      } catch (e) {
        if (e instanceof RunReportError) throw new CliError(e.message, CLI_EXIT.PROBLEMS);
        const status = (e as { status?: number }).status;
        if (status === 401 || status === 403 || status === 404)
          throw new CliError(
            `${t.owner}/${t.repo}: the API answered ${status} — check the repository and that the token can read it`,
            CLI_EXIT.PROBLEMS,
          );
        // Octokit reports a request that got no answer as status 500 without a response.
        const raw = ((e as { cause?: unknown }).cause ?? e) as { response?: unknown };
        if ((status === undefined || status === 500) && !raw.response)
          throw new CliError(
            `${t.apiUrl} could not be reached (${((e as Error).message ?? "").split("\n")[0]!.slice(0, 160)}) — check --api-url or GITHUB_API_URL`,
            CLI_EXIT.PROBLEMS,
          );
        throw e;
      }
      const base = path.join(outDir, `forge-report-${runId}`);
      await writeFile(`${base}.html`, report.html);
      await writeFile(`${base}.json`, `${JSON.stringify(report.figures, null, 2)}\n`);
      if (opts.json) io.out(`${JSON.stringify(report.figures, null, 2)}\n`);
      else io.out(`${renderOutcomeTable(report.figures).join("\n")}\n\nforge report: wrote ${base}.html and ${base}.json\n`);
      setExitCode(CLI_EXIT.OK);
    });
}
