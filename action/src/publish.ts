/**
 * Everything a job publishes is masked, by one function: `Masker.mask` (src/agent/secrets.ts) with
 * the job's masker — the values it registered (the job's token, the model keys, the runtime token,
 * each also as base64 and as the base64 of `x-access-token:<value>`) and every token shape
 * (`ghs_…`, `ghp_…`, `github_pat_…`, `sk-ant-…`, `sk-…`, private keys, basic auth of a token), each
 * replaced by `***`. What goes through it:
 *
 * - pull request titles and bodies (the walkthrough, the status, a Captain's PR) and the live check
 *   run's output: `maskedGitHub`;
 * - the record folder (result.json, walkthrough, events, transcript, question, refinement, Change
 *   Request document, reports), also uploaded as the session artifact: `maskFolder`;
 * - result.json's strings (the question the App posts as a comment, the refinement it carries to the
 *   next dispatch, the error), masked before they are written: `Masker.maskDeep`;
 * - the job report: summary, warnings, error, result (the runner writes the summary and the failure): `maskReport`.
 */
import { writeFile } from "node:fs/promises";
import { readAgentFile } from "../../src/agent/agent-files.js";
import { Masker } from "../../src/agent/secrets.js";
import type { JobGitHub } from "./github.js";
import type { JobReport, MainDeps } from "./job.js";
import { listFiles } from "./task/files.js";

/** Masks token shapes only: a job whose runner registered no values. */
const SHAPES_ONLY = new Masker();

/** The job's masker: the runner's, else one that knows the token shapes only. */
export function maskerOf(deps: Pick<MainDeps, "masker">): Masker {
  return deps.masker ?? SHAPES_ONLY;
}

/** The job's GitHub port with every text it writes masked (PR titles and bodies). */
export function maskedGitHub(github: JobGitHub, masker: Masker): JobGitHub {
  const m = (s: string | undefined) => (s === undefined ? s : masker.mask(s));
  return {
    readFile: (path, ref) => github.readFile(path, ref),
    findOpenPull: (head, base) => github.findOpenPull(head, base),
    createPull: (p) => github.createPull({ ...p, title: masker.mask(p.title), body: masker.mask(p.body) }),
    updatePull: (number, p) =>
      github.updatePull(number, {
        ...(p.title !== undefined ? { title: m(p.title)! } : {}),
        ...(p.body !== undefined ? { body: m(p.body)! } : {}),
      }),
    addLabels: (number, labels) => github.addLabels(number, labels),
    markReadyForReview: (pull) => github.markReadyForReview(pull),
    ...(github.review ? { review: github.review.bind(github) } : {}),
    ...(github.replyToReviewComment
      ? { replyToReviewComment: (pr: number, id: number, body: string) => github.replyToReviewComment!(pr, id, masker.mask(body)) }
      : {}),
    ...(github.requestReviewers ? { requestReviewers: github.requestReviewers.bind(github) } : {}),
    // The live check run shows the agent's tool calls: masked like a PR body.
    ...(github.createCheckRun && github.updateCheckRun
      ? {
          createCheckRun: (c) => github.createCheckRun!({ ...c, title: masker.mask(c.title), summary: masker.mask(c.summary) }),
          updateCheckRun: (id, c) => github.updateCheckRun!(id, { ...c, title: masker.mask(c.title), summary: masker.mask(c.summary) }),
        }
      : {}),
  };
}

/** The report with its texts masked: the summary, warnings and errors the runner publishes, the result's strings. */
export function maskReport<R extends JobReport>(report: R, masker: Masker): R {
  return masker.maskDeep(report);
}

/**
 * Masks every file of a folder in place. Text is read as UTF-8 when it is valid UTF-8, else as
 * Latin-1 (every byte kept as it is), so a binary file keeps its bytes outside what is masked.
 */
export async function maskFolder(dir: string, masker: Masker): Promise<void> {
  for (const file of await listFiles(dir)) {
    // Never through a link (a file swapped for one since the listing is left alone: it is not copied either).
    const buf = await readAgentFile(dir, file, { maxBytes: Number.MAX_SAFE_INTEGER }).catch(() => undefined);
    if (!buf) continue;
    const utf8 = buf.toString("utf8");
    const encoding: BufferEncoding = Buffer.byteLength(utf8, "utf8") === buf.length && !utf8.includes("\uFFFD") ? "utf8" : "latin1";
    const text = encoding === "utf8" ? utf8 : buf.toString("latin1");
    const masked = masker.mask(text);
    if (masked !== text) await writeFile(file, Buffer.from(masked, encoding));
  }
}
