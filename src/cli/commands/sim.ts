/**
 * `forge sim` — starts Forge's local GitHub (src/local-github/main.ts) and prints its URLs, in a
 * process of its own (src/cli/programs.ts). Its options (`forge sim --help`) are checked here,
 * before the server starts, then passed through.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import type { Command } from "commander";
import { existingDir, existingFile, integer, oneOf, rate } from "../args.js";
import { runLocalGithubProgram } from "../child.js";
import { CliError } from "../io.js";
import type { CommandContext } from "./index.js";

export function registerSim(program: Command, { io, setExitCode }: CommandContext): void {
  program
    .command("sim")
    .description("Start the local GitHub (REST /api/v3, git over HTTP, signed webhooks, workflow runner) and print its URLs.")
    .allowUnknownOption()
    .allowExcessArguments()
    .helpOption(false)
    .argument("[args...]", "passed to the simulator (try --help)")
    .action(async (args: string[]) => {
      checkArgs(args, io.cwd);
      const code = await runLocalGithubProgram({
        program: "local-github/main",
        args,
        env: { ...process.env, FORGE_SIM_CWD: io.cwd },
        stdin: "inherit",
        io,
      });
      setExitCode(code);
    });
}

/** The options of src/local-github/main.ts. */
const SIM_OPTIONS = {
  port: { type: "string" },
  host: { type: "string" },
  repo: { type: "string", multiple: true },
  collaborator: { type: "string", multiple: true },
  app: { type: "string" },
  executor: { type: "string" },
  seed: { type: "string" },
  "api-error-rate": { type: "string" },
  "rate-limit-rate": { type: "string" },
  "webhook-drop-rate": { type: "string" },
  "webhook-duplicate-rate": { type: "string" },
  "webhook-reorder-window": { type: "string" },
  verbose: { type: "boolean" },
  help: { type: "boolean" },
} as const;

const ROLES = ["read", "triage", "write", "maintain", "admin"] as const;

/** Checks the simulator's arguments as it will read them; a CliError names the first bad one. */
function checkArgs(args: string[], cwd: string): void {
  let values;
  try {
    ({ values } = parseArgs({ args, options: SIM_OPTIONS, strict: true, allowPositionals: false }));
  } catch (err) {
    // node:util's messages go on with advice in further sentences; the first one says what is wrong.
    const message = (err as Error).message.split(/\.\s/)[0]!.replace(/\.$/, "");
    throw new CliError(`${message} (see forge sim --help)`);
  }
  if (values.help) return;
  if (values.port !== undefined) integer("--port", values.port, 0, 65535);
  if (values.host !== undefined && values.host.trim() === "") throw new CliError(`--host "": expected a host name or address`);
  if (values.executor !== undefined) oneOf("--executor", values.executor, ["runner", "noop", "none"]);
  if (values.seed !== undefined) integer("--seed", values.seed, 0);
  for (const flag of ["api-error-rate", "rate-limit-rate", "webhook-drop-rate", "webhook-duplicate-rate"] as const) {
    const v = values[flag];
    if (v !== undefined) rate(`--${flag}`, v);
  }
  if (values["webhook-reorder-window"] !== undefined) integer("--webhook-reorder-window", values["webhook-reorder-window"], 0);
  for (const spec of values.repo ?? []) {
    const [full = "", dir, ...more] = spec.split("=");
    if (!/^[^/\s]+\/[^/\s]+$/.test(full) || more.length > 0)
      throw new CliError(`--repo ${JSON.stringify(spec)}: expected owner/name or owner/name=folder`);
    if (dir) {
      try {
        existingDir(undefined, dir, cwd);
      } catch (err) {
        throw new CliError(`--repo ${spec}: ${(err as Error).message}`);
      }
    }
  }
  for (const spec of values.collaborator ?? []) {
    const [full = "", login, role, ...more] = spec.split(":");
    if (!/^[^/\s]+\/[^/\s]+$/.test(full) || !login || more.length > 0)
      throw new CliError(`--collaborator ${JSON.stringify(spec)}: expected owner/name:login[:role]`);
    if (role !== undefined) oneOf(`--collaborator ${spec}: role`, role, ROLES);
  }
  if (values.app !== undefined) {
    const file = existingFile("--app", values.app, cwd);
    try {
      JSON.parse(readFileSync(file, "utf8"));
    } catch (err) {
      throw new CliError(`--app ${values.app}: not valid JSON (${(err as Error).message})`);
    }
  }
}
