/**
 * Runs one of Forge's programs (`forge sim`, `forge demo`) as a process of its own,
 * passing its output through. A failure inside it shows as its message only: the stack trace Node
 * prints for an uncaught error is left out unless FORGE_DEBUG=1.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { nodeArgsFor, programFile, type Program } from "./programs.js";
import { CLI_EXIT, CliError, type CliIo } from "./io.js";

/** Forge's root (a checkout, or the installed package): this file is src/cli/child.ts or dist/cli/child.js. */
export function checkoutRoot(): string {
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
}

export interface ChildOptions {
  program: Program;
  args: string[];
  env: NodeJS.ProcessEnv;
  stdin: "inherit" | "ignore";
  io: CliIo;
}

/** Runs the program to its end; resolves with its exit code. */
export async function runLocalGithubProgram({ program, args, env, stdin, io }: ChildOptions): Promise<number> {
  const main = programFile(program);
  if (!existsSync(main)) throw new CliError(`${main} not found (build Forge with npm run build)`, CLI_EXIT.INTERNAL);
  const child = spawn(process.execPath, [...nodeArgsFor(main), ...args], { cwd: checkoutRoot(), env, stdio: [stdin, "pipe", "pipe"] });
  child.stdout.on("data", (d: Buffer) => io.out(d.toString("utf8")));
  const err = process.env.FORGE_DEBUG === "1" ? (t: string) => io.err(t) : withoutStackTraces(io.err);
  child.stderr.on("data", (d: Buffer) => err(d.toString("utf8")));
  const forward = (sig: NodeJS.Signals) => child.kill(sig);
  process.on("SIGINT", forward);
  process.on("SIGTERM", forward);
  try {
    return await new Promise<number>((resolve) => child.on("close", (c) => resolve(c ?? CLI_EXIT.INTERNAL)));
  } finally {
    process.off("SIGINT", forward);
    process.off("SIGTERM", forward);
    err("");
  }
}

/**
 * A writer that drops what Node prints around an uncaught error — the `file:line` of the throw,
 * its source line and caret, the `    at …` frames, the error's own properties and `Node.js vX` —
 * and keeps the `Error: message` line. Writing "" flushes a last partial line.
 */
export function withoutStackTraces(write: (text: string) => void): (text: string) => void {
  let pending = "";
  /** Inside the code frame (after a `file:line` line, until the error's message). */
  let frame = false;
  /** Inside the frames and properties after the message. */
  let trace = false;
  const keep = (line: string): boolean => {
    if (/^(?:file:\/\/)?(?:\/|[A-Za-z]:\\|node:)\S*:\d+$/.test(line)) return !(frame = true);
    if (frame) {
      if (/^\s*$/.test(line) || /^\s/.test(line) || /^\s*\^+\s*$/.test(line)) return false;
      if (!/^[A-Za-z_$][\w$.]*(?: \[\w+\])?(?::|$)/.test(line)) return false;
      frame = false;
      trace = true;
      return true;
    }
    if (/^\s+at \S/.test(line) || /^Node\.js v\d/.test(line)) return !(trace = true);
    if (trace) {
      if (/^\s*$/.test(line) || /^\s/.test(line) || /^[{}]\s*$/.test(line)) return false;
      trace = false;
    }
    return true;
  };
  return (text) => {
    if (text === "") {
      const rest = pending;
      pending = "";
      if (rest && keep(rest)) write(rest);
      return;
    }
    pending += text;
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    const out = lines
      .filter(keep)
      .map((l) => `${l}\n`)
      .join("");
    if (out) write(out);
  };
}
