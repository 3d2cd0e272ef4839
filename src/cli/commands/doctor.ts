/**
 * `forge doctor`: is this repository ready for Forge? Reads (never writes) the App's installation,
 * the agent workflow, the Actions policy, the state-branch ruleset, the model key secret's name, and
 * the rules, protection and settings that would stop Forge's branches, merges or final pull request,
 * and prints each check — pass, warn (each warning with its rule, source, branch, effect and fix),
 * fail with its fix, or skipped with what it needs (README.md, "What forge doctor warns about").
 * Credentials: the App's (APP_ID and PRIVATE_KEY or PRIVATE_KEY_PATH, from the environment or the
 * `.env` of an explicit --dir) and a person's token (--token, GITHUB_TOKEN or GH_TOKEN) for the
 * admin-only reads, sent only to --api-url or GITHUB_API_URL of the environment (else GitHub's).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import type { Command } from "commander";
import { APP_MANIFEST, appEnvironment, appPrivateKey, checkAppId, LaunchError } from "../../app/launch.js";

/** What `forge doctor` takes from an App's `.env`. */
const APP_CREDENTIAL_NAMES = ["APP_ID", "PRIVATE_KEY", "PRIVATE_KEY_PATH"] as const;
import YAML from "yaml";
import { readReadiness } from "../../github/readiness.js";
import { runChecks, WORKFLOW_FILE, workflowShape, type AppManifest, type CheckResult } from "../doctor/checks.js";
import { forgeBranches } from "../doctor/forge-facts.js";
import { CONFIG_PATH } from "../../core/config.js";
import { existingDir } from "../args.js";
import { originRepo } from "../origin.js";
import { CLI_EXIT, CliError } from "../io.js";
import type { CommandContext } from "./index.js";
import { AGENT_WORKFLOW_TEMPLATE } from "./init.js";

const MARK: Record<CheckResult["verdict"], string> = { pass: "✓", warn: "!", fail: "✗", skip: "–" };

/** A check's lines: its mark and title, what it found, each warning with its fix, its notes. */
function checkText(r: CheckResult): string {
  const lines = [`${MARK[r.verdict]} ${r.title}`, `    ${r.detail}`];
  if (r.verdict !== "pass" && r.fix) lines.push(`    fix: ${r.fix}`);
  for (const w of r.warnings ?? []) {
    lines.push(`    ⚠ ${[w.branch, w.rule, w.source].filter(Boolean).join(" · ")}: ${w.effect}${w.blocks ? " [Forge cannot work]" : ""}`);
    lines.push(`      fix: ${w.fix}`);
  }
  for (const n of r.notes ?? []) lines.push(`    note: ${n}`);
  return `${lines.join("\n")}\n`;
}

/**
 * The App's credentials: the process's environment over the `.env` of a `--dir` given explicitly
 * (the folder `forge app` ran in). A `.env` is read for the App's own variables only — never from
 * the current folder by default (a clone's `.env` is whoever committed it), and never the API URL
 * or a token: those come from the command line or the process's environment.
 */
function doctorEnvironment(env: NodeJS.ProcessEnv, dir: string | undefined): NodeJS.ProcessEnv {
  if (dir === undefined) return env;
  const fromFile = appEnvironment({}, dir);
  const app = Object.fromEntries(APP_CREDENTIAL_NAMES.filter((n) => fromFile[n] !== undefined).map((n) => [n, fromFile[n]]));
  return { ...app, ...env };
}

