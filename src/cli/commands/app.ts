/**
 * `forge app`: the Forge App as a server, as `npm start` runs it — configured from the environment
 * and `.env` in `--dir` (src/app/launch.ts lists the variables). Without App credentials it first
 * serves the setup page, which registers the App on GitHub from app.yml and writes `.env`.
 */
import path from "node:path";
import type { Command } from "commander";
import { launchApp, LaunchError } from "../../app/launch.js";
import { existingDir, integer } from "../args.js";
import { CLI_EXIT, CliError } from "../io.js";
import type { CommandContext } from "./index.js";

export function registerApp(program: Command, { io, setExitCode }: CommandContext): void {
  program
    .command("app")
    .description("Run the Forge App (webhooks at /api/github/webhooks); without credentials, serve the setup page that registers it.")
    .option("--dir <path>", "the folder of .env (default: the current folder)")
    .option("--port <n>", "port to listen on (default: PORT, else 3000)")
    .option("--host <address>", "address to listen on (default: HOST, else 127.0.0.1)")
    .action(async (opts: { dir?: string; port?: string; host?: string }) => {
      const cwd = opts.dir === undefined ? path.resolve(io.cwd) : existingDir("--dir", opts.dir, io.cwd);
      const env = {
        ...process.env,
        ...(opts.port !== undefined ? { PORT: String(integer("--port", opts.port, 0, 65_535)) } : {}),
        ...(opts.host !== undefined ? { HOST: nonEmptyHost(opts.host) } : {}),
      };
      const server = await launchApp({
        env,
        cwd,
        log: (line) => io.out(`${line}\n`),
        onSetup: (url) => io.out(`Forge is not registered on GitHub yet. Open this link to set it up:\n\n  ${url}\n\n`),
      }).catch((e: unknown) => {
        if (e instanceof LaunchError) throw new CliError(e.message.replace(/^forge: /, ""));
        if ((e as NodeJS.ErrnoException).code === "EADDRINUSE") throw new CliError(`port ${env.PORT ?? 3000} is in use (--port)`);
        throw e;
      });
      io.out(`Forge App listening: webhooks at ${server.webhookUrl}\n`);
      await new Promise<void>((resolve) => {
        for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => void server.close().then(resolve));
      });
      setExitCode(CLI_EXIT.OK);
    });
}

function nonEmptyHost(host: string): string {
  if (host.trim() === "") throw new CliError(`--host "": expected a host name or address, like 127.0.0.1 or 0.0.0.0`);
  return host;
}
