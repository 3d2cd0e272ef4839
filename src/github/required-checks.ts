/**
 * The checks a task PR must pass, as Forge reads them (docs/executor.md#iterations): the config's
 * `required_checks` and what the integration branch's rules require — a ruleset's
 * `required_status_checks` (GET /repos/{o}/{r}/rules/branches/{branch},
 * docs.github.com/rest/repos/rules#get-rules-for-a-branch) and branch protection's required contexts
 * (the branch's `protection.required_status_checks`, GET /repos/{o}/{r}/branches/{branch},
 * docs.github.com/rest/branches/branches#get-a-branch — both readable with the Metadata permission
 * every App has). Whoever reports one — GitHub Actions, another App (a CI service), a commit status —
 * it counts by name: red starts a fix revision, green lets the merge go. A check neither names is not
 * Forge's to wait for or to answer.
 *
 * Rule names come from the repository's administrators, but what reports under them does not:
 * names are bounded here, and escaped wherever Forge shows them (`inlineData`, src/core/render/as-data.ts).
 */
import type { BranchRule } from "./merge-rules.js";
import type { GitHubPort } from "./port.js";
import { ttlCache } from "./ttl-cache.js";

/** At most this many names are taken from the rules, each cut to this many characters. */
export const REQUIRED_CHECK_LIMITS = { names: 50, name: 200 } as const;

/** The contexts a branch's ruleset rules require (`required_status_checks`), bounded. */
export function rulesetContexts(rules: readonly BranchRule[]): string[] {
  const out: string[] = [];
  for (const r of rules) {
    if (r.type !== "required_status_checks") continue;
    const list = r.parameters?.required_status_checks;
    if (!Array.isArray(list)) continue;
    for (const c of list as unknown[]) {
      const context = (c as { context?: unknown } | null)?.context;
      if (typeof context === "string") out.push(context);
    }
  }
  return bound(out);
}

/** The contexts branch protection requires, from a branch as `repos.getBranch` answers it (none when unprotected). */
export function protectionContexts(branch: unknown): string[] {
  const checks = (branch as { protection?: { required_status_checks?: { contexts?: unknown; checks?: unknown } } } | null)?.protection
    ?.required_status_checks;
  const contexts = Array.isArray(checks?.contexts) ? (checks.contexts as unknown[]) : [];
  const named = Array.isArray(checks?.checks) ? (checks.checks as Array<{ context?: unknown }>).map((c) => c?.context) : [];
  return bound([...contexts, ...named].filter((c): c is string => typeof c === "string"));
}

/**
 * The check names `branch`'s rules require: its rulesets' (from `rules`, when the caller has them
 * read already — the merge reads them for its method too — else read here) and its protection's.
 */
export async function readRuledChecks(
  port: Pick<GitHubPort, "branchRules" | "protectionChecks">,
  branch: string,
  rules: () => Promise<BranchRule[]> = () => port.branchRules(branch),
): Promise<string[]> {
  const [ruled, protectedBy] = await Promise.all([rules(), port.protectionChecks(branch)]);
  return [...rulesetContexts(ruled), ...protectedBy];
}

/** Unique non-empty names, each cut, at most `REQUIRED_CHECK_LIMITS.names`. */
function bound(names: readonly string[]): string[] {
  const out = new Set<string>();
  for (const n of names) {
    if (out.size >= REQUIRED_CHECK_LIMITS.names) break;
    const cut = n.slice(0, REQUIRED_CHECK_LIMITS.name);
    if (cut.trim()) out.add(cut);
  }
  return [...out];
}

/** The checks a head must pass before Forge merges: the config's, then those the rules add. */
export interface RequiredChecks {
  /** Every required name: the config's `required_checks` first, then the rules'. */
  all: string[];
  /** The config's: Forge waits for these even before they first report. */
  configured: string[];
}

const ruled = ttlCache<string, string[]>();

/**
 * The checks required of a PR into `branch`: the config's `configured` and the rules' (read by `read`,
 * at most once per `ttlMs` for `owner` — one repository's port — and branch). A failed read counts
 * the config's alone and is not kept (the next call reads again): GitHub still holds the merge for
 * the rules' checks, and the refusal says which.
 */
export async function requiredChecks(
  owner: object,
  branch: string,
  configured: readonly string[],
  now: number,
  ttlMs: number,
  read: () => Promise<string[]>,
): Promise<RequiredChecks> {
  let names: string[];
  try {
    names = await ruled.get(owner, branch, now, ttlMs, async () => bound(await read()));
  } catch {
    return { all: [...configured], configured: [...configured] };
  }
  return { all: [...new Set([...configured, ...names])], configured: [...configured] };
}

/**
 * How long a check only the branch's rules name may go unreported on a head before the merge is
 * tried without it (and GitHub's refusal, naming the check, goes to the PR and the tracker): a CI
 * service's App hears of the push by a webhook, at GitHub's speed (src/local-github/latency/README.md:
 * p95 up to a minute), and reports afterwards. Under a minute, so the reason shows within one.
 */
export const RULED_CHECK_GRACE_MS = 45_000;

const unreported = new WeakMap<object, Map<string, number>>();

/**
 * How long (ms) the merge of `head` should still wait for `missing` — checks only the rules name that
 * nothing reported — counted from when this process first found them missing on that head; 0 when
 * none is missing or the grace is over. Kept in memory: a restarted App waits the grace again.
 */
export function graceLeft(owner: object, head: string, missing: readonly string[], now: number, graceMs = RULED_CHECK_GRACE_MS): number {
  const seen = unreported.get(owner) ?? new Map<string, number>();
  unreported.set(owner, seen);
  if (missing.length === 0) {
    seen.delete(head);
    return 0;
  }
  const since = seen.get(head) ?? now;
  if (!seen.has(head)) {
    // Bounded: the oldest heads go first.
    if (seen.size >= 1_000) seen.delete(seen.keys().next().value!);
    seen.set(head, since);
  }
  return Math.max(0, since + graceMs - now);
}
