/**
 * The `forge` program: one argument parser (commander) and one way of ending for both `forge`
 * commands — the package's (`main.ts`, every command) and the one an agent runs inside an Actions job
 * (`action/src/forge-cli.ts`, spawn and validate). The same arguments end with the same exit code and
 * the same message in both.
 *
 * Bad input (an unknown option, a missing argument, a wrong number, a missing folder, a folder it
 * cannot write, a malformed App id or key) is one line on stderr naming the argument, `forge
 * <command>: <what is wrong>`, and exit 2 (CLI_EXIT.USAGE); never a stack trace (FORGE_DEBUG=1 adds
 * one to an internal error). test/cli/bad-args.test.ts holds the table of malformed invocations. `forge spawn` speaks the runner's exit
 * codes instead (src/core/exit-codes.ts), where 2 means "depth budget exhausted": its bad options are a
 * `bad_options` JSON line and exit 1.
 */
import { Command, CommanderError } from "commander";
import type { CommandRegistration } from "./commands/index.js";
import { spawnBadOptions } from "./commands/spawn.js";
import { CLI_EXIT, CliError, fileSystemProblem, isFileSystemError, type CliIo } from "./io.js";

/** One `forge` program: what `--help` says it is, and its subcommands. */
export interface ForgeProgram {
  description: string;
  commands: readonly CommandRegistration[];
}

/** Parses `argv` (without node and the script) and runs the command; returns the process exit code. */
export async function runForgeProgram(spec: ForgeProgram, argv: string[], io: CliIo): Promise<number> {
  let exitCode: number = CLI_EXIT.OK;
  /** The command whose arguments commander rejected, or that is running. */
  let current = "";
  const program = new Command("forge")
    .description(spec.description)
    .exitOverride()
    .configureOutput({ writeOut: io.out, writeErr: io.err, outputError: () => void (current = "") });
  const ctx = { io, setExitCode: (code: number) => void (exitCode = code) };
  for (const register of spec.commands) register(program, ctx);
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
      const message = oneLine(err.message.replace(/^error: /, ""));
      if (current === "spawn") return spawnBadOptions(io, message);
      io.err(`${prefix()}: ${message} (see ${prefix()} --help)\n`);
      return CLI_EXIT.USAGE;
    }
    if (err instanceof CliError) {
      io.err(`${prefix()}: ${oneLine(err.message)}\n`);
      return err.exitCode;
    }
    // A folder it cannot write, a path through a file: the user's to fix, not a bug.
    if (isFileSystemError(err)) {
      if (current === "spawn") return spawnBadOptions(io, fileSystemProblem(err));
      io.err(`${prefix()}: ${oneLine(fileSystemProblem(err))}\n`);
      return CLI_EXIT.USAGE;
    }
    io.err(`${prefix()}: internal error: ${oneLine(err instanceof Error ? err.message : String(err))}\n`);
    if (process.env.FORGE_DEBUG === "1" && err instanceof Error && err.stack) io.err(`${err.stack}\n`);
    return CLI_EXIT.INTERNAL;
  }
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ").trim();
}
