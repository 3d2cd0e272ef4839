/**
 * `forge sim` — starts Forge's local GitHub with Forge's own setup (src/cli/sim-main.ts) and prints
 * its URLs, in a process of its own (src/cli/programs.ts). Its options (`forge sim --help`,
 * ../sim-options.ts) are checked here, before the server starts, then passed through.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import type { Command } from "commander";
import { existingDir, existingFile, integer, oneOf, rate, writableDir } from "../args.js";
import { runLocalGithubProgram } from "../child.js";
import { CLI_EXIT, CliError } from "../io.js";
import { parseActionSpec, parseSecretSpec } from "../../local-github/options.js";
import { DEFAULT_FORGE_APP_URL, SIM_HELP, SIM_OPTIONS } from "../sim-options.js";
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
      if (checkArgs(args, io.cwd) === "help") {
        io.out(SIM_HELP);
        return setExitCode(CLI_EXIT.OK);
      }
      const code = await runLocalGithubProgram({
        program: "cli/sim-main",
        args,
        env: { ...process.env, FORGE_SIM_CWD: io.cwd },
        stdin: "inherit",
        io,
      });
      setExitCode(code);
    });
}

const ROLES = ["read", "triage", "write", "maintain", "admin"] as const;

/** Checks the simulator's arguments as it will read them; a CliError names the first bad one. */
function checkArgs(args: string[], cwd: string): "help" | "run" {
  let values;
  try {
    ({ values } = parseArgs({ args, options: SIM_OPTIONS, strict: true, allowPositionals: false }));
  } catch (err) {
    // node:util's messages go on with advice in further sentences; the first one says what is wrong.
    const message = (err as Error).message.split(/\.\s/)[0]!.replace(/\.$/, "");
    const ambiguous = /^Option '(--[\w-]+)' argument is ambiguous/.exec(message);
    if (ambiguous)
      throw new CliError(`${ambiguous[1]}: a value that starts with '-' is written ${ambiguous[1]}=<value> (see forge sim --help)`);
    throw new CliError(`${message} (see forge sim --help)`);
  }
  if (values.help) return "help";
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
  for (const login of values.user ?? [])
    if (!/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/.test(login))
      throw new CliError(`--user ${JSON.stringify(login)}: expected a login (letters, digits, '-')`);
  for (const spec of values.secret ?? []) {
    const secret = parseSecretSpec(spec);
    if (!secret) throw new CliError(`--secret ${JSON.stringify(spec.replace(/=.*/s, "=…"))}: expected [owner/name:]NAME[=value]`);
    if (secret.value === undefined && process.env[secret.name] === undefined)
      throw new CliError(`--secret ${secret.name}: no value given (NAME=value) and no ${secret.name} in the environment`);
    if (secret.repo === undefined && (values.repo ?? []).length === 0)
      throw new CliError(`--secret ${secret.name}: whose? name the repository (owner/name:${secret.name}) or seed one with --repo`);
    if (secret.repo !== undefined && !(values.repo ?? []).some((r) => r.split("=")[0] === secret.repo))
      throw new CliError(`--secret ${secret.repo}:${secret.name}: no --repo ${secret.repo} to put it in`);
  }
  for (const spec of values.action ?? []) {
    const action = parseActionSpec(spec);
    if (!action) throw new CliError(`--action ${JSON.stringify(spec)}: expected owner/repo[/path]=folder`);
    let dir: string;
    try {
      dir = existingDir(undefined, action.dir, cwd);
    } catch (err) {
      throw new CliError(`--action ${spec}: ${(err as Error).message}`);
    }
    if (!existsSync(path.join(dir, "action.yml")) && !existsSync(path.join(dir, "action.yaml")))
      throw new CliError(`--action ${spec}: no action.yml in ${action.dir}`);
  }
  if (values["forge-app-url"] !== undefined) {
    let url: URL | undefined;
    try {
      url = new URL(values["forge-app-url"]);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== "http:" && url.protocol !== "https:"))
      throw new CliError(
        `--forge-app-url ${JSON.stringify(values["forge-app-url"])}: expected an http(s) URL, like ${DEFAULT_FORGE_APP_URL}`,
      );
    if (values["forge-app"] === undefined) throw new CliError("--forge-app-url: give --forge-app <dir> too (where the App's .env goes)");
  }
  if (values["forge-app"] !== undefined) {
    writableDir("--forge-app", values["forge-app"], cwd);
    if ((values.repo ?? []).length === 0) throw new CliError("--forge-app: no repository to install it on (give --repo owner/name)");
  }
  if (values.app !== undefined) {
    const file = existingFile("--app", values.app, cwd);
    try {
      JSON.parse(readFileSync(file, "utf8"));
    } catch (err) {
      throw new CliError(`--app ${values.app}: not valid JSON (${(err as Error).message})`);
    }
  }
  return "run";
}
