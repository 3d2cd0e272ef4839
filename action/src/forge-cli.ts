/**
 * The `forge` command inside an Actions job, bundled as `dist/forge.js` beside the action: the
 * subcommands an agent needs from its shell — `forge spawn` (sub-agents, within the depth budget and
 * the hierarchy that `src/agent` enforces) and `forge validate` (the Captain checks its overlay).
 * The action hands it to the agent layer as `forgeCli`, which puts a `forge` shim on the agent's PATH.
 *
 * It is the package's `forge` (src/cli/program.ts: one parser, one set of messages and exit codes)
 * with only these two commands.
 */
import { registerSpawn } from "../../src/cli/commands/spawn.js";
import { registerValidate } from "../../src/cli/commands/validate.js";
import { processIo, type CliIo } from "../../src/cli/io.js";
import { runForgeProgram, type ForgeProgram } from "../../src/cli/program.js";

export const JOB_FORGE: ForgeProgram = {
  description: "Forge inside a job: spawn a sub-agent, validate a plan.",
  commands: [registerValidate, registerSpawn],
};

export function forgeCli(argv: string[], io: CliIo = processIo()): Promise<number> {
  return runForgeProgram(JOB_FORGE, argv, io);
}
