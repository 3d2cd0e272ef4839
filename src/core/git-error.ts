/**
 * A git command that failed, wherever Forge runs git: the local GitHub's repositories, the agent
 * layer's branches, the action's checkout. Each part words the message; the fields are the same.
 */
export class GitError extends Error {
  constructor(
    message: string,
    /** The arguments git was called with (`git <args>`). */
    readonly args: readonly string[],
    /** git's exit code; null when it was killed by a signal. */
    readonly code: number | null,
    /** What git wrote on stderr (masked where the caller holds secrets). */
    readonly stderr: string,
  ) {
    super(message);
    this.name = "GitError";
  }
}

/**
 * What a failed remote git command (fetch, push, ls-remote) says about trying it again:
 * - `refused`: the server answered and said no — a push that is not a fast-forward or lost a race
 *   (`[rejected]`, `[remote rejected]`, `stale info`), a rule or a hook that refused it (GH013
 *   "Repository rule violations", GH006 "Protected branch update failed", `pre-receive hook
 *   declined`), authentication or permission (401, 403, "Permission to … denied", "Invalid username
 *   or token"), a repository or ref that is not there (404, "couldn't find remote ref"). The same
 *   try gets the same answer: never tried again.
 * - `transient`: the network or the server failed on the way — a connection refused, reset or timed
 *   out, a name that did not resolve, an HTTP 5xx (or 408, 429), "the remote end hung up", an early
 *   EOF. It can pass: tried again with the backoff (retry.ts `GIT_REMOTE_BACKOFF`).
 * - `other`: anything else (a bad refspec, a local error): not tried again.
 * A refusal wins when git said both (a refused push also ends with "failed to push some refs").
 * Reads the first 64 KiB of stderr only: git's own text, bounded before any pattern.
 */
export type GitFailureKind = "refused" | "transient" | "other";

const REFUSED: RegExp[] = [
  /\[(?:remote )?rejected\]/,
  /non-fast-forward|\(fetch first\)|stale info|updates were rejected/i,
  /\bGH0\d\d\b|rule violations|protected branch|hook declined/i,
  /returned error: 40[134]\b|\bHTTP 40[134]\b/,
  /authentication failed|invalid username or token|permission to \S+ denied|write access to repository not granted/i,
  /repository not found|couldn't find remote ref|not our ref|no such ref/i,
];

const TRANSIENT: RegExp[] = [
  /returned error: (?:5\d\d|408|429)\b|\bHTTP (?:5\d\d|408|429)\b/,
  /the remote end hung up|unexpected disconnect|early EOF|transfer closed with outstanding read data/i,
  /connection (?:reset|refused|timed out)|timed out|operation too slow|empty reply from server/i,
  /could not resolve (?:host|proxy)|failed to connect to|recv failure|send failure|network is unreachable/i,
  /gnutls_handshake|SSL_read|SSL_ERROR|TLS connection was non-properly terminated/i,
];

export function gitFailureKind(stderr: string): GitFailureKind {
  const text = stderr.slice(0, 65_536);
  if (REFUSED.some((r) => r.test(text))) return "refused";
  if (TRANSIENT.some((r) => r.test(text))) return "transient";
  return "other";
}
