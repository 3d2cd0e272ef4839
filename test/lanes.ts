/**
 * The test lanes, by what a test file starts (vitest.config.ts makes each a Vitest project with its
 * own workers and timeouts; CONTRIBUTING.md says which lane a new test goes into). Every test file is
 * in exactly one lane, and a `unit` file imports nothing that starts a server or a process:
 * test/architecture/lanes.test.ts checks both.
 *
 * - `unit`: in memory — no server, no process, no git (temporary files at most; nock is in memory).
 * - `in-process`: servers and repositories in the test's own process — the local GitHub, the App
 *   (its Probot, its HTTP server), a loopback server — and git, which the local GitHub itself runs
 *   (with the shell steps of its repositories' CI).
 * - `processes`: starts programs other than git, itself or through the local GitHub's runner —
 *   Forge's CLI, the built action, an agent (a shell script, the fake, the scripted one, the real
 *   Claude Code or Codex CLI), Chromium, sudo.
 * - `release`: what a release is judged by — the demos, the packed package, the chaos scenarios.
 *
 * `npm test` runs `unit` and `in-process`; `npm run test:all` (and CI) runs every lane.
 */
export const LANE_NAMES = ["unit", "in-process", "processes", "release"] as const;
export type LaneName = (typeof LANE_NAMES)[number];

