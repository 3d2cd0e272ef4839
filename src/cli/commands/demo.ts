/**
 * `forge demo` — the whole of Forge on this machine: the local GitHub, the Forge App (real HTTP,
 * signed webhooks) and the runner executing the real Forge action, running an example plan to the
 * end with a live view, a summary table and an HTML report (src/local-github/demo/). Like `forge sim`,
 * it runs in a process of its own (src/local-github/entry.ts); every option is passed through.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Command } from "commander";
import { localGithubProgram, nodeArgsFor } from "../../local-github/entry.js";
import { CLI_EXIT, CliError } from "../io.js";
import type { CommandContext } from "./index.js";

/** Forge's root (a checkout, or the installed package): this file is src/cli/commands/demo.ts or dist/cli/commands/demo.js. */
function checkoutRoot(): string {
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
}

export function registerDemo(program: Command, { io, setExitCode }: CommandContext): void {
  program
    .command("demo")
    .description(
      "Run an example plan end to end on the local GitHub with the Forge App and the Forge action; prints a live view, a summary and the path of an HTML report.",
    )
    .option("--agent <kind>", "scripted (default) or claude: the real Claude Code CLI against the scripted model server")
    .option("--plan <dir>", "a plan folder (default: examples/plans/textkit)")
    .option("--out <dir>", "where the HTML report and the JSON result go (default: a temporary folder)")
    .option("--runners <n>", "runners available at once (default 4)")
    .option("--timeout <seconds>", "give up after this long")
    .option("--json", "print the result as JSON on stdout (the live view goes to stderr)")
    .action(async (opts: { agent?: string; plan?: string; out?: string; runners?: string; timeout?: string; json?: boolean }) => {
      const root = checkoutRoot();
      const main = localGithubProgram("demo/main");
      if (!existsSync(main)) throw new CliError(`forge demo: ${main} not found (build Forge with npm run build)`);
      const args = [
        ...(opts.agent ? ["--agent", opts.agent] : []),
        ...(opts.plan ? ["--plan", opts.plan] : []),
        ...(opts.out ? ["--out", opts.out] : []),
        ...(opts.runners ? ["--runners", opts.runners] : []),
        ...(opts.timeout ? ["--timeout", opts.timeout] : []),
        ...(opts.json ? ["--json"] : []),
      ];
      const child = spawn(process.execPath, [...nodeArgsFor(main), ...args], {
        cwd: root,
        // Relative --plan and --out are relative to where forge was started.
        env: { ...process.env, FORGE_DEMO_CWD: io.cwd, FORGE_DEMO_TTY: process.stdout.isTTY && !opts.json ? "1" : "" },
        stdio: ["ignore", "pipe", "pipe"],
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
