/**
 * `forge sim` — starts Forge's local GitHub (test/sim/main.ts) and prints its URLs. The simulator
 * is test code written in TypeScript and is not part of the published build, so the command runs
 * it from a Forge source checkout with tsx; every argument is passed through (`forge sim --help`).
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import path from "node:path";
import type { Command } from "commander";
import { CLI_EXIT, CliError } from "../io.js";
import type { CommandContext } from "./index.js";

/** The checkout root: this file is src/cli/commands/sim.ts or dist/cli/commands/sim.js. */
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
      const main = path.join(root, "test", "sim", "main.ts");
      if (!existsSync(main)) throw new CliError("the local GitHub ships with Forge's source checkout only (test/sim/main.ts not found)");
      const child = spawn(process.execPath, ["--import", "tsx", main, ...args], {
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
