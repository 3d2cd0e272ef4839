/**
 * What a chaos run has at the local GitHub, for a test clock that must skip ahead while the local
 * GitHub's latency holds requests on that clock (src/local-github/latency/profile.ts): a request
 * asleep there goes on only once the clock moves, so the clients waiting for it are not at work —
 * but a request still on its way there (or its answer on its way back) is, and the clock must not
 * skip over it. Requests of this process are counted from their start to their answer's head by
 * undici's diagnostics channels (every Octokit and `fetch` of the process goes through undici): the
 * world waits for the clock only when each of them is asleep at the local GitHub.
 */
import diagnostics from "node:diagnostics_channel";

export interface AtGitHub {
  /** Requests of this process to the local GitHub sent and not yet answered. */
  readonly inFlight: number;
  close(): void;
}

type Message = { request: { origin?: string | URL } };

/** Counts this process's requests to `origin` (the local GitHub's URL) until `close`. */
export function requestsAtGitHub(origin: string): AtGitHub {
  const own = new URL(origin).origin;
  const live = new WeakSet<object>();
  let n = 0;
  const mine = (m: unknown) => {
    const o = (m as Message).request.origin;
    return o !== undefined && new URL(String(o)).origin === own;
  };
  const sent = (m: unknown) => {
    if (!mine(m)) return;
    live.add((m as Message).request);
    n++;
  };
  const answered = (m: unknown) => {
    const r = (m as Message).request;
    if (!live.has(r)) return;
    live.delete(r);
    n--;
  };
  diagnostics.subscribe("undici:request:create", sent);
  diagnostics.subscribe("undici:request:headers", answered);
  diagnostics.subscribe("undici:request:error", answered);
  return {
    get inFlight() {
      return n;
    },
    close() {
      diagnostics.unsubscribe("undici:request:create", sent);
      diagnostics.unsubscribe("undici:request:headers", answered);
      diagnostics.unsubscribe("undici:request:error", answered);
    },
  };
}
