/**
 * The `forge` command an agent finds on its PATH (`<sessionDir>/.bin/forge`), so an agent allowed to
 * spawn sub-agents can run `forge spawn`. The default entry is found relative to this file
 * (`../../bin/forge.js`), so it stays in src/agent/.
 */
import { existsSync } from "node:fs";
import { chmod, mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** This package's `forge` entry, when it is there to be run (a source checkout or an installed package). */
export function defaultForgeCli(): { command: string; args: string[] } | undefined {
  const bin = fileURLToPath(new URL("../../bin/forge.js", import.meta.url));
  const main = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));
  return existsSync(bin) && existsSync(main) ? { command: process.execPath, args: [bin] } : undefined;
}

function shQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** A `forge` command on the agent's PATH, so an agent allowed to spawn sub-agents can run `forge spawn`. */
export async function writeForgeShim(dir: string, cli: { command: string; args: string[] }): Promise<string> {
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, "forge");
  await writeFile(file, `#!/bin/sh\nexec ${[cli.command, ...cli.args].map(shQuote).join(" ")} "$@"\n`, "utf8");
  await chmod(file, 0o755);
  return file;
}
