/**
 * The journal's freshness anchor. A seal (journal-seal.ts) proves that the App wrote a journal for
 * this repository and run, not that it is the newest: every journal the App ever wrote stays valid.
 * So the App keeps its own record of the newest one — a check run, which only a GitHub App can
 * create and only its creator can update, named `Forge journal`, on the commit the run started from
 * (`facts.anchorSha`, fixed for the run's life), carrying the journal's event seq, blob, commit and
 * the run's status, MACed with the journal key and bound to the repository and run. A journal read
 * cold (a restart, a replica, `forge tick`) older than the anchor is refused
 * (docs/formats.md#journal-anchor).
 *
 * The anchor is written only when needed — when the run's status changes (cancelled, completed), when
 * what holds it changes (`/forge pause`, its budget, a Change Request) and every `ANCHOR_EVERY`
 * events — not at every journal write.
 */
import type { GitHubPort } from "../github/port.js";
import { bound, sameText, type JournalKey, type SealBinding } from "./journal-seal.js";

export const ANCHOR_CHECK_NAME = "Forge journal";
/** Events between two anchors of a running run: how far back a rolled-back journal can go unseen. */
export const ANCHOR_EVERY = 40;

export const anchorExternalId = (runId: string) => `forge-journal:${runId}`;

export interface Anchor {
  /** The anchored journal's `seq` (its last event). */
  seq: number;
  /** The run's status in that journal. */
  status: string;
  /** Blob of its `journal.json`, and the state branch's commit that holds it. */
  blobSha: string;
  commitSha: string;
}

const MARKER = /<!-- forge-anchor (\{[^\n]*\}) -->/;

function anchorMac(key: JournalKey, b: SealBinding, a: Anchor): string {
  return bound(key, "journal anchor v1", b, `${a.seq}\n${a.status}\n${a.blobSha}\n${a.commitSha}`);
}

/** The check run's summary: a sentence for people, and the anchor with its MAC. */
export function anchorSummary(key: JournalKey, b: SealBinding, a: Anchor): string {
  const data = JSON.stringify({ ...a, mac: anchorMac(key, b, a) });
  return [
    `Forge's record of the newest journal of run \`${b.runId}\`: event ${a.seq}, run ${a.status}, commit \`${a.commitSha.slice(0, 12)}\` of \`forge/${b.runId}/_state\`.`,
    "Forge refuses an older journal of this run (docs/formats.md#journal-anchor).",
    "",
    `<!-- forge-anchor ${data} -->`,
  ].join("\n");
}

/** The anchor a check run's summary carries, when its MAC verifies for this repository and run. */
export function parseAnchor(key: JournalKey, b: SealBinding, summary: string | null | undefined): Anchor | null {
  const m = MARKER.exec(summary ?? "");
  if (!m) return null;
  try {
    const v = JSON.parse(m[1]!) as Record<string, unknown>;
    if (typeof v.seq !== "number" || typeof v.status !== "string" || typeof v.blobSha !== "string" || typeof v.commitSha !== "string")
      return null;
    const a: Anchor = { seq: v.seq, status: v.status, blobSha: v.blobSha, commitSha: v.commitSha };
    return typeof v.mac === "string" && sameText(v.mac, anchorMac(key, b, a)) ? a : null;
  } catch {
    return null;
  }
}

const TERMINAL = new Set(["completed", "cancelled"]);

/** Why a journal (its seq and status) is older than the anchor; undefined when it is not. */
export function staleness(journal: { seq: number; status: string }, a: Pick<Anchor, "seq" | "status">): string | undefined {
  if (journal.seq < a.seq)
    return `it is older than the newest journal Forge recorded for this run (event ${journal.seq}, where Forge's anchor says event ${a.seq}, run ${a.status}): someone put back an earlier journal`;
  if (TERMINAL.has(a.status) && journal.status !== a.status)
    return `Forge recorded this run as ${a.status}, and this journal says ${journal.status}: someone put back an earlier journal`;
  return undefined;
}

/** What holds a run, in short: paused by a person, by its budget, by a Change Request ("" when nothing). */
export function holdOf(pause: { manual: boolean; budget?: boolean | undefined; changeRequests: readonly string[] }): string {
  return `${pause.manual ? "p" : ""}${pause.budget ? "b" : ""}${pause.changeRequests.length ? "c" : ""}`;
}

export interface AnchorPoint {
  seq: number;
  status: string;
  /** `holdOf` the journal's pause; a rollback across a pause (a budget's, say) is then refused. */
  hold: string;
}

/** Whether a journal that follows the anchor `last` (none yet: undefined) should be anchored. */
export function anchorDue(journal: AnchorPoint, last: AnchorPoint | undefined): boolean {
  if (!last) return TERMINAL.has(journal.status) || journal.hold !== "" || journal.seq >= ANCHOR_EVERY;
  return journal.status !== last.status || journal.hold !== last.hold || journal.seq - last.seq >= ANCHOR_EVERY;
}

/** The newest anchor among the run's anchor check runs on `headSha` (several replicas may each make one). */
export async function readAnchor(
  port: GitHubPort,
  key: JournalKey,
  b: SealBinding,
  headSha: string,
): Promise<{ anchor: Anchor | null; checkRunId?: number }> {
  const runs = await port.listCheckRuns(headSha, ANCHOR_CHECK_NAME);
  let best: { anchor: Anchor | null; checkRunId?: number } = { anchor: null };
  for (const r of runs) {
    if (r.externalId !== anchorExternalId(b.runId)) continue;
    const a = parseAnchor(key, b, r.summary);
    if (a && (!best.anchor || a.seq > best.anchor.seq)) best = { anchor: a, checkRunId: r.id };
  }
  return best;
}

/** Write the anchor: a new check run, or the one `checkRunId` names. Returns the check run's id. */
export async function writeAnchor(
  port: GitHubPort,
  key: JournalKey,
  b: SealBinding,
  headSha: string,
  a: Anchor,
  checkRunId: number | undefined,
): Promise<number> {
  const fields = {
    status: "completed" as const,
    conclusion: "neutral" as const,
    title: `Run ${b.runId}: journal event ${a.seq} (${a.status})`,
    summary: anchorSummary(key, b, a),
  };
  if (checkRunId !== undefined) {
    await port.updateCheckRun(checkRunId, fields);
    return checkRunId;
  }
  return port.createCheckRun({ ...fields, name: ANCHOR_CHECK_NAME, headSha, externalId: anchorExternalId(b.runId) });
}

/**
 * The run's one anchor check run, made when the run starts (by the one process whose state branch
 * creation won) so that every replica updates it rather than making its own; it anchors nothing
 * until the first anchor is written into it.
 */
export async function openAnchor(port: GitHubPort, b: SealBinding, headSha: string): Promise<number> {
  return port.createCheckRun({
    name: ANCHOR_CHECK_NAME,
    headSha,
    externalId: anchorExternalId(b.runId),
    status: "completed",
    conclusion: "neutral",
    title: `Run ${b.runId}: no journal anchored yet`,
    summary: "The Forge App writes here the journal it last anchored (docs/formats.md#journal-anchor).",
  });
}
