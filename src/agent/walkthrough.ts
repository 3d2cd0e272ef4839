/**
 * The agent's walkthrough (see docs/formats.md#walkthrough): what the agent must have written (`parseAgentWalkthrough`,
 * the stage gate of runStages), and how the runner completes it with what it measured
 * (`completeWalkthrough`, the job pipeline's step 7) — one reader and one completion for both.
 *
 * Facts the runner can measure — task, run, attempt, branch, base, head sha, time spent, the list of
 * files changed, adapter/model/cost/turns when the adapter knows them — always come from the runner;
 * the agent's claims about them are overwritten (and a claimed file that did not change is reported).
 * The agent owns its verdict, confidence, tests, risks, follow-ups, the reasons of each file and the body.
 */
import { stringify as stringifyYaml } from "yaml";
import { describeFrontMatterProblem, readFrontMatter } from "../core/front-matter.js";
import { formatProblem, zodProblems } from "../core/problems.js";
import { WALKTHROUGH_BODY_SECTIONS, walkthroughFrontmatterSchema, type WalkthroughFrontmatter } from "../core/schemas/walkthrough.js";
import { missingSections as missingSectionsOf } from "./sections.js";

/** Fields the runner fills in; the agent may leave them out. */
const RUNNER_FIELDS = {
  task_id: true,
  run_id: true,
  attempt: true,
  branch: true,
  base_ref: true,
  head_sha: true,
  time_spent_minutes: true,
  files_changed: true,
} as const;

/** The frontmatter as the agent must write it: everything but the runner's facts is required. */
export const agentWalkthroughSchema = walkthroughFrontmatterSchema.partial(RUNNER_FIELDS);

const KNOWN_KEYS = new Set(Object.keys(walkthroughFrontmatterSchema.shape));
const RUNNER_KEYS = ["task_id", "run_id", "attempt", "branch", "base_ref", "head_sha", "time_spent_minutes"] as const;

/**
 * Splits `---\nYAML\n---\nbody` with the core's front-matter reader; undefined when there is no
 * closed YAML block (a `---js` block is not one).
 */
export function splitFrontmatter(text: string, file = "walkthrough.md"): { yaml: string; body: string } | undefined {
  const fm = readFrontMatter(file, text);
  return fm.present && fm.closed && fm.problem?.kind !== "language" ? { yaml: fm.yaml, body: fm.body } : undefined;
}

/** The body's sections the walkthrough format requires and the body lacks. */
const missingSections = (body: string) => missingSectionsOf(body, WALKTHROUGH_BODY_SECTIONS);
const sectionProblems = (body: string) => missingSections(body).map((s) => `body: missing section "## ${s}"`);

type Frontmatter = { ok: true; data: Record<string, unknown>; body: string } | { ok: false; error: string; problem: string; body: string };

const MISSING = {
  error: "the walkthrough has no YAML frontmatter (a --- block at the top)",
  problem: "frontmatter: missing (the file must start with --- YAML ---)",
};

/** The frontmatter mapping of `text` (the content of `file`), or why there is none. */
function walkthroughFrontmatter(text: string, file: string): Frontmatter {
  const fm = readFrontMatter(file, text);
  if (fm.problem?.kind === "language") {
    const why = describeFrontMatterProblem(fm.problem);
    return {
      ok: false,
      error: `the walkthrough's frontmatter is refused: ${why}`,
      problem: `frontmatter: refused (${why})`,
      body: fm.body,
    };
  }
  if (!fm.present || !fm.closed) return { ok: false, ...MISSING, body: text };
  if (fm.problem) {
    const why = describeFrontMatterProblem(fm.problem);
    return {
      ok: false,
      error: `the walkthrough's frontmatter is not valid YAML: ${why}`,
      problem: `frontmatter: not valid YAML (${why})`,
      body: fm.body,
    };
  }
  const raw = fm.data;
  if (raw === null || raw === undefined) return { ok: false, ...MISSING, body: fm.body };
  if (typeof raw !== "object" || Array.isArray(raw))
    return { ok: false, error: "the walkthrough's frontmatter is not a mapping", problem: "frontmatter: not a mapping", body: fm.body };
  return { ok: true, data: raw as Record<string, unknown>, body: fm.body };
}

export interface ParsedWalkthrough {
  data: Partial<WalkthroughFrontmatter> | undefined;
  body: string;
  /** Why it is not acceptable; empty when it is. */
  problems: string[];
}

