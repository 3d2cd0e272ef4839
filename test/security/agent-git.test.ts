/**
 * Attack: the agent shares the checkout with the runner. Before, the runner staged, committed and
 * pushed inside the agent's `.git` with the job token in the environment of every git process: a
 * `core.fsmonitor` command, a hook (`--no-verify` stops only three), `core.hooksPath`, a filter
 * driver — all set by the agent — ran with the token; and `origin` (or `pushurl`, or
 * `url.<x>.insteadOf`) re-pointed by the agent received the push and its credentials.
 *
 * Now local git commands of the runner run with no credential in their environment, hooks,
 * fsmonitor and signing off and no global or system config; fetches and pushes run in the runner's
 * own repository against the URL it built, with the token only in that one process's environment.
 * The agent below plants every route and records what each one saw.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Git } from "../../action/src/git.js";
import { agentWalkthrough, makeWorld, sh, type World } from "../action/world.js";
import { agentEnv, commandAgent, JOB_URL, runJob } from "../action/job.js";

const TOKEN = "ghs_probeTokenA1b2C3d4E5f6G7h8I9j0";
let world: World | undefined;
afterEach(() => {
  world?.cleanup();
  world = undefined;
});

const HOOKS = [
  "pre-commit",
  "post-commit",
  "pre-push",
  "reference-transaction",
  "post-checkout",
  "post-merge",
  "post-rewrite",
  "pre-auto-gc",
];

function probeScript(probe: string, originUrl: string): string {
  const hook = (file: string, name: string) =>
    `printf '#!/bin/sh\\nenv > %s/%s.env\\n' '${probe}' '${name}' > '${file}' && chmod +x '${file}'`;
  return [
    "set -e",
    `mkdir -p '${probe}/hooks' .git/hooks .git/info`,
    ...HOOKS.map((h) => hook(`.git/hooks/${h}`, `hook-${h}`)),
    ...HOOKS.map((h) => hook(`${probe}/hooks/${h}`, `hookspath-${h}`)),
    `git config core.hooksPath '${probe}/hooks'`,
    `printf '#!/bin/sh\\nenv > %s/fsmonitor.env\\nexit 1\\n' '${probe}' > '${probe}/fsmonitor' && chmod +x '${probe}/fsmonitor'`,
    `git config core.fsmonitor '${probe}/fsmonitor'`,
    `git config filter.evil.clean "sh -c 'env > ${probe}/filter.env; cat'"`,
    `git config filter.evil.smudge "sh -c 'env > ${probe}/filter.env; cat'"`,
    `echo '* filter=evil' > .git/info/attributes`,
    `git init --quiet --bare '${probe}/evil.git'`,
    `git config remote.origin.url 'file://${probe}/evil.git'`,
    `git config remote.origin.pushurl 'file://${probe}/evil.git'`,
    `git config 'url.file://${probe}/evil.git.insteadOf' '${originUrl}'`,
    `git config credential.helper "!sh -c 'env > ${probe}/credential.env'"`,
    `git config core.askPass '${probe}/fsmonitor'`,
    `git config commit.gpgSign true`,
    `git config gpg.program '${probe}/fsmonitor'`,
    "mkdir -p src && printf 'hello\\n' > src/out.txt",
    `cat > "$FORGE_WALKTHROUGH_PATH" <<'WT'\n${agentWalkthrough()}WT`,
  ].join("\n");
}

describe("the runner's git never runs the agent's configuration with the token", () => {
  it("hooks, hooksPath, fsmonitor, filters, credential helpers and a re-pointed origin/pushurl/insteadOf: none sees the token, the push goes where GitHub said", async () => {
    const w = (world = makeWorld());
    const probe = path.join(w.dir, "probe");
    const agent = commandAgent(w, probeScript(probe, w.originUrl), { name: "probe-agent", env: agentEnv(w.dir) });
    const git = new Git({
      dir: w.workspace,
      remote: w.originUrl,
      token: TOKEN,
      identity: { name: "github-actions[bot]", email: "41898282+github-actions[bot]@users.noreply.github.com" },
      tempDir: w.dir,
    });
    const report = await runJob(w, agent, { input: { jobUrl: JOB_URL }, deps: { git } });
    if (report.kind !== "attempt") throw new Error(report.kind);
    expect(report.exitCode, report.result.error).toBe(0);

    // The work reached the real remote; the agent's remote received nothing.
    expect(sh(w.origin, ["rev-parse", `refs/heads/${w.branch}`])).toBe(report.headSha);
    expect(w.show(report.headSha, "src/out.txt")).toBe("hello\n");
    expect(sh(path.join(probe, "evil.git"), ["for-each-ref"])).toBe("");

    // No hook ran (through .git/hooks or core.hooksPath), nor fsmonitor, the credential helper, askpass or gpg.
    const seen = readdirSync(probe).filter((f) => f.endsWith(".env"));
    expect(seen.filter((f) => f.startsWith("hook"))).toEqual([]);
    expect(seen).not.toContain("fsmonitor.env");
    expect(seen).not.toContain("credential.env");
    // Nor the filter driver: the repository's configuration is the runner's again before each of its
    // commands (agent-git-drivers.test.ts tries every driver).
    expect(seen).not.toContain("filter.env");
    for (const f of seen) expect(readFileSync(path.join(probe, f), "utf8")).not.toContain(TOKEN);
    expect(existsSync(path.join(probe, "evil.git"))).toBe(true);
  });
});
