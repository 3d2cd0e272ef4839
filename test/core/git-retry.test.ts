// Which failures of the runner's remote git can pass (tried again with the backoff) and which are
// refusals (never tried again), from git's own words; and the backoff itself.
import { describe, expect, it } from "vitest";
import { gitFailureKind } from "../../src/core/git-error.js";
import { backoffMs, delayMs, GIT_REMOTE_BACKOFF } from "../../src/core/retry.js";

describe("a failed remote git command, by what git said", () => {
  const transient = [
    "error: RPC failed; HTTP 500 curl 22 The requested URL returned error: 500\nsend-pack: unexpected disconnect while reading sideband packet\nfatal: the remote end hung up unexpectedly",
    "fatal: unable to access 'https://github.com/acme/demo.git/': The requested URL returned error: 502",
    "error: RPC failed; curl 18 transfer closed with outstanding read data remaining",
    "error: RPC failed; curl 56 Recv failure: Connection reset by peer\nfatal: early EOF\nfatal: fetch-pack: invalid index-pack output",
    "fatal: unable to access 'https://github.com/acme/demo.git/': Failed to connect to github.com port 443 after 130 ms: Connection refused",
    "fatal: unable to access 'https://github.com/acme/demo.git/': Could not resolve host: github.com",
    "fatal: unable to access 'https://github.com/acme/demo.git/': Operation timed out after 300000 milliseconds with 0 out of 0 bytes received",
    "fatal: unable to access 'https://github.com/acme/demo.git/': gnutls_handshake() failed: The TLS connection was non-properly terminated.",
    "error: RPC failed; curl 52 Empty reply from server",
    "fatal: the remote end hung up unexpectedly",
  ];
  for (const text of transient) it(`can pass: ${text.split("\n")[0]}`, () => expect(gitFailureKind(text)).toBe("transient"));

  const refused = [
    " ! [rejected]        HEAD -> forge/r1/t1/1 (non-fast-forward)\nerror: failed to push some refs to 'https://github.com/acme/demo.git'",
    " ! [rejected]        HEAD -> forge/r1/t1/1 (fetch first)\nerror: failed to push some refs",
    "remote: error: GH013: Repository rule violations found for refs/heads/main.\nremote: - Changes must be made through a pull request.\n ! [remote rejected] HEAD -> main (push declined due to repository rule violations)",
    "remote: error: GH006: Protected branch update failed for refs/heads/main.\n ! [remote rejected] main -> main (protected branch hook declined)",
    "remote: Permission to acme/demo.git denied to github-actions[bot].\nfatal: unable to access 'https://github.com/acme/demo.git/': The requested URL returned error: 403",
    "remote: Invalid username or token. Password authentication is not supported for Git operations.\nfatal: Authentication failed for 'https://github.com/acme/demo.git/'",
    "fatal: unable to access 'https://github.com/acme/demo.git/': The requested URL returned error: 401",
    "remote: Repository not found.\nfatal: repository 'https://github.com/acme/gone.git/' not found",
    "fatal: couldn't find remote ref refs/heads/forge/r1/t9/1",
    // A refusal wins over what git says after it.
    " ! [remote rejected] HEAD -> x (pre-receive hook declined)\nerror: failed to push some refs\nfatal: the remote end hung up unexpectedly",
  ];
  for (const text of refused) it(`is refused: ${text.split("\n")[0]}`, () => expect(gitFailureKind(text)).toBe("refused"));

  it("anything else is neither: not tried again", () => {
    expect(gitFailureKind("fatal: invalid refspec 'nope'")).toBe("other");
    expect(gitFailureKind("")).toBe("other");
  });

  it("reads a bounded part of what git said", () => {
    expect(gitFailureKind(`${"x".repeat(70_000)}The requested URL returned error: 500`)).toBe("other");
  });
});

describe("the backoff", () => {
  it("is the executor loop's for git: 2 s base, 60 s cap, 5 tries", () => {
    expect(GIT_REMOTE_BACKOFF).toEqual({ baseMs: 2_000, maxMs: 60_000, attempts: 5 });
  });

  it("doubles from the base, adds up to one base of jitter, and stops at the cap", () => {
    expect([0, 1, 2, 3, 4, 5].map((k) => delayMs(GIT_REMOTE_BACKOFF, k, 0))).toEqual([2_000, 4_000, 8_000, 16_000, 32_000, 60_000]);
    expect(delayMs(GIT_REMOTE_BACKOFF, 0, 0.5)).toBe(3_000);
    expect(delayMs(GIT_REMOTE_BACKOFF, 4, 0.999)).toBe(33_998);
    expect(delayMs(GIT_REMOTE_BACKOFF, 5, 0.999)).toBe(60_000);
  });

  it("keeps the task retries' delays (a hash for the jitter) as they were", () => {
    const config = { retry_backoff: { base_seconds: 2, max_seconds: 60 } };
    const d = backoffMs(config, 1, "r1:t1:2");
    expect(d).toBeGreaterThanOrEqual(4_000);
    expect(d).toBeLessThan(6_000);
    expect(backoffMs(config, 1, "r1:t1:2")).toBe(d);
    expect(backoffMs(config, 10, "r1:t1:2")).toBe(60_000);
  });
});
