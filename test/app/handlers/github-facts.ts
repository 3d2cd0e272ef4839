/**
 * The repository, the App and the run every handler test works on, and GitHub's answers about its
 * files (contents, refs, the sealed journal) — what both the GitHub mock and the tests name.
 */
import { journalKeyFrom, sealJournal } from "../../../src/app/journal-seal.js";
import type { StoredRun } from "../../../src/app/run-store.js";
import { appKeys } from "../../local-github/support/helpers.js";

export const API = "https://api.github.com";
export const OWNER = "acme";
export const REPO = "widgets";
export const APP_ID = 1001;
export const APP_SLUG = "forge";
export const INSTALLATION_ID = 42;
/** The App's clock in every test: journals and events are reproducible. */
export const NOW = Date.parse("2026-11-22T09:00:00.000Z");

export const PLAN_ID = "mini";
export const PLAN_SHA = "c0ffee0000000000000000000000000000000001";
export const RUN_ID = `${PLAN_ID}-${PLAN_SHA.slice(0, 7)}`;
export const STATE_BRANCH = `forge/${RUN_ID}/_state`;
export const INTEGRATION = `forge/${RUN_ID}/_integration`;
export const INTEGRATION_SHA = "1111111111111111111111111111111111111111";
/** An attempt's work commit, the runner's record commit on top of it, and the commit that merged its PR. */
export const WORK = "a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0";
export const RECORD = "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1";

export const MERGE = "3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e";
export const branchOf = (taskId: string, attempt: number) => `forge/${RUN_ID}/${taskId}/${attempt}`;
export const R = `/repos/${OWNER}/${REPO}`;

export const JOURNAL_SHA = "b10b000000000000000000000000000000000001";

/** The test App's journal key: derived from its private key, as a real App's is. */
export const JOURNAL_KEY = journalKeyFrom(appKeys().privateKeyPem);
/** The repository's id as the fixtures' GitHub answers it (`GET /repos/{owner}/{repo}`). */
export const REPOSITORY_ID = 77;
/** `journal.json`'s text for `state`, sealed as the App seals it in this repository. */
export const sealed = (state: StoredRun, repositoryId = REPOSITORY_ID) =>
  sealJournal(JOURNAL_KEY, state, { repositoryId, runId: state.journal.runId });

/** A blob sha for a file's text (any 40 hex digits are fine here; this one is stable per text). */
export function blobSha(content: string): string {
  let h = 0;
  for (const ch of content) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return h.toString(16).padStart(8, "0").repeat(5);
}

export function contentEntry(path: string, name: string) {
  const url = `${API}${R}/contents/${path}`;
  return {
    name: name || path.split("/").pop()!,
    path,
    sha: blobSha(path),
    size: 0,
    url,
    git_url: `${API}${R}/git/blobs/${blobSha(path)}`,
    html_url: `https://github.com/${OWNER}/${REPO}/blob/main/${path}`,
    download_url: null,
    _links: { self: url, git: null, html: null },
  };
}

export function contentFile(path: string, content: string, sha: string) {
  return {
    ...contentEntry(path, path.split("/").pop()!),
    type: "file",
    encoding: "base64",
    size: Buffer.byteLength(content),
    sha,
    content: Buffer.from(content, "utf8").toString("base64"),
  };
}

export function fileCommit(path: string, blob: string, commit: string) {
  return {
    content: {
      ...contentEntry(path, path.split("/").pop()!),
      sha: blob,
      type: "file",
      download_url: `https://raw.githubusercontent.com/${OWNER}/${REPO}/HEAD/${path}`,
      _links: {
        self: `${API}${R}/contents/${path}`,
        git: `${API}${R}/git/blobs/${blob}`,
        html: `https://github.com/${OWNER}/${REPO}/blob/HEAD/${path}`,
      },
    },
    commit: { sha: commit, message: "forge: journal", parents: [] },
  };
}

export function gitRef(branch: string, sha: string) {
  return {
    ref: `refs/heads/${branch}`,
    node_id: "REF_1",
    url: `${API}${R}/git/refs/heads/${branch}`,
    object: { type: "commit", sha, url: `${API}${R}/git/commits/${sha}` },
  };
}

/** The replica name of the App the handler tests start. */
export const TEST_REPLICA = "forge-test";

/** Every pending effect of `state` leased to `owner` until a minute after NOW. */
export function ownLeases(state: StoredRun, owner = TEST_REPLICA, until = NOW + 60_000): StoredRun["leases"] {
  return Object.fromEntries(state.journal.outbox.map((e) => [e.key, { owner, until: new Date(until).toISOString() }]));
}
