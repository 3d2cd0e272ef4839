/**
 * The `forge` command inside an Actions job, bundled as `dist/forge.js` beside the action: the
 * subcommands an agent needs from its shell — `forge spawn` (sub-agents, within the depth budget and
 * the hierarchy that `src/agent` enforces) and `forge validate` (the Captain checks its overlay).
 * The action hands it to the agent layer as `forgeCli`, which puts a `forge` shim on the agent's PATH.
 */
import { Command, CommanderError } from "commander";
import type { CommandContext } from "../../src/cli/commands/index.js";
import { registerSpawn } from "../../src/cli/commands/spawn.js";
import { registerValidate } from "../../src/cli/commands/validate.js";
import { CLI_EXIT, CliError, processIo, type CliIo } from "../../src/cli/io.js";

export const FORGE_CLI_COMMANDS = ["spawn", "validate"] as const;

export async function forgeCli(argv: string[], io: CliIo = processIo()): Promise<number> {
  let exitCode: number = CLI_EXIT.OK;
  const program = new Command("forge")
    .description("Forge inside a job: spawn a sub-agent, validate a plan.")
    .exitOverride()
    .configureOutput({ writeOut: io.out, writeErr: io.err });
  const ctx: CommandContext = { io, setExitCode: (code: number) => void (exitCode = code) };
  registerValidate(program, ctx);
  registerSpawn(program, ctx);
  for (const cmd of program.commands) cmd.exitOverride().configureOutput({ writeOut: io.out, writeErr: io.err });
  try {
    await program.parseAsync(argv, { from: "user" });
    return exitCode;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? CLI_EXIT.OK : CLI_EXIT.USAGE;
    if (err instanceof CliError) {
      io.err(`forge: ${err.message}\n`);
      return err.exitCode;
    }
    io.err(`forge: internal error: ${err instanceof Error ? err.message : String(err)}\n`);
    return CLI_EXIT.INTERNAL;
  }
}
