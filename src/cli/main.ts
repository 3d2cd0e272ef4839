/**
 * The `forge` command line. `bin/forge.js` calls `main(process.argv.slice(2))` and exits with the
 * code it returns. Commands live in ./commands/ and are registered in ./commands/index.ts; parsing,
 * messages and exit codes are ./program.ts's, shared with the `forge` of an Actions job
 * (action/src/forge-cli.ts).
 */
import { pathToFileURL } from "node:url";
import { COMMANDS } from "./commands/index.js";
import { processIo, type CliIo } from "./io.js";
import { runForgeProgram, type ForgeProgram } from "./program.js";

const FORGE: ForgeProgram = { description: "Run a DAG of coding agents on GitHub.", commands: COMMANDS };

export function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  return runForgeProgram(FORGE, argv, io);
}

// Run directly (`npx tsx src/cli/main.ts …`, as the tests do); bin/forge.js imports `main` instead.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await main(process.argv.slice(2));
}