export const LANES: Record<LaneName, string[]> = {
  unit: [
    "test/core/**/*.test.ts",
    "test/architecture/*.test.ts",
    "test/templates/*.test.ts",
    "test/github/pacing.test.ts",
    "test/github/workflow-runs.test.ts",
    "test/action/dispatch-check.test.ts",
    "test/action/github.test.ts",
    "test/action/render.test.ts",
    "test/action/steering.test.ts",
    "test/action/supervisor.test.ts",
    "test/action/templates.test.ts",
    "test/action/walkthrough.test.ts",
    "test/agent/adapters.test.ts",
    "test/agent/prompts.test.ts",
    "test/agent/rate-limit.test.ts",
    "test/agent/secrets.test.ts",
    "test/agent/walkthrough.test.ts",
    "test/app/leases.test.ts",
    "test/app/tracker.test.ts",
    "test/app/tracker-cache.property.test.ts",
    "test/cli/graph.test.ts",
    "test/cli/schemas.test.ts",
    "test/cli/validate.test.ts",
    "test/demo/captain-agent.test.ts",
    "test/demo/plan-stages.test.ts",
    "test/demo/readme.test.ts",
    "test/local-github/runner/expressions.test.ts",
    "test/local-github/runner/workflow.test.ts",
    "test/security/pinned-config.test.ts",
    "test/security/steering.test.ts",
  ],
  "in-process": [
    // The App on the local GitHub over real HTTP (startHarness), or in Probot with GitHub mocked by nock.
    "test/app/*.e2e.test.ts",
    "test/app/handlers/*.test.ts",
    "test/app/plan-source.test.ts",
    // These import the handler fixtures, which load the App into Probot.
    "test/app/engine.test.ts",
    "test/app/journal-anchor.test.ts",
    "test/app/one-writer.test.ts",
    "test/app/red-ci-at-gate.test.ts",
    "test/app/review-at-merge.test.ts",
    "test/security/merge-target.test.ts",
    "test/chaos/regressions.test.ts",
    "test/cli/doctor.test.ts",
    "test/cli/id-ref-names.test.ts",
    "test/cli/report.test.ts",
    "test/github/pull-with-files.test.ts",
    "test/local-github/conformance.test.ts",
    "test/local-github/faults.test.ts",
    "test/local-github/rate-limits.test.ts",
    "test/local-github/size-limits.test.ts",
    "test/local-github/pagination-links.test.ts",
    "test/local-github/fixtures.test.ts",
    "test/local-github/git-http.test.ts",
    "test/local-github/git.test.ts",
    "test/local-github/graphql.test.ts",
    "test/local-github/issue-roles.test.ts",
    "test/local-github/latency-profile.test.ts",
    "test/local-github/latency.test.ts",
    "test/local-github/octokit-flow.test.ts",
    "test/local-github/probot.test.ts",
    "test/local-github/regressions.test.ts",
    "test/local-github/workflow-triggers.test.ts",
    "test/local-github/invalid-workflows.test.ts",
    "test/fake-agents/model-server.test.ts",
    "test/fake-agents/responses-server.test.ts",
    "test/security/ci-input.test.ts",
    "test/security/commands.test.ts",
    "test/security/doctor-env.test.ts",
    "test/security/forged-journal.test.ts",
    "test/security/installed-page.test.ts",
    "test/security/journal-binding.test.ts",
    "test/security/own-jobs.test.ts",
    "test/security/plan-issue-edit.test.ts",
    "test/security/protected-paths.test.ts",
    "test/security/refinery-hold.test.ts",
    "test/security/render-as-data.test.ts",
    "test/security/replayed-commands.test.ts",
    "test/security/state-branch-ruleset.test.ts",
    "test/agent/model-proxy.test.ts",
    // git on real repositories, nothing else started.
    "test/action/captain.test.ts",
    "test/action/git.test.ts",
    "test/agent/branches.test.ts",
    "test/cli/init.test.ts",
  ],
  processes: [
    // The action's jobs with shell-script agents, the built action, the sim runner running it.
    "test/action/budget.test.ts",
    "test/action/claude-e2e.test.ts",
    "test/action/dist.test.ts",
    "test/action/forge-cli.test.ts",
    "test/action/live-check.test.ts",
    "test/action/liveness.test.ts",
    "test/action/main.test.ts",
    "test/action/observability.test.ts",
    "test/action/runner.test.ts",
    "test/action/sim-e2e.test.ts",
    "test/action/stage-pushes.test.ts",
    "test/action/telemetry.test.ts",
    "test/action/tick.e2e.test.ts",
    // The fake agent, forge from source, the real Claude Code and Codex CLIs.
    "test/agent/claude-real.test.ts",
    "test/agent/cli.test.ts",
    "test/agent/codex.test.ts",
    "test/agent/codex-real.test.ts",
    "test/agent/hierarchy-service.test.ts",
    "test/agent/isolation.test.ts",
    "test/agent/spawn.test.ts",
    "test/agent/spend-real.test.ts",
    "test/agent/stages.test.ts",
    "test/agent/stages-refinery.test.ts",
    "test/agent/sub-worktree.test.ts",
    "test/cli/bad-args.test.ts",
    "test/cli/bin.test.ts",
    "test/demo/claude-script.test.ts",
    "test/demo/claude-script-real.test.ts",
    "test/local-github/main.test.ts",
    "test/fake-agents/claude-code.test.ts",
    "test/fake-agents/scripted-agent.test.ts",
    "test/local-github/runner/executor.test.ts",
    "test/local-github/runner/executor-stops.test.ts",
    "test/local-github/runner/pool.test.ts",
    "test/local-github/runner/sim-executor.test.ts",
    // The agent as its own OS user (sudo, useradd), its attacks on the runner's git and files.
    "test/security/agent-git.test.ts",
    "test/security/agent-git-drivers.test.ts",
    "test/security/agent-probe.test.ts",
    "test/security/agent-probe-e2e.test.ts",
    "test/security/agent-processes.test.ts",
    "test/security/agent-report-links.test.ts",
    "test/security/bounds.test.ts",
    "test/security/front-matter.test.ts",
    "test/security/masking.test.ts",
    "test/security/model-proxy.test.ts",
    // Chromium.
    "test/app/setup.browser.test.ts",
    "test/onboarding/first-run.e2e.test.ts",
  ],
  release: ["test/demo/demo.test.ts", "test/demo/demo-claude.test.ts", "test/package/pack.test.ts", "test/chaos/chaos.test.ts"],
};
