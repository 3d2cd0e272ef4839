// What a turn's journal write needs beside the decision: whether the decision changed the journal,
// and the message of the commit that records it.
import type { Decision } from "../../core/decide/index.js";
import type { Journal } from "../../core/journal.js";
import { sameJson } from "../../core/same-json.js";

/**
 * Whether a decision left the journal as it was. By content — `decide` always returns a copy — but
 * without serialising it: the copy shares every task it did not change, so this costs what changed.
 */
export function journalUnchanged(before: Journal, after: Journal): boolean {
  return sameJson(before, after);
}

export function commitMessage(runId: string, d: Decision): string {
  const kinds = [...new Set(d.events.map((e) => e.type))].slice(0, 4).join(", ");
  return `forge: ${runId} ${kinds || "journal"} (seq ${d.journal.seq})`;
}
