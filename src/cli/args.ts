/**
 * Checks of command-line arguments, made before a command does any work. Each throws a CliError
 * (exit 2) whose message names the argument and what is wrong with it, e.g. `--plan ./nope: no such
 * folder`; `main` prefixes it with the command (`forge demo: …`).
 */
import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { CliError, fileSystemProblem } from "./io.js";

/** How an argument is shown in messages: `--plan ./nope`, or just `./nope` for a positional argument. */
function shown(name: string | undefined, value: string): string {
  return name ? `${name} ${value}` : value;
}

/** What is at `full`: undefined when nothing is (a path through a file, ENOTDIR, is nothing either). */
function statOf(full: string, name: string | undefined, value: string): ReturnType<typeof statSync> | undefined {
  try {
    return statSync(full, { throwIfNoEntry: false });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOTDIR") return undefined;
    throw new CliError(`${shown(name, value)}: ${fileSystemProblem(e)}`);
  }
}

/** An empty argument names no path (it would be read as the current folder). */
function notEmpty(name: string | undefined, value: string, what: string): void {
  if (value.trim() === "") throw new CliError(`${name ?? what} "": expected a ${what}, got an empty argument`);
}

/** `value` (relative to `cwd`) is an existing folder; returns its absolute path. */
export function existingDir(name: string | undefined, value: string, cwd: string, what = "folder"): string {
  notEmpty(name, value, what);
  const full = path.resolve(cwd, value);
  const info = statOf(full, name, value);
  if (!info) throw new CliError(`${shown(name, value)}: no such ${what}`);
  if (!info.isDirectory()) throw new CliError(`${shown(name, value)}: is a file, not a ${what}`);
  return full;
}

/** `value` (relative to `cwd`) is an existing file; returns its absolute path. */
export function existingFile(name: string | undefined, value: string, cwd: string): string {
  notEmpty(name, value, "file");
  const full = path.resolve(cwd, value);
  const info = statOf(full, name, value);
  if (!info) throw new CliError(`${shown(name, value)}: no such file`);
  if (info.isDirectory()) throw new CliError(`${shown(name, value)}: is a folder, not a file`);
  return full;
}

/**
 * `value` is a folder to write to, made if it does not exist yet, and a file can be written in it —
 * tried before the command does its work, so that a folder it cannot write stops it at once, not
 * at its end with the work lost. Returns its absolute path.
 */
export function writableDir(name: string | undefined, value: string, cwd: string): string {
  notEmpty(name, value, "folder");
  const full = path.resolve(cwd, value);
  const info = statOf(full, name, value);
  if (info && !info.isDirectory()) throw new CliError(`${shown(name, value)}: is a file, not a folder`);
  const probe = path.join(full, `.forge-write-check-${process.pid}`);
  try {
    makeFolder(full);
    writeFileSync(probe, "");
  } catch (e) {
    throw new CliError(`${shown(name, value)}: cannot write there: ${e instanceof CliError ? e.message : fileSystemProblem(e)}`);
  }
  rmSync(probe, { force: true });
  return full;
}

/**
 * `full` made, with the folders above it that are missing, one at a time: `mkdir -p` under a file
 * system that refuses them all (`/proc`) loops in Node 20 rather than failing.
 */
function makeFolder(full: string): void {
  const missing: string[] = [];
  let at = full;
  for (; !existsSync(at) && path.dirname(at) !== at; at = path.dirname(at)) missing.unshift(at);
  if (missing.length && !statSync(at).isDirectory()) throw new CliError(`${at} is a file, not a folder`);
  for (const dir of missing) mkdirSync(dir);
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
