/**
 * `forge init`: sets a repository up for Forge — the agent workflow (the package's pinned template),
 * a commented `.github/forge.yml` at the defaults (generated from the config schema) and an example
 * plan under `.forge/plans/hello/`. It overwrites nothing without `--force`: every file is checked
 * before any is written.
 */
import { existsSync, statSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Command } from "commander";
import { commentedConfig } from "../../core/config-template.js";
import { CONFIG_PATH } from "../../core/config.js";
import { existingDir } from "../args.js";
import { CLI_EXIT, CliError } from "../io.js";
import type { CommandContext } from "./index.js";
import { originRepo } from "../origin.js";
import { HELLO_PLAN_ID, helloPlanFiles } from "./init-plan.js";

/** The package's root: this file is src/cli/commands/init.ts, or dist/cli/commands/init.js once built. */
const PACKAGE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
export const AGENT_WORKFLOW_TEMPLATE = path.join(PACKAGE_ROOT, "templates", "workflows", "forge-agent.yml");
export const AGENT_WORKFLOW_PATH = ".github/workflows/forge-agent.yml";
export const HELLO_PLAN_DIR = `.forge/plans/${HELLO_PLAN_ID}`;

/** Every file `forge init` writes: its path relative to the repository, and its content. */
export async function initFiles(): Promise<[string, string][]> {
  const workflow = await readFile(AGENT_WORKFLOW_TEMPLATE, "utf8");
  return [
    [AGENT_WORKFLOW_PATH, workflow],
    [CONFIG_PATH, commentedConfig()],
    ...Object.entries(helloPlanFiles()).map(([file, text]): [string, string] => [`${HELLO_PLAN_DIR}/${file}`, text]),
  ];
}

export function registerInit(program: Command, { io, setExitCode }: CommandContext): void {
  program
    .command("init")
    .description("Set a repository up for Forge: the agent workflow, a commented .github/forge.yml and an example plan.")
    .option("--dir <path>", "the repository's folder (default: the current folder)")
    .option("--force", "overwrite files that already exist")
    .action(async (opts: { dir?: string; force?: boolean }) => {
      const root = opts.dir === undefined ? path.resolve(io.cwd) : existingDir("--dir", opts.dir, io.cwd);
      if (!existsSync(path.join(root, ".git")))
        throw new CliError(
          `${opts.dir ?? "the current folder"} is not a git repository (no .git); run npx forge init at its root, or pass --dir`,
        );

      const files = await initFiles();
      // Every path is checked before anything is written: a file where a folder goes (or a folder where a file goes) stops it all.
      for (const [file] of files) {
        const parts = file.split("/");
        for (let i = 1; i <= parts.length; i++) {
          const at = parts.slice(0, i).join("/");
          const info = statSync(path.join(root, at), { throwIfNoEntry: false });
          if (!info) break;
          if (i < parts.length && !info.isDirectory())
            throw new CliError(`${at} is a file, where forge init writes the folder of ${file}; nothing written`);
          if (i === parts.length && info.isDirectory())
            throw new CliError(`${file} is a folder, where forge init writes a file; nothing written`);
        }
      }
      if (!opts.force) {
        const existing = files.find(([file]) => existsSync(path.join(root, file)));
        if (existing) throw new CliError(`${existing[0]} already exists; nothing written (use --force to overwrite)`);
      }
      for (const [file, text] of files) {
        const target = path.join(root, file);
        await mkdir(path.dirname(target), { recursive: true });
        await writeFile(target, text);
      }

      io.out(`Wrote ${files.length} files${opts.dir ? ` in ${opts.dir}` : ""}:\n`);
      for (const [file] of files) io.out(`  ${file}\n`);
      io.out(
        [
          "Next:",
          "  1. Choose the agent in .github/forge.yml, then commit and push .github/ to the default branch.",
          "  2. Add the model key as the repository secret ANTHROPIC_API_KEY (Settings → Secrets and variables → Actions)",
          '     and the ruleset that keeps forge/*/_state the App\'s (README.md, "Protect the state branches").',
          `  3. Run \`npx forge doctor${opts.dir === undefined ? "" : ` --repo ${originRepo(root) ?? "<owner/name>"}`}\` here: it checks the App's installation, the workflow, Actions, the ruleset and the secret.`,
          `Then merging the plan (${HELLO_PLAN_DIR}) to the default branch starts the run, or comment \`/forge run ${HELLO_PLAN_ID}\` on an issue.`,
          "",
        ].join("\n"),
      );
      setExitCode(CLI_EXIT.OK);
    });
}
