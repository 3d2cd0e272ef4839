/**
 * Reading a plan folder from disk (`.forge/plans/<planId>/`). I/O only: the texts go to `parsePlan`,
 * and `validatePlan` checks the result. Malformed files never make these functions throw; only a
 * folder that does not exist does (PlanNotFoundError).
 *
 * The reads are synchronous on purpose: a plan is thousands of small files, and going through the
 * libuv thread pool costs ten times more (10,000 task files: 0.1 s read in a loop, 1.1 s with
 * `fs.promises`). Only the CLI and tests read plans from disk; the App gets them from the GitHub API
 * and calls `parsePlan` itself.
 */
import { readFileSync, readdirSync, statSync, type Dirent } from "node:fs";
import path from "node:path";
import { parsePlan, type ParsedPlan, type PlanSource } from "./parse.js";

export class PlanNotFoundError extends Error {
  constructor(
    readonly planDir: string,
    message: string,
  ) {
    super(message);
    this.name = "PlanNotFoundError";
  }
}

/** Reads and parses the plan in `planDir`. */
export async function loadPlan(planDir: string): Promise<ParsedPlan> {
  return parsePlan(await readPlanSource(planDir));
}

/** Reads every file of a plan folder that validation looks at. */
export async function readPlanSource(planDir: string): Promise<PlanSource> {
  const dir = path.resolve(planDir);
  const info = statSync(dir, { throwIfNoEntry: false });
  if (!info) throw new PlanNotFoundError(planDir, `plan folder ${planDir} does not exist`);
  if (!info.isDirectory()) throw new PlanNotFoundError(planDir, `${planDir} is not a folder`);

  const files = new Map<string, string>();
  const dirs = new Set<string>();
  const unreadable: PlanSource["unreadable"] = [];
  const read = (rel: string): void => {
    try {
      files.set(rel, readFileSync(path.join(dir, rel), "utf8"));
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      unreadable.push({ file: rel, message: `cannot be read: ${e.code ?? e.message}` });
    }
  };

  for (const top of listDir(dir, "", unreadable)) {
    if (top.isFile() && (top.name === "plan.md" || top.name === "dag.json")) read(top.name);
    else if (top.isDirectory() && (top.name === "tasks" || top.name === "overlays")) {
      dirs.add(top.name);
      for (const entry of listDir(path.join(dir, top.name), top.name, unreadable)) {
        const rel = `${top.name}/${entry.name}`;
        if (entry.isDirectory()) dirs.add(rel);
        else if (entry.name.endsWith(".md")) read(rel);
        else files.set(rel, "");
      }
    } else if (top.isDirectory() && top.name === "specs") {
      dirs.add("specs");
      let entries: string[] = [];
      try {
        entries = readdirSync(path.join(dir, "specs"), { recursive: true, encoding: "utf8" });
      } catch (err) {
        unreadable.push({ file: "specs/", message: `cannot be read: ${(err as NodeJS.ErrnoException).code ?? String(err)}` });
      }
      for (const rel of entries.sort()) {
        if (statSync(path.join(dir, "specs", rel), { throwIfNoEntry: false })?.isFile())
          files.set(`specs/${rel.split(path.sep).join("/")}`, "");
      }
    }
  }
  return { planId: path.basename(dir), files, dirs, unreadable };
}

function listDir(dir: string, rel: string, unreadable: PlanSource["unreadable"]): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  } catch (err) {
    unreadable.push({ file: rel ? `${rel}/` : ".", message: `cannot be listed: ${(err as NodeJS.ErrnoException).code ?? String(err)}` });
    return [];
  }
}
