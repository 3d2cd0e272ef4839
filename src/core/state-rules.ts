/**
 * The ruleset rules that keep a run's state branch (`forge/<runId>/_state`) the App's alone
 * (README.md, "Protect the state branches"): without `creation`, anyone who may push plants a new
 * state branch; Forge refuses a journal it did not seal for this repository and run, but the branch
 * is better never made. Checked at each run's start (src/app/start-run.ts) and by `forge doctor`.
 */
export const STATE_BRANCH_RULES = ["creation", "update", "deletion"] as const;

const RULE_WORDS: Record<string, string> = { creation: "creations", update: "updates", deletion: "deletions" };

/** "creations, updates or deletions": the rules missing, in words. */
export function missingRulesText(missing: readonly string[]): string {
  const words = missing.map((t) => RULE_WORDS[t] ?? t);
  return words.length > 1 ? `${words.slice(0, -1).join(", ")} or ${words[words.length - 1]}` : (words[0] ?? "");
}
