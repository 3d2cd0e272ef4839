/**
 * `forge demo` — the whole of Forge on this machine: the local GitHub, the Forge App (real HTTP,
 * signed webhooks) and the runner executing the real Forge action, running an example plan to the
 * end with a live view, a summary table and an HTML report (src/demo/). Like `forge sim`,
 * it runs in a process of its own (src/cli/programs.ts); every option is checked here, before
 * anything starts, then passed through.
 */
import type { Command } from "commander";
import { validatePlan } from "../../core/plan/validate.js";
import { formatProblem } from "../../core/problems.js";
import { DEMO_AGENTS } from "../../demo/types.js";
import { LATENCY_PROFILE_NAMES } from "../../local-github/latency/profile.js";
import { existingDir, integer, oneOf, positiveSeconds, writableDir } from "../args.js";
import { runLocalGithubProgram } from "../child.js";
import { requireAgentCli, requireClaudeCode, requireCopilotCli, requireGeminiCli } from "../claude-code.js";
import { CLI_EXIT, CliError, type CliIo } from "../io.js";
import type { CommandContext } from "./index.js";
import { displayFile, loadPlanArg } from "./plan-input.js";

interface DemoFlags {
  agent?: string;
  plan?: string;
  out?: string;
  runners?: string;
  timeout?: string;
  latency?: string;
  json?: boolean;
  issues?: boolean;
}

export function registerDemo(program: Command, { io, setExitCode }: CommandContext): void {
  program
    .command("demo")
    .description(
      "Run an example plan end to end on the local GitHub with the Forge App and the Forge action; prints a live view, a summary and the path of an HTML report.",
    )
    .option(
      "--agent <kind>",
      "scripted (default); claude, gemini, opencode, qwen or copilot: the real Claude Code, Gemini CLI, opencode, Qwen Code or GitHub Copilot CLI in every job against a scripted model server (copilot: installed by you, or named by FORGE_COPILOT_BIN); mixed: Claude Code, Codex and Gemini CLI per task (type 1 on claude then codex, type 2 on codex, refineries on gemini), one task moved to Codex by Claude's usage limit",
    )
    .option(
      "--plan <dir>",
      "a plan folder (default: examples/plans/textkit), run on the agents --agent gives; a task naming an agent of its own must name one of those",
    )
    .option("--out <dir>", "where the HTML report and the JSON result go (default: a temporary folder)")
    .option("--runners <n>", "runners available at once (default 4)")
    .option(
      "--timeout <seconds>",
      "give up after this long (default 10 minutes, 20 with a real agent; three times as long with --latency github)",
    )
    .option(
      "--latency <profile>",
      "none (default): the local GitHub answers at once; github: at GitHub's speed — response times, webhook delays, runner queue time",
    )
    .option(
      "--issues",
      "give the plan (default: examples/plans/issue-tree) as an issue tree: /forge plan on its parent issue, main protected by a merge queue; exits 0 when every sub-issue is closed and the final PR merged",
    )
    .option("--json", "print the result as JSON on stdout (the live view goes to stderr)")
    .action(async (opts: DemoFlags) => {
      const problems = await checkFlags(opts, io);
      if (problems.length) {
        // The plan's problems themselves, one line each (as `forge validate` prints them); nothing starts.
        for (const p of problems) io.err(`forge demo: ${p}\n`);
        io.err(
          `forge demo: the plan in ${opts.plan} has ${problems.length} problem${problems.length === 1 ? "" : "s"}; nothing was started\n`,
        );
        setExitCode(CLI_EXIT.PROBLEMS);
        return;
      }
      const args = [
        ...(opts.agent ? ["--agent", opts.agent] : []),
        ...(opts.plan ? ["--plan", opts.plan] : []),
        ...(opts.out ? ["--out", opts.out] : []),
        ...(opts.runners ? ["--runners", opts.runners] : []),
        ...(opts.timeout ? ["--timeout", opts.timeout] : []),
        ...(opts.latency ? ["--latency", opts.latency] : []),
        ...(opts.issues ? ["--issues"] : []),
        ...(opts.json ? ["--json"] : []),
      ];
      const code = await runLocalGithubProgram({
        program: "demo/main",
        args,
        // Relative --plan and --out are relative to where forge was started.
        env: { ...process.env, FORGE_DEMO_CWD: io.cwd, FORGE_DEMO_TTY: process.stdout.isTTY && !opts.json ? "1" : "" },
        stdin: "ignore",
        io,
      });
      setExitCode(code);
    });
}

/** Every option of `forge demo`, checked before the local GitHub starts; the plan's problems (formatted), if any. */
async function checkFlags(opts: DemoFlags, io: CliIo): Promise<string[]> {
  const { cwd } = io;
  if (opts.agent !== undefined) oneOf("--agent", opts.agent, DEMO_AGENTS);
  if (opts.issues && opts.agent !== undefined && opts.agent !== "scripted") throw new CliError("--issues runs the scripted agent only");
  if (opts.agent === "claude" || opts.agent === "mixed") requireClaudeCode(`--agent ${opts.agent}`);
  if (opts.agent === "gemini" || opts.agent === "mixed") requireGeminiCli(`--agent ${opts.agent}`);
  if (opts.agent === "mixed") requireAgentCli("--agent mixed", "Codex", "codex", "@openai/codex");
  if (opts.agent === "opencode") requireAgentCli("--agent opencode", "opencode", "opencode", "opencode-ai");
  if (opts.agent === "qwen") requireAgentCli("--agent qwen", "Qwen Code", "qwen", "@qwen-code/qwen-code");
  if (opts.agent === "copilot") requireCopilotCli("--agent copilot");
  if (opts.runners !== undefined) integer("--runners", opts.runners, 1, 64);
  if (opts.timeout !== undefined) positiveSeconds("--timeout", opts.timeout);
  if (opts.latency !== undefined) oneOf("--latency", opts.latency, LATENCY_PROFILE_NAMES);
  if (opts.out !== undefined) writableDir("--out", opts.out, cwd);
  if (opts.plan === undefined) return [];
  existingDir("--plan", opts.plan, cwd, "folder");
  const plan = opts.plan;
  return validatePlan(await loadPlanArg(plan, io)).map((p) => formatProblem({ ...p, file: displayFile(plan, p.file, io) }));
}
