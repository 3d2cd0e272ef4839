/**
 * The `forge` command line. `bin/forge.js` calls `main(process.argv.slice(2))` and exits with the
 * code it returns. Commands live in ./commands/ and are registered in ./commands/index.ts.
 */
import { Command, CommanderError } from "commander";
import { COMMANDS } from "./commands/index.js";
import { CLI_EXIT, CliError, processIo, type CliIo } from "./io.js";

export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  let exitCode: number = CLI_EXIT.OK;
  const program = new Command("forge")
    .description("Run a DAG of coding agents on GitHub.")
    .exitOverride()
    .showHelpAfterError("(run forge --help for usage)")
    .configureOutput({ writeOut: io.out, writeErr: io.err });
  const ctx = { io, setExitCode: (code: number) => void (exitCode = code) };
  for (const register of COMMANDS) register(program, ctx);
  for (const cmd of program.commands) cmd.exitOverride().configureOutput({ writeOut: io.out, writeErr: io.err });

  try {
    await program.parseAsync(argv, { from: "user" });
    return exitCode;
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version end with exit code 0; usage errors are already printed by commander.
      return err.exitCode === 0 ? CLI_EXIT.OK : CLI_EXIT.USAGE;
    }
    if (err instanceof CliError) {
      io.err(`forge: ${err.message}\n`);
      return err.exitCode;
    }
    io.err(`forge: internal error: ${err instanceof Error ? err.message : String(err)}\n`);
    if (process.env.FORGE_DEBUG && err instanceof Error && err.stack) io.err(`${err.stack}\n`);
    return CLI_EXIT.INTERNAL;
  }
}
