/**
 * The `forge` command line. `bin/forge.js` calls `main(process.argv.slice(2))` and exits with the
 * code it returns. Commands live in ./commands/ and are registered in ./commands/index.ts.
 *
 * Bad input (an unknown option, a missing argument, a wrong number, a missing folder) is one line on
 * stderr naming the argument, `forge <command>: <what is wrong>`, and exit 2; never a stack trace
 * (FORGE_DEBUG=1 adds one to an internal error).
 */
import { pathToFileURL } from "node:url";
import { Command, CommanderError } from "commander";
import { COMMANDS } from "./commands/index.js";
import { spawnBadOptions } from "./commands/spawn.js";
import { CLI_EXIT, CliError, processIo, type CliIo } from "./io.js";

export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  let exitCode: number = CLI_EXIT.OK;
  /** The command whose arguments commander rejected, or that is running. */
  let current = "";
  const program = new Command("forge")
    .description("Run a DAG of coding agents on GitHub.")
    .exitOverride()
    .configureOutput({ writeOut: io.out, writeErr: io.err, outputError: () => void (current = "") });
  const ctx = { io, setExitCode: (code: number) => void (exitCode = code) };
  for (const register of COMMANDS) register(program, ctx);
  for (const cmd of program.commands)
    cmd
      .exitOverride()
      // commander's message is printed by the catch below, as one line.
      .configureOutput({ writeOut: io.out, writeErr: io.err, outputError: () => void (current = cmd.name()) });
  program.hook("preAction", (_program, action) => void (current = action.name()));
  const prefix = () => (current ? `forge ${current}` : "forge");

  if (argv.length === 0) {
    io.err(`forge: say which command to run: ${program.commands.map((c) => c.name()).join(", ")} (see forge --help)\n`);
    return CLI_EXIT.USAGE;
  }
  try {
    await program.parseAsync(argv, { from: "user" });
    return exitCode;
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version end with exit code 0; help asked for without a command is already printed.
      if (err.exitCode === 0) return CLI_EXIT.OK;
      if (err.code === "commander.help" || err.code === "commander.helpDisplayed") return CLI_EXIT.USAGE;
      const message = err.message
        .replace(/^error: /, "")
        .split("\n")
        .map((l) => l.trim())
        .filter(Boolean)
        .join(" ");
      if (current === "spawn") return spawnBadOptions(io, message);
      io.err(`${prefix()}: ${message} (see ${prefix()} --help)\n`);
      return CLI_EXIT.USAGE;
    }
    if (err instanceof CliError) {
      io.err(`${prefix()}: ${oneLine(err.message)}\n`);
      return err.exitCode;
    }
    io.err(`${prefix()}: internal error: ${oneLine(err instanceof Error ? err.message : String(err))}\n`);
    if (process.env.FORGE_DEBUG === "1" && err instanceof Error && err.stack) io.err(`${err.stack}\n`);
    return CLI_EXIT.INTERNAL;
  }
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ").trim();
}

// Run directly (`npx tsx src/cli/main.ts …`, as the tests do); bin/forge.js imports `main` instead.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await main(process.argv.slice(2));
}
