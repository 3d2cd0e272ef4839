/**
 * Paths whose changes the App merges only with a person's approval (see docs/executor.md#merging):
 * `PROTECTED_PATHS` (src/core/layout.ts: the plans, `.github/`, `.env*`, the files agents read as
 * instructions — the list the runner refuses too) and the config's `protected_paths`. An agent's job can push anything with
 * its token; the App reads what a PR changes from GitHub just before merging it.
 */
import picomatch from "picomatch";
import { PROTECTED_PATHS } from "./layout.js";
import type { ForgeConfig } from "./schemas/config.js";

/** GitHub lists at most this many files of a pull request: a PR at the limit may change more. */
export const PR_FILES_LIMIT = 3_000;

/**
 * The files of `files` that are protected under `config` (`PROTECTED_PATHS`, which the runner
 * refuses too, and the config's own), in order; a list at GitHub's limit holds on its own. A
 * renamed file must be listed by its old path as well: a rename out of a protected folder changes it.
 */
export function protectedChanges(files: readonly string[], config: Pick<ForgeConfig, "protected_paths">): string[] {
  const isProtected = picomatch([...PROTECTED_PATHS, ...config.protected_paths], { dot: true });
  const hit = files.filter((f) => isProtected(f));
  if (files.length >= PR_FILES_LIMIT) hit.push(`(more than ${PR_FILES_LIMIT} files: GitHub lists no more, so the rest cannot be checked)`);
  return hit;
}
