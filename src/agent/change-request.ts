/**
 * The agent's Change Request document (docs/formats.md#change-request): what the agent must have
 * written (`parseAgentChangeRequest`, checked when a session escalates: src/agent/stages/reports.ts),
 * and how the runner completes it with the fields it owns (`completeChangeRequest`, the job's
 * record). Every byte of the document is the agent's: bounded before it is parsed, checked against
 * the schema, and never trusted for the run, the emitter or the time.
 */
import { stringify as stringifyYaml } from "yaml";
import { describeFrontMatterProblem, readFrontMatter } from "../core/front-matter.js";
import { formatProblem, zodProblems } from "../core/problems.js";
import {
  agentChangeRequestSchema,
  CHANGE_REQUEST_BODY_SECTIONS,
  CHANGE_REQUEST_LIMITS,
  changeRequestFrontmatterSchema,
  type AgentChangeRequest,
  type ChangeRequestFrontmatter,
} from "../core/schemas/change-request.js";
import { missingSections } from "./sections.js";

/** Problems past this many are counted, not listed: the list goes into a prompt and an error line. */
const MAX_PROBLEMS = 10;

export interface ParsedChangeRequest {
  data: AgentChangeRequest | undefined;
  body: string;
  /** Why it is not acceptable, as `file field — message`; empty when it is. */
  problems: string[];
}

/** The agent's document, as the agent must write it; `file` names it in the problems. */
export function parseAgentChangeRequest(text: string | undefined, file = "change-request.md"): ParsedChangeRequest {
  if (text === undefined || text.trim() === "")
    return { data: undefined, body: "", problems: [`${file} — missing: the file was not written`] };
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > CHANGE_REQUEST_LIMITS.bytes)
    return {
      data: undefined,
      body: "",
      problems: [`${file} — ${bytes} bytes; a Change Request has at most ${CHANGE_REQUEST_LIMITS.bytes}`],
    };
  const fm = readFrontMatter(file, text);
  const sections = missingSections(fm.body, CHANGE_REQUEST_BODY_SECTIONS).map((s) => `${file} body — missing section "## ${s}"`);
  if (fm.problem) return { data: undefined, body: fm.body, problems: [describeFrontMatterProblem(fm.problem), ...sections] };
  if (!fm.present || !fm.closed || fm.data === undefined || fm.data === null)
    return {
      data: undefined,
      body: fm.body,
      problems: [`${file} — no YAML front matter (the file must start with a --- block)`, ...sections],
    };
  const parsed = agentChangeRequestSchema.safeParse(fm.data);
  if (!parsed.success) {
    const problems = zodProblems(parsed.error, file).map((p) => formatProblem(p));
    return { data: undefined, body: fm.body, problems: [...problems, ...sections] };
  }
  const { title, reason, affected_tasks, suggested_action, priority, suggested_changes } = parsed.data;
  return { data: { title, reason, affected_tasks, suggested_action, priority, suggested_changes }, body: fm.body, problems: sections };
}

/** The fields the runner owns. */
export interface ChangeRequestFacts {
  id: string;
  run_id: string;
  emitted_by: string;
  emitted_at: string;
}

export type CompletedChangeRequest =
  { ok: true; frontmatter: ChangeRequestFrontmatter; body: string; markdown: string } | { ok: false; problems: string[] };

/**
 * The document with the runner's fields in place (the agent's values for them are replaced), valid
 * against `changeRequestFrontmatterSchema`, or the problems that keep it from being one. An agent
 * that names no affected task names its own.
 */
export function completeChangeRequest(
  text: string | undefined,
  facts: ChangeRequestFacts,
  file = "change-request.md",
): CompletedChangeRequest {
  const parsed = parseAgentChangeRequest(text, file);
  if (!parsed.data || parsed.problems.length) return { ok: false, problems: parsed.problems };
  const a = parsed.data;
  const full = changeRequestFrontmatterSchema.safeParse({
    id: facts.id,
    run_id: facts.run_id,
    title: a.title,
    emitted_by: facts.emitted_by,
    emitted_at: facts.emitted_at,
    status: "pending",
    reason: a.reason,
    affected_tasks: a.affected_tasks.length ? a.affected_tasks : [facts.emitted_by],
    suggested_action: a.suggested_action,
    priority: a.priority,
    suggested_changes: a.suggested_changes,
  });
  if (!full.success) return { ok: false, problems: zodProblems(full.error, file).map((p) => formatProblem(p)) };
  const body = parsed.body.replace(/^\s*\n/, "").trimEnd();
  return {
    ok: true,
    frontmatter: full.data,
    body,
    markdown: `---\n${stringifyYaml(full.data, { lineWidth: 0 })}---\n\n${body}\n`,
  };
}

/** A problem names fields the agent wrote: each is cut to this many characters in a list. */
const MAX_PROBLEM_CHARS = 300;

/** Problems as one line for an error or a prompt (the first few, each cut, and how many more). */
export function problemList(problems: readonly string[]): string {
  const cut = (p: string) => (p.length > MAX_PROBLEM_CHARS ? `${p.slice(0, MAX_PROBLEM_CHARS - 1)}…` : p);
  const shown = problems
    .slice(0, MAX_PROBLEMS)
    .map((p) => cut(p.replace(/\s+/g, " ")))
    .join("; ");
  return problems.length > MAX_PROBLEMS ? `${shown}; and ${problems.length - MAX_PROBLEMS} more` : shown;
}
