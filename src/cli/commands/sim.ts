/**
 * `forge sim` — starts Forge's local GitHub (src/local-github/main.ts) and prints its URLs, in a
 * process of its own (src/local-github/entry.ts); every argument is passed through (`forge sim --help`).
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import path from "node:path";
import type { Command } from "commander";
import { localGithubProgram, nodeArgsFor } from "../../local-github/entry.js";
import { CLI_EXIT, CliError } from "../io.js";
import type { CommandContext } from "./index.js";

/** Forge's root (a checkout, or the installed package): this file is src/cli/commands/sim.ts or dist/cli/commands/sim.js. */
function checkoutRoot(): string {
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
}

export function registerSim(program: Command, { io, setExitCode }: CommandContext): void {
  program
    .command("sim")
    .description("Start the local GitHub (REST /api/v3, git over HTTP, signed webhooks, workflow runner) and print its URLs.")
    .allowUnknownOption()
    .helpOption(false)
    .argument("[args...]", "passed to the simulator (try --help)")
    .action(async (args: string[]) => {
      const root = checkoutRoot();
      const main = localGithubProgram("main");
      if (!existsSync(main)) throw new CliError(`forge sim: ${main} not found (build Forge with npm run build)`);
      const child = spawn(process.execPath, [...nodeArgsFor(main), ...args], {
        cwd: root,
        env: { ...process.env, FORGE_SIM_CWD: io.cwd },
        stdio: ["inherit", "pipe", "pipe"],
      });
      child.stdout.on("data", (d: Buffer) => io.out(d.toString("utf8")));
      child.stderr.on("data", (d: Buffer) => io.err(d.toString("utf8")));
      const forward = (sig: NodeJS.Signals) => child.kill(sig);
      process.on("SIGINT", forward);
      process.on("SIGTERM", forward);
      const code = await new Promise<number>((resolve) => child.on("close", (c) => resolve(c ?? CLI_EXIT.INTERNAL)));
      process.off("SIGINT", forward);
      process.off("SIGTERM", forward);
      setExitCode(code);
    });
}
