/**
 * The agent's walkthrough, completed with what the runner measured and validated against
 * `walkthroughFrontmatterSchema`. Facts the runner can measure — task, run, attempt, branch, base,
 * head sha, time spent, the list of files changed, adapter/model/cost/turns when the adapter knows
 * them — always come from the runner; the agent's claims about them are overwritten (and a claimed
 * file that did not change is reported). The agent owns its verdict, confidence, tests, risks,
 * follow-ups, the reasons of each file and the body.
 */
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { WALKTHROUGH_BODY_SECTIONS, walkthroughFrontmatterSchema, type WalkthroughFrontmatter } from "../../src/core/schemas/walkthrough.js";

export interface WalkthroughFacts {
  task_id: string;
  run_id: string;
  attempt: number;
  branch: string;
  base_ref: string;
  head_sha: string;
  time_spent_minutes: number;
  files_changed: string[];
  agent?: string;
  model?: string;
  cost_usd?: number;
  turns?: number;
}

export type CompletedWalkthrough =
  | { ok: true; frontmatter: WalkthroughFrontmatter; body: string; markdown: string; warnings: string[] }
  | { ok: false; error: string; warnings: string[] };

const KNOWN_KEYS = new Set(Object.keys(walkthroughFrontmatterSchema.shape));
const RUNNER_KEYS = ["task_id", "run_id", "attempt", "branch", "base_ref", "head_sha", "time_spent_minutes"] as const;

/** Splits `---\nYAML\n---\nbody`; undefined when there is no frontmatter block. */
export function splitFrontmatter(text: string): { yaml: string; body: string } | undefined {
  const m = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)([\s\S]*)$/.exec(text);
  return m ? { yaml: m[1]!, body: m[2]! } : undefined;
}

export function completeWalkthrough(text: string | undefined, facts: WalkthroughFacts): CompletedWalkthrough {
  const warnings: string[] = [];
  if (text === undefined || text.trim() === "") return { ok: false, error: "the agent wrote no walkthrough", warnings };
  const split = splitFrontmatter(text);
  if (!split) return { ok: false, error: "the walkthrough has no YAML frontmatter (a --- block at the top)", warnings };
  let raw: unknown;
  try {
    raw = parseYaml(split.yaml);
  } catch (err) {
    return { ok: false, error: `the walkthrough's frontmatter is not valid YAML: ${(err as Error).message.split("\n")[0]}`, warnings };
  }
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return { ok: false, error: "the walkthrough's frontmatter is not a mapping", warnings };
  const claimed = raw as Record<string, unknown>;

  const data: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(claimed)) {
    if (KNOWN_KEYS.has(k)) data[k] = v;
    else warnings.push(`unknown walkthrough field '${k}' dropped`);
  }
  for (const k of RUNNER_KEYS) {
    if (k in claimed && claimed[k] !== undefined && String(claimed[k]) !== String(facts[k]) && k !== "time_spent_minutes") {
      warnings.push(`${k}: the agent claimed ${JSON.stringify(claimed[k])}, the runner measured ${JSON.stringify(facts[k])}`);
    }
    data[k] = facts[k];
  }

  // Files: the runner's list, with the agent's reasons where it gave one.
  const reasons = new Map<string, string>();
  if (Array.isArray(claimed.files_changed)) {
    for (const f of claimed.files_changed as unknown[]) {
      if (typeof f === "string") reasons.set(f, "");
      else if (f && typeof f === "object" && typeof (f as { path?: unknown }).path === "string") {
        const reason = (f as { reason?: unknown }).reason;
        reasons.set((f as { path: string }).path, typeof reason === "string" ? reason : "");
      }
    }
  } else if (claimed.files_changed !== undefined) {
    warnings.push("files_changed is not a list; the runner's list is used");
  }
  const actual = new Set(facts.files_changed);
  const notChanged = [...reasons.keys()].filter((p) => !actual.has(p));
  if (notChanged.length) warnings.push(`the agent listed files it did not change: ${notChanged.join(", ")}`);
  data.files_changed = facts.files_changed.map((p) => ({ path: p, reason: reasons.get(p) ?? "" }));

  for (const k of ["agent", "model", "cost_usd", "turns"] as const) if (facts[k] !== undefined) data[k] = facts[k];

  const parsed = walkthroughFrontmatterSchema.safeParse(data);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "(frontmatter)"}: ${i.message}`).join("; ");
    return { ok: false, error: `the walkthrough's frontmatter is invalid: ${issues}`, warnings };
  }
  const body = split.body.replace(/^\s*\n/, "");
  const present = new Set([...body.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)].map((m) => m[1]!.trim().toLowerCase()));
  const missing = WALKTHROUGH_BODY_SECTIONS.filter((s) => !present.has(s.toLowerCase()));
  if (missing.length) warnings.push(`walkthrough sections missing: ${missing.join(", ")}`);
  return { ok: true, frontmatter: parsed.data, body, markdown: renderWalkthroughFile(parsed.data, body), warnings };
}

export function renderWalkthroughFile(frontmatter: WalkthroughFrontmatter, body: string): string {
  return `---\n${stringifyYaml(frontmatter, { lineWidth: 0 })}---\n\n${body.trimEnd()}\n`;
}
