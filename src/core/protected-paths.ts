/**
 * Paths whose changes the App merges only with a person's approval (see docs/executor.md#merging):
 * the plans (`.forge/plans/**`), everything under `.github/` (workflows, and `.github/forge.yml`,
 * Forge's own config), and the config's `protected_paths`. An agent's job can push anything with
 * its token; the App reads what a PR changes from GitHub just before merging it.
 */
import picomatch from "picomatch";
import { INSTRUCTION_PATHS } from "./layout.js";
import type { ForgeConfig } from "./schemas/config.js";

/** The runner refuses agents' changes to these too; the App holds a push that carries them anyway (a job's token can push anything). */
export const MERGE_PROTECTED_PATHS = [".forge/plans/**", ".github/**", ...INSTRUCTION_PATHS] as const;

/** GitHub lists at most this many files of a pull request: a PR at the limit may change more. */
export const PR_FILES_LIMIT = 3_000;

/** The files of `files` that are protected under `config`, in order; a list at GitHub's limit holds on its own. */
export function protectedChanges(files: readonly string[], config: Pick<ForgeConfig, "protected_paths">): string[] {
  const isProtected = picomatch([...MERGE_PROTECTED_PATHS, ...config.protected_paths], { dot: true });
  const hit = files.filter((f) => isProtected(f));
  if (files.length >= PR_FILES_LIMIT) hit.push(`(more than ${PR_FILES_LIMIT} files: GitHub lists no more, so the rest cannot be checked)`);
  return hit;
}
