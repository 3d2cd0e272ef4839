/**
 * The agent's refinement document (exit 10; docs/formats.md#refinement-document): what the next
 * attempt is told to fix. Checked like the Change Request when a session ends with exit 10
 * (src/agent/stages/reports.ts): bounded, headed `# Refinement Request`, with its sections.
 */
import { headingText, missingSections } from "./sections.js";

export const REFINEMENT_HEADING = "Refinement Request";
export const REFINEMENT_SECTIONS = ["Summary", "Context", "Issue", "Diagnostics", "Suggested Resolution"] as const;
/** The document travels in the next dispatch's inputs (GitHub caps each at 65,535 characters). */
export const REFINEMENT_MAX_BYTES = 32_768;

/** Why the refinement document is not acceptable, as `file — message`; empty when it is. */
export function refinementProblems(text: string | undefined, file = "refinement.md"): string[] {
  if (text === undefined || text.trim() === "") return [`${file} — missing: the file was not written`];
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > REFINEMENT_MAX_BYTES) return [`${file} — ${bytes} bytes; a refinement document has at most ${REFINEMENT_MAX_BYTES}`];
  const problems: string[] = [];
  const first = text.split("\n").find((l) => l.trim() !== "") ?? "";
  if (!/^#\s/.test(first) || headingText(first) !== REFINEMENT_HEADING)
    problems.push(`${file} — must start with the heading "# ${REFINEMENT_HEADING}"`);
  for (const s of missingSections(text, REFINEMENT_SECTIONS)) problems.push(`${file} — missing section "## ${s}"`);
  return problems;
}