/** The agent's walkthrough as the agent must write it (the runner's facts may be missing); `file` names it in problems. */
export function parseAgentWalkthrough(text: string, file = "walkthrough.md"): ParsedWalkthrough {
  const fm = walkthroughFrontmatter(text, file);
  if (!fm.ok) return { data: undefined, body: fm.body, problems: [fm.problem, ...sectionProblems(fm.body)] };
  const result = agentWalkthroughSchema.safeParse(fm.data);
  const problems = result.success ? [] : zodProblems(result.error, file).map((p) => `frontmatter: ${formatProblem(p)}`);
  return { data: result.success ? result.data : undefined, body: fm.body, problems: [...problems, ...sectionProblems(fm.body)] };
}

/** What the runner measured. */
export interface WalkthroughFacts {
  task_id: string;
  run_id: string;
  attempt: number;
  branch: string;
  base_ref: string;
  head_sha: string;
  time_spent_minutes: number;
  /** Paths changed by the attempt, as git reports them. */
  files_changed: string[];
  agent?: string;
  model?: string;
  /** The model of each stage, as the runner chose it. */
  models?: WalkthroughFrontmatter["models"];
  cost_usd?: number;
  turns?: number;
}

/**
 * The completed walkthrough. `ok`: the frontmatter is valid with the runner's facts in place (the job
 * pipeline requires it for a success); `markdown` is the file to record. `warnings`: what the runner
 * corrected or dropped, and missing body sections. `problems`: everything a strict gate refuses —
 * the frontmatter's issues and the missing sections (empty for a walkthrough nothing is wrong with).
 */
export type CompletedWalkthrough =
  | { ok: true; frontmatter: WalkthroughFrontmatter; body: string; markdown: string; warnings: string[]; problems: string[] }
  | { ok: false; frontmatter?: undefined; error: string; warnings: string[]; problems: string[] };

const normalizePath = (p: string) => p.replace(/^\.\//, "");

export function completeWalkthrough(text: string | undefined, facts: WalkthroughFacts, file = "walkthrough.md"): CompletedWalkthrough {
  const warnings: string[] = [];
  if (text === undefined || text.trim() === "")
    return { ok: false, error: "the agent wrote no walkthrough", warnings, problems: ["walkthrough: missing"] };
  const fm = walkthroughFrontmatter(text, file);
  if (!fm.ok) return { ok: false, error: fm.error, warnings, problems: [fm.problem, ...sectionProblems(fm.body)] };
  const claimed = fm.data;

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
      if (typeof f === "string") reasons.set(normalizePath(f), "");
      else if (f && typeof f === "object" && typeof (f as { path?: unknown }).path === "string") {
        const reason = (f as { reason?: unknown }).reason;
        reasons.set(normalizePath((f as { path: string }).path), typeof reason === "string" ? reason : "");
      }
    }
  } else if (claimed.files_changed !== undefined) {
    warnings.push("files_changed is not a list; the runner's list is used");
  }
  const actual = new Set(facts.files_changed);
  const notChanged = [...reasons.keys()].filter((p) => !actual.has(p));
  if (notChanged.length) warnings.push(`the agent listed files it did not change: ${notChanged.join(", ")}`);
  data.files_changed = facts.files_changed.map((p) => ({ path: p, reason: reasons.get(p) ?? "" }));

  for (const k of ["agent", "model", "models", "cost_usd", "turns"] as const) if (facts[k] !== undefined) data[k] = facts[k];

  const body = fm.body.replace(/^\s*\n/, "");
  const bodyProblems = sectionProblems(body);
  const parsed = walkthroughFrontmatterSchema.safeParse(data);
  if (!parsed.success) {
    const issues = zodProblems(parsed.error, file).map((p) => formatProblem(p));
    return {
      ok: false,
      error: `the walkthrough's frontmatter is invalid: ${issues.join("; ")}`,
      warnings,
      problems: [...issues.map((i) => `frontmatter: ${i}`), ...bodyProblems],
    };
  }
  const missing = missingSections(body);
  if (missing.length) warnings.push(`walkthrough sections missing: ${missing.join(", ")}`);
  return { ok: true, frontmatter: parsed.data, body, markdown: renderWalkthroughFile(parsed.data, body), warnings, problems: bodyProblems };
}

export function renderWalkthroughFile(frontmatter: WalkthroughFrontmatter, body: string): string {
  return `---\n${stringifyYaml(frontmatter, { lineWidth: 0 })}---\n\n${body.trimEnd()}\n`;
}
