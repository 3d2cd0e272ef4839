// What both Captain jobs share: their report, the Captain agent under the runner's supervision, the
// agent's work staged with only the plan folder kept, `forge validate`'s problems, and the PR.
import path from "node:path";
import { EXIT_CODES } from "../../../src/core/exit-codes.js";
import type { ForgeConfig } from "../../../src/core/schemas/config.js";
import type { AgentRunOutcome } from "../agent-runner.js";
import type { MainDeps, MainInput } from "../job.js";
import { isProtectedPath } from "../protected-paths.js";
import { exitCodeOfStop, supervise } from "../supervisor.js";

export interface CaptainReport {
  kind: "captain";
  exitCode: number;
  branch: string;
  headSha?: string;
  overlay?: string;
  /** A plan Captain: the plan folder it wrote. */
  plan?: string;
  prNumber?: number;
  prUrl?: string;
  error?: string;
  warnings: string[];
  summary: string;
}

type AgentRequest = Parameters<MainDeps["agent"]["run"]>[0];

/**
 * Runs the Captain agent in `workdir` under the runner's heartbeats and time limits, its session in
 * `sessionDir` (the walkthrough there too); its exit code and errors.
 */
export async function runCaptainAgent(
  config: ForgeConfig,
  deps: MainDeps,
  captain: Pick<AgentRequest, "taskContext" | "workdir" | "sessionDir">,
): Promise<{ exitCode: number; errors: string[] }> {
  const request = { ...captain, agentType: "captain", walkthroughPath: path.join(captain.sessionDir, "walkthrough.md") } as const;
  const supervised = await supervise(
    (ctl) =>
      deps.agent.run({ ...request, signal: ctl.signal, onProgress: (p) => ctl.onProgress(p) }).catch((err: unknown): AgentRunOutcome => ({
        exitCode: EXIT_CODES.FAILURE,
        error: `the agent runner failed: ${(err as Error).message}`,
      })),
    {
      heartbeatMs: config.heartbeat_interval_seconds * 1000,
      missedBeats: Math.max(1, Math.round(config.stale_threshold_seconds / config.heartbeat_interval_seconds)),
      idleMs: config.timeouts.idle_minutes * 60_000,
      wallClockMs: config.timeouts.agent_minutes * 60_000,
      ...(deps.cancel ? { cancel: deps.cancel } : {}),
      ...(deps.now ? { now: deps.now } : {}),
    },
  );
  return {
    exitCode: supervised.stopped ? exitCodeOfStop(supervised.stopped.reason) : supervised.outcome.exitCode,
    errors: supervised.stopped
      ? [`the agent was stopped: ${supervised.stopped.detail}`]
      : supervised.outcome.error
        ? [supervised.outcome.error]
        : [],
  };
}

/**
 * Stages the agent's work on `branch` keeping only `dir/`: anything else (workflows included) is put
 * back, with a warning. Returns every staged change before the filter and the kept ones.
 */
export async function stageOnly(
  git: MainDeps["git"],
  branch: string,
  preHead: string,
  dir: string,
  warnings: string[],
): Promise<{ staged: Array<{ status: string; path: string }>; kept: Array<{ status: string; path: string }> }> {
  await git.run(["symbolic-ref", "HEAD", `refs/heads/${branch}`]);
  if ((await git.head()) !== preHead) await git.run(["reset", "--soft", "--quiet", preHead]);
  await git.run(["add", "--all", "--", "."]);
  const staged = await git.stagedChanges(preHead);
  const outside = staged.filter((c) => !c.path.startsWith(`${dir}/`));
  for (const c of outside) {
    if (c.status.startsWith("A")) await git.run(["rm", "--cached", "--quiet", "--force", "--", c.path]);
    else await git.run(["restore", `--source=${preHead}`, "--staged", "--", c.path]);
  }
  if (outside.length)
    warnings.push(
      `changes outside ${dir}/ were left out${outside.some((c) => isProtectedPath(c.path)) ? " (protected paths among them)" : ""}: ${outside.map((c) => c.path).join(", ")}`,
    );
  return { staged, kept: staged.filter((c) => c.path.startsWith(`${dir}/`)) };
}

/** `forge validate`'s problems with the plan folder, one line each; a folder holding a link is refused unread. */
export { planProblems } from "../../../src/agent/stages/captain.js";

/**
 * The Captain's PR, opened or (a re-run) updated in place: its intro (ending with a blank line), the plan files it changes as a
 * table, warnings, and a link to the job. A PR that cannot be written is a warning, not a failure:
 * the commit is on the branch already.
 */
export async function upsertCaptainPull(args: {
  github: MainDeps["github"];
  input: MainInput;
  branch: string;
  base: string;
  title: string;
  intro: string[];
  changes: { path: string; status: string }[];
  warnings: string[];
}): Promise<{ number: number; url: string } | undefined> {
  const { github, branch, base, title, warnings } = args;
  const body = [
    ...args.intro,
    "| File | Change |",
    "| --- | --- |",
    ...args.changes.map((c) => `| \`${c.path}\` | ${c.status.slice(0, 1)} |`),
    "",
    ...(warnings.length ? ["**Warnings**", "", ...warnings.map((w) => `- ${w}`), ""] : []),
    ...(args.input.jobUrl ? [`[The job](${args.input.jobUrl})`] : []),
  ].join("\n");
  const open = await github.findOpenPull(branch, base).catch(() => undefined);
  if (open) {
    await github
      .updatePull(open.number, { title, body })
      .catch((err: unknown) => void warnings.push(`could not update the pull request: ${(err as Error).message}`));
    return open;
  }
  return github.createPull({ head: branch, base, title, body, draft: false }).catch((err: unknown) => {
    warnings.push(`could not open the pull request: ${(err as Error).message}`);
    return undefined;
  });
}
