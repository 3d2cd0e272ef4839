/**
 * Reading a plan folder from disk (`.forge/plans/<planId>/`). I/O only: the texts go to `parsePlan`,
 * and `validatePlan` checks the result. Malformed files never make these functions throw; only a
 * folder that does not exist does (PlanNotFoundError).
 */
import { readdir, readFile, stat } from "node:fs/promises";
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
  let info;
  try {
    info = await stat(dir);
  } catch {
    throw new PlanNotFoundError(planDir, `plan folder ${planDir} does not exist`);
  }
  if (!info.isDirectory()) throw new PlanNotFoundError(planDir, `${planDir} is not a folder`);

  const files = new Map<string, string>();
  const dirs = new Set<string>();
  const unreadable: PlanSource["unreadable"] = [];
  const reads: Promise<void>[] = [];
  const read = (rel: string): void => {
    reads.push(
      readFile(path.join(dir, rel), "utf8").then(
        (text) => void files.set(rel, text),
        (err: NodeJS.ErrnoException) => void unreadable.push({ file: rel, message: `cannot be read: ${err.code ?? err.message}` }),
      ),
    );
  };

  for (const top of await listDir(dir)) {
    if (top.isFile() && (top.name === "plan.md" || top.name === "dag.json")) read(top.name);
    else if (top.isDirectory() && (top.name === "tasks" || top.name === "overlays")) {
      dirs.add(top.name);
      for (const entry of await listDir(path.join(dir, top.name))) {
        const rel = `${top.name}/${entry.name}`;
        if (entry.isDirectory()) dirs.add(rel);
        else if (entry.name.endsWith(".md")) read(rel);
        else files.set(rel, "");
      }
    } else if (top.isDirectory() && top.name === "specs") {
      dirs.add("specs");
      for (const rel of await readdir(path.join(dir, "specs"), { recursive: true })) {
        const full = path.join(dir, "specs", rel);
        if ((await stat(full).catch(() => undefined))?.isFile()) files.set(`specs/${rel.split(path.sep).join("/")}`, "");
      }
    }
  }
  await Promise.all(reads);
  unreadable.sort((a, b) => (a.file < b.file ? -1 : 1));
  return { planId: path.basename(dir), files, dirs, unreadable };
}

async function listDir(dir: string) {
  return (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
