/**
 * Protected paths (see docs/runner.md#protected-paths): an agent may not change the pinned plan
 * (`.forge/plans/**`), `.github/` (workflows a job token could use to run code with more rights, and
 * Forge's config), or the files agents read as instructions (`AGENTS.md`, `CLAUDE.md`, `.claude/`,
 * `.codex/`, `.gitattributes`, … — `INSTRUCTION_PATHS`). The runner reverts such changes at every
 * stage end and before committing — so a later stage's session never reads them — and fails the
 * attempt, naming the paths.
 */
import { rm } from "node:fs/promises";
import path from "node:path";
import picomatch from "picomatch";
import { PROTECTED_PATHS } from "../../src/core/layout.js";
import type { Git } from "./git.js";

const isProtectedMatch = picomatch([...PROTECTED_PATHS], { dot: true });

export function isProtectedPath(file: string): boolean {
  return isProtectedMatch(file.replace(/\\/g, "/").replace(/^\.\//, ""));
}

export interface Refusal {
  path: string;
  /** A: added, M: modified, D: deleted, T: type changed. */
  change: string;
}

/**
 * With the agent's work staged against `base`, puts every protected path back as it was at `base`
 * (index and work tree) and returns what was refused. `staged` saves a diff when the caller has it.
 */
export async function revertProtectedChanges(git: Git, base: string, staged?: Array<{ status: string; path: string }>): Promise<Refusal[]> {
  const changes = (staged ?? (await git.stagedChanges(base))).filter((c) => isProtectedPath(c.path));
  for (const c of changes) {
    if (c.status.startsWith("A")) {
      await git.run(["rm", "--cached", "--quiet", "--force", "--", c.path]);
      await rm(path.join(git.dir, c.path), { force: true });
    } else {
      await git.run(["restore", `--source=${base}`, "--staged", "--worktree", "--", c.path]);
    }
  }
  return changes.map((c) => ({ path: c.path, change: c.status.slice(0, 1) }));
}
