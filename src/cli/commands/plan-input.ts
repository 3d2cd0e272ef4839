import path from "node:path";
import { loadPlan, PlanNotFoundError } from "../../core/plan/load.js";
import type { ParsedPlan } from "../../core/plan/parse.js";
import { existingDir } from "../args.js";
import { CliError, type CliIo } from "../io.js";

/** Loads a plan folder named on the command line; a missing folder, or a file, is a CliError (exit 2). */
export async function loadPlanArg(planDir: string, io: CliIo): Promise<ParsedPlan> {
  existingDir(undefined, planDir, io.cwd, "plan folder");
  try {
    return await loadPlan(path.resolve(io.cwd, planDir));
  } catch (err) {
    if (err instanceof PlanNotFoundError)
      throw new CliError(`${planDir}: no such plan folder (expected a folder like .forge/plans/<planId>/)`);
    throw err;
  }
}

/** A problem's file as the user should read it: relative to the cwd. */
export function displayFile(planDir: string, file: string, io: CliIo): string {
  const rel = path.relative(io.cwd, path.resolve(io.cwd, planDir, file)) || ".";
  const shown = rel.split(path.sep).join("/");
  return file.endsWith("/") && !shown.endsWith("/") ? `${shown}/` : shown;
}
