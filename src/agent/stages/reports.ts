/**
 * The document that goes with exit 10 (the refinement document) or 11 (the Change Request), checked
 * at the end of the session that ended with that code: an invalid one goes back to the agent once,
 * with its problems, in a session of its own; still invalid, the session fails (exit 1, error code
 * `report_invalid`) and its stage does not retry it (docs/runner.md#reports).
 */
import { readAgentText } from "../agent-files.js";
import { parseAgentChangeRequest, problemList } from "../change-request.js";
import { refinementProblems, REFINEMENT_HEADING, REFINEMENT_MAX_BYTES, REFINEMENT_SECTIONS } from "../refinement.js";
import { abortsTheStage, EXIT_CODES } from "../../core/exit-codes.js";
import { CHANGE_REQUEST_LIMITS } from "../../core/schemas/change-request.js";
import type { ReportPaths, SpawnResult } from "../types.js";
import type { StageContext } from "./context.js";
import { stagePrompt } from "./prompt.js";

/** The error code of a session whose document is still invalid after its correction. */
export const REPORT_INVALID = "report_invalid";

interface ReportKind {
  /** As people read it: "the Change Request". */
  name: string;
  /** Its file name, in problems and in the correction session's folder name. */
  file: string;
  path: (reports: ReportPaths) => string;
  problems: (text: string | undefined, file: string) => string[];
  format: string;
}

const n = (x: number) => x.toLocaleString("en-US");

const KINDS: Partial<Record<number, ReportKind>> = {
  [EXIT_CODES.NEEDS_ESCALATION]: {
    name: "the Change Request",
    file: "change-request.md",
    path: (r) => r.changeRequest,
    problems: (text, file) => parseAgentChangeRequest(text, file).problems,
    format: [
      `YAML front matter: \`title\` (one line of at most ${CHANGE_REQUEST_LIMITS.title} characters, in your words: it is the issue's title),`,
      `\`reason\` (why the plan cannot be carried out as written; at most ${n(CHANGE_REQUEST_LIMITS.reason)} characters), \`affected_tasks\` (task ids),`,
      "`suggested_action` (`RETRY` | `AMEND` | `MANUAL_REVIEW`), `priority` (`HIGH` | `MEDIUM` | `LOW`),",
      `\`suggested_changes\` (text; at most ${n(CHANGE_REQUEST_LIMITS.suggestedChanges)} characters); then the body sections \`## Description\`,`,
      `\`## Impact Assessment\`, \`## Proposed Resolution\`. At most ${n(CHANGE_REQUEST_LIMITS.bytes)} bytes in all.`,
    ].join("\n"),
  },
  [EXIT_CODES.NEEDS_REFINEMENT]: {
    name: "the refinement document",
    file: "refinement.md",
    path: (r) => r.refinement,
    problems: refinementProblems,
    format: `Markdown: \`# ${REFINEMENT_HEADING}\`, then ${REFINEMENT_SECTIONS.map((s) => `\`## ${s}\``).join(", ")}. At most ${n(REFINEMENT_MAX_BYTES)} bytes.`,
  },
};

/** What is wrong with the document `exitCode` needs, or undefined when the code needs none or it is valid. */
export async function reportProblems(c: StageContext, exitCode: number): Promise<{ kind: ReportKind; problems: string[] } | undefined> {
  const kind = KINDS[exitCode];
  if (!kind) return undefined;
  const text = await readAgentText(c.sessionDir, kind.path(c.reports));
  const problems = kind.problems(text, kind.file);
  return problems.length ? { kind, problems } : undefined;
}

/**
 * `r`, when its code needs no document or its document is valid; else the session that corrects it
 * (`again` runs one), when that one ends with the same code and a valid document; else a failure
 * that says what is still wrong. A session stopped from outside (20, 21, depth, a rate limit) ends
 * as it ended.
 */
export async function withValidReport(
  c: StageContext,
  stage: string,
  r: SpawnResult,
  again: (stage: string, prompt: string) => Promise<SpawnResult>,
  note: (message: string) => void,
): Promise<SpawnResult> {
  const bad = await reportProblems(c, r.exitCode);
  if (!bad) return r;
  const { kind } = bad;
  note(`stage ${stage}: ${kind.name} is invalid (${problemList(bad.problems)}); it goes back to the agent once`);
  const fixed = await again(`${stage}-fix-${kind.file.replace(/\.md$/, "")}`, correctionPrompt(c, stage, r.exitCode, kind, bad.problems));
  if (abortsTheStage(fixed.exitCode) || fixed.rateLimitedUntil) return fixed;
  const left = fixed.exitCode === r.exitCode ? await reportProblems(c, r.exitCode) : undefined;
  if (fixed.exitCode === r.exitCode && !left) return fixed;
  const message =
    fixed.exitCode !== r.exitCode
      ? `${kind.name} (exit ${r.exitCode}) was invalid (${problemList(bad.problems)}) and its correction ended with exit ${fixed.exitCode}, not ${r.exitCode}`
      : `${kind.name} (exit ${r.exitCode}) is still invalid after one correction: ${problemList(left!.problems)}`;
  return { ...fixed, exitCode: EXIT_CODES.FAILURE, status: "failure", error: { code: REPORT_INVALID, message } };
}

/** The correction session's prompt: the stage's context, the problems, the format, and the code to end with. */
function correctionPrompt(c: StageContext, stage: string, code: number, kind: ReportKind, problems: string[]): string {
  const instruction = [
    `Your session of stage ${stage} ended with FORGE_EXIT=${code}, but ${kind.name} at ${kind.path(c.reports)} does not follow its format:`,
    "",
    ...problems.slice(0, 10).map((p) => `- ${p.length > 300 ? `${p.slice(0, 299)}…` : p}`),
    ...(problems.length > 10 ? [`- …and ${problems.length - 10} more`] : []),
    "",
    `Read the file and rewrite it so that it follows the format below and still says what you meant. Change nothing else. Then end with FORGE_EXIT=${code}.`,
    "",
    `Format: ${kind.format}`,
  ].join("\n");
  return stagePrompt(c.task, `${stage} (correction)`, c.reports, instruction, c.workdir);
}