export function registerDoctor(program: Command, { io, setExitCode }: CommandContext): void {
  program
    .command("doctor")
    .description(
      "Check that a repository is ready for Forge: App installation, agent workflow, Actions policy, rulesets, secrets; warn about each rule, protection or setting that would stop it, with the fix.",
    )
    .option("--repo <owner/name>", "the repository (default: the origin remote of the current folder, else of --dir)")
    .option(
      "--dir <path>",
      "a clone of the repository, and where the App's .env is (read only when --dir is given; default: the current folder, no .env)",
    )
    .option(
      "--api-url <url>",
      "GitHub's REST root (default: GITHUB_API_URL of the environment, never a .env's; else https://api.github.com)",
    )
    .option("--token <token>", "a repository admin's token for the admin-only checks (default: GITHUB_TOKEN or GH_TOKEN)")
    .option("--json", "print the checks as JSON")
    .action(async (opts: { repo?: string; dir?: string; apiUrl?: string; token?: string; json?: boolean }) => {
      const dir = opts.dir === undefined ? path.resolve(io.cwd) : existingDir("--dir", opts.dir, io.cwd);
      // The clone is where doctor runs (README.md, "Check it"); --dir may be the App's folder, or the clone.
      const full = opts.repo ?? originRepo(path.resolve(io.cwd)) ?? originRepo(dir);
      if (!full)
        throw new CliError(
          `--repo owner/name is required (neither the current folder${opts.dir === undefined ? "" : " nor --dir"} has an origin remote to take it from)`,
        );
      const m = /^([\w.-]+)\/([\w.-]+)$/.exec(full);
      if (!m) throw new CliError(`--repo ${JSON.stringify(full)} is not owner/name`);
      const env = doctorEnvironment(process.env, opts.dir === undefined ? undefined : dir);
      // Where the person's token goes: never from a file in the repository (a planted .env).
      const apiUrl = opts.apiUrl ?? (process.env.GITHUB_API_URL || "https://api.github.com");
      let url: URL;
      try {
        url = new URL(apiUrl);
      } catch {
        throw new CliError(`--api-url ${JSON.stringify(apiUrl)} is not a URL`);
      }
      if (url.protocol !== "https:" && url.protocol !== "http:")
        throw new CliError(`--api-url ${JSON.stringify(apiUrl)}: expected an http(s) URL, like https://api.github.com`);
      // The App's credentials, when given, are checked here: a malformed one is bad input, not a check that could not run.
      let privateKey: string | undefined;
      try {
        privateKey = appPrivateKey(env);
        if (env.APP_ID) checkAppId(env.APP_ID, "APP_ID");
      } catch (e) {
        if (!(e instanceof LaunchError)) throw e;
        throw new CliError(e.message.replace(/^forge: /, ""));
      }
      if (!env.APP_ID !== !privateKey)
        throw new CliError(
          env.APP_ID
            ? "APP_ID is set but not the App's private key (PRIVATE_KEY or PRIVATE_KEY_PATH)"
            : "the App's private key is set but not APP_ID",
        );
      const token = opts.token ?? process.env.GITHUB_TOKEN ?? process.env.GH_TOKEN;
      const template = readFileSync(AGENT_WORKFLOW_TEMPLATE, "utf8");
      const manifest = YAML.parse(readFileSync(APP_MANIFEST, "utf8")) as AppManifest;
      const read = await readReadiness({
        owner: m[1]!,
        repo: m[2]!,
        apiUrl: apiUrl.replace(/\/$/, ""),
        ...(env.APP_ID && privateKey ? { app: { appId: env.APP_ID, privateKey } } : {}),
        ...(token ? { token } : {}),
        workflowPath: WORKFLOW_FILE,
        configPath: CONFIG_PATH,
        branches: forgeBranches,
        secretNames: (workflow) => {
          try {
            return workflowShape(workflow ?? template).secrets;
          } catch {
            return workflowShape(template).secrets;
          }
        },
      });
      const facts = { ...read, manifest, template };
      const results = runChecks(facts);
      const failed = results.filter((r) => r.verdict === "fail").length;
      const skipped = results.filter((r) => r.verdict === "skip");
      const warnings = results.flatMap((r) => r.warnings ?? []);
      if (opts.json)
        io.out(
          `${JSON.stringify({ repo: facts.repo, ok: failed === 0 && skipped.length === 0, failed, notChecked: skipped.length, checks: results, warnings }, null, 2)}\n`,
        );
      else {
        io.out(`forge doctor: ${facts.repo}${opts.repo === undefined ? " (its origin remote)" : ""}\n`);
        for (const r of results) io.out(checkText(r));
        io.out(`${summary(results.length, failed, skipped, warnings.length)}\n`);
      }
      // A check that could not run is no pass: the exit code says so (CLI_EXIT.NOT_CHECKED).
      setExitCode(failed ? CLI_EXIT.PROBLEMS : skipped.length ? CLI_EXIT.NOT_CHECKED : CLI_EXIT.OK);
    });
}

/** The last line: what failed, what could not run and why, or that everything passed (with how many warnings). */
function summary(total: number, failed: number, skipped: CheckResult[], warnings: number): string {
  const reasons = [...new Set(skipped.map((r) => r.detail.replace(/^not checked: /, "")))].join("; ");
  const warned = warnings ? ` with ${warnings} warning(s)` : "";
  if (failed) return `${failed} check(s) failed${warned}${skipped.length ? `; ${skipped.length} could not run (${reasons})` : ""}.`;
  if (skipped.length)
    return `${skipped.length} of ${total} checks could not run: ${reasons}. ${total - skipped.length} passed${warned}; the repository is not shown ready.`;
  return `All ${total} checks passed${warned}.`;
}
