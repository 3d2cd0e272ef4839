/**
 * Checks of command-line arguments, made before a command does any work. Each throws a CliError
 * (exit 2) whose message names the argument and what is wrong with it, e.g. `--plan ./nope: no such
 * folder`; `main` prefixes it with the command (`forge demo: …`).
 */
import { statSync } from "node:fs";
import path from "node:path";
import { CliError } from "./io.js";

/** How an argument is shown in messages: `--plan ./nope`, or just `./nope` for a positional argument. */
function shown(name: string | undefined, value: string): string {
  return name ? `${name} ${value}` : value;
}

/** `value` (relative to `cwd`) is an existing folder; returns its absolute path. */
export function existingDir(name: string | undefined, value: string, cwd: string, what = "folder"): string {
  const full = path.resolve(cwd, value);
  const info = statSync(full, { throwIfNoEntry: false });
  if (!info) throw new CliError(`${shown(name, value)}: no such ${what}`);
  if (!info.isDirectory()) throw new CliError(`${shown(name, value)}: is a file, not a ${what}`);
  return full;
}

/** `value` (relative to `cwd`) is an existing file; returns its absolute path. */
export function existingFile(name: string | undefined, value: string, cwd: string): string {
  const full = path.resolve(cwd, value);
  const info = statSync(full, { throwIfNoEntry: false });
  if (!info) throw new CliError(`${shown(name, value)}: no such file`);
  if (info.isDirectory()) throw new CliError(`${shown(name, value)}: is a folder, not a file`);
  return full;
}

/** `value` is a folder to write to: it may not exist yet, but must not be a file. */
export function writableDir(name: string | undefined, value: string, cwd: string): string {
  const full = path.resolve(cwd, value);
  const info = statSync(full, { throwIfNoEntry: false });
  if (info && !info.isDirectory()) throw new CliError(`${shown(name, value)}: is a file, not a folder`);
  return full;
}

/** A whole number of at least `min`. */
export function integer(name: string, value: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = value.trim() === "" ? NaN : Number(value);
  if (!Number.isInteger(n) || n < min || n > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `at least ${min}` : `from ${min} to ${max}`;
    throw new CliError(`${name} ${JSON.stringify(value)}: expected a whole number ${range}`);
  }
  return n;
}

/** A positive number of seconds. */
export function positiveSeconds(name: string, value: string): number {
  const n = value.trim() === "" ? NaN : Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new CliError(`${name} ${JSON.stringify(value)}: expected a positive number of seconds`);
  return n;
}

/** A rate: a number from 0 to 1. */
export function rate(name: string, value: string): number {
  const n = value.trim() === "" ? NaN : Number(value);
  if (!Number.isFinite(n) || n < 0 || n > 1) throw new CliError(`${name} ${JSON.stringify(value)}: expected a number from 0 to 1`);
  return n;
}

/** One of a few words. */
export function oneOf<T extends string>(name: string, value: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value))
    throw new CliError(`${name} ${JSON.stringify(value)}: expected ${allowed.slice(0, -1).join(", ")} or ${allowed.at(-1)}`);
  return value as T;
}
