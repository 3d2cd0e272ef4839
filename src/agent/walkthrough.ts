/**
 * The agent's walkthrough (DESIGN.md §2): what the agent must have written, and how the runner
 * completes it with the facts it measured itself (branch, base ref, head sha, time, files changed),
 * which always win over anything the agent wrote.
 */
import matter from "gray-matter";
import { stringify } from "yaml";
import { WALKTHROUGH_BODY_SECTIONS, walkthroughFrontmatterSchema, type WalkthroughFrontmatter } from "../core/schemas/walkthrough.js";

/** Fields the runner fills in; the agent may leave them out. */
const RUNNER_FIELDS = { task_id: true, run_id: true, attempt: true, branch: true, base_ref: true, head_sha: true, time_spent_minutes: true, files_changed: true } as const;

/** The frontmatter as the agent must write it: everything but the runner's facts is required. */
export const agentWalkthroughSchema = walkthroughFrontmatterSchema.partial(RUNNER_FIELDS);

export interface ParsedWalkthrough {
  data: Partial<WalkthroughFrontmatter> | undefined;
  body: string;
  /** Why it is not acceptable; empty when it is. */
  problems: string[];
}

function sectionProblems(body: string): string[] {
  const headings = new Set([...body.matchAll(/^#{1,3}\s+(.+?)\s*#*\s*$/gm)].map((m) => m[1]!.trim().toLowerCase()));
  return WALKTHROUGH_BODY_SECTIONS.filter((s) => !headings.has(s.toLowerCase())).map((s) => `body: missing section "## ${s}"`);
}

export function parseAgentWalkthrough(text: string): ParsedWalkthrough {
  let fm: Record<string, unknown>;
  let body: string;
  try {
    // A fresh options object keeps gray-matter from caching by content.
    const parsed = matter(text, {});
    fm = parsed.data as Record<string, unknown>;
    body = parsed.content;
  } catch (err) {
    return { data: undefined, body: text, problems: [`frontmatter: not valid YAML (${(err as Error).message.split("\n")[0]})`] };
  }
  if (Object.keys(fm).length === 0) return { data: undefined, body, problems: ["frontmatter: missing (the file must start with --- YAML ---)", ...sectionProblems(body)] };
  const result = agentWalkthroughSchema.safeParse(fm);
  const problems = result.success ? [] : result.error.issues.map((i) => `frontmatter: ${i.path.join(".") || "(root)"}: ${i.message}`);
  return { data: result.success ? result.data : undefined, body, problems: [...problems, ...sectionProblems(body)] };
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
  /** Paths changed on the branch, as git reports them. */
  files_changed: string[];
  agent?: string;
  model?: string;
  cost_usd?: number;
  turns?: number;
}

export interface CompletedWalkthrough {
  text: string;
  frontmatter: WalkthroughFrontmatter | undefined;
  problems: string[];
}

/**
 * The walkthrough with the runner's facts in place. `files_changed` is the measured list, with the
 * agent's reason for each path it explained. Problems list what still makes it invalid.
 */
export function completeWalkthrough(text: string, facts: WalkthroughFacts): CompletedWalkthrough {
  const parsed = parseAgentWalkthrough(text);
  let raw: Record<string, unknown> = {};
  try {
    raw = matter(text, {}).data as Record<string, unknown>;
  } catch {
    raw = {};
  }
  const reasons = new Map<string, string>();
  for (const f of Array.isArray(raw.files_changed) ? (raw.files_changed as Array<Record<string, unknown>>) : []) {
    if (f && typeof f.path === "string") reasons.set(f.path.replace(/^\.\//, ""), typeof f.reason === "string" ? f.reason : "");
  }
  const merged: Record<string, unknown> = {
    ...raw,
    task_id: facts.task_id,
    run_id: facts.run_id,
    attempt: facts.attempt,
    branch: facts.branch,
    base_ref: facts.base_ref,
    head_sha: facts.head_sha,
    time_spent_minutes: facts.time_spent_minutes,
    files_changed: facts.files_changed.map((p) => ({ path: p, reason: reasons.get(p) ?? "" })),
  };
  for (const key of ["agent", "model", "cost_usd", "turns"] as const) if (facts[key] !== undefined) merged[key] = facts[key];
  const result = walkthroughFrontmatterSchema.safeParse(merged);
  const problems = [
    ...(result.success ? [] : result.error.issues.map((i) => `frontmatter: ${i.path.join(".") || "(root)"}: ${i.message}`)),
    ...parsed.problems.filter((p) => p.startsWith("body:")),
  ];
  const out = `---\n${stringify(result.success ? result.data : merged).trimEnd()}\n---\n${parsed.body.startsWith("\n") ? "" : "\n"}${parsed.body}`;
  return { text: out, frontmatter: result.success ? result.data : undefined, problems };
}
