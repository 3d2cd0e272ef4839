/**
 * The process `forge demo` starts (through tsx, like `forge sim`): parses the options, runs the
 * demo with its live view, prints the summary table, and exits 0 only when every task is MERGED
 * and the final PR exists.
 *   --agent scripted|claude|gemini|opencode|qwen|copilot|mixed   --plan <dir>   --out <dir>   --runners <n>   --timeout <seconds>   --json
 *   --latency none|github     the local GitHub at once (default) or at GitHub's speed (../latency/README.md)
 *   --issues                  the plan (default examples/plans/issue-tree) as an issue tree: /forge plan on
 *                             its parent, the merge queue on main (issues.ts); exits 0 only when every
 *                             sub-issue is closed, the parent carries the summary and the final PR merged
 */
import path from "node:path";
import { parseArgs } from "node:util";
import { isLatencyProfileName, LATENCY_PROFILE_NAMES } from "../local-github/latency/profile.js";
import { issueSummary, runIssueDemo } from "./issues.js";
import { DemoPlanError } from "./plan-stages.js";
import { runDemo, type DemoAgent } from "./run.js";
import { DEMO_AGENTS } from "./types.js";
import { summary } from "./summary.js";

async function cli(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      agent: { type: "string", default: "scripted" },
      plan: { type: "string" },
      out: { type: "string" },
      runners: { type: "string" },
      timeout: { type: "string" },
      latency: { type: "string", default: "none" },
      json: { type: "boolean", default: false },
      issues: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(
      `Usage: forge demo [--agent ${DEMO_AGENTS.join("|")}] [--plan <dir>] [--out <dir>] [--runners <n>] [--timeout <seconds>] [--latency none|github] [--issues] [--json]\n` +
        "  --agent   who runs the jobs: the scripted agent (default); one real CLI in every job against its scripted model server;\n" +
        "            copilot is GitHub Copilot CLI, which you install (npm i -g @github/copilot@1.0.102) or name in FORGE_COPILOT_BIN;\n" +
        "            or mixed: Claude Code, Codex and Gemini CLI per task (type 1 on claude then codex, type 2 on codex,\n" +
        "            refineries on gemini), one task moved from Claude Code to Codex by Claude's usage limit\n" +
        "  --plan    the plan folder (default examples/plans/textkit); its tasks run on the agents --agent names\n",
    );
    return 0;
  }
  if (!(DEMO_AGENTS as readonly string[]).includes(values.agent)) {
    process.stderr.write(
      `forge demo: --agent must be ${DEMO_AGENTS.slice(0, -1).join(", ")} or ${DEMO_AGENTS.at(-1)}, not ${values.agent}\n`,
    );
    return 2;
  }
  if (!isLatencyProfileName(values.latency)) {
    process.stderr.write(`forge demo: --latency must be ${LATENCY_PROFILE_NAMES.join(" or ")}, not ${values.latency}\n`);
    return 2;
  }
  const cwd = process.env.FORGE_DEMO_CWD ?? process.cwd();
  const json = values.json;
  try {
    if (values.issues) {
      if (values.agent !== "scripted") {
        process.stderr.write("forge demo: --issues runs the scripted agent only\n");
        return 2;
      }
      const result = await runIssueDemo({
        ...(values.plan ? { planDir: path.resolve(cwd, values.plan) } : {}),
        ...(values.runners ? { runners: Number(values.runners) } : {}),
        ...(values.timeout ? { timeoutMs: Number(values.timeout) * 1000 } : {}),
        latency: values.latency,
        write: (t) => void (json ? process.stderr : process.stdout).write(t),
        tty: false,
      });
      process.stdout.write(json ? `${JSON.stringify(result, null, 2)}\n` : issueSummary(result));
      return result.ok ? 0 : 1;
    }
    const result = await runDemo({
      agent: values.agent as DemoAgent,
      ...(values.plan ? { planDir: path.resolve(cwd, values.plan) } : {}),
      ...(values.out ? { outDir: path.resolve(cwd, values.out) } : {}),
      ...(values.runners ? { runners: Number(values.runners) } : {}),
      ...(values.timeout ? { timeoutMs: Number(values.timeout) * 1000 } : {}),
      latency: values.latency,
      // With --json the live view goes to stderr and stdout carries one JSON document.
      write: (t) => void (json ? process.stderr : process.stdout).write(t),
      tty: !json && (process.stdout.isTTY === true || process.env.FORGE_DEMO_TTY === "1"),
    });
    if (json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    else process.stdout.write(summary(result));
    return result.ok ? 0 : 1;
  } catch (e) {
    if (e instanceof DemoPlanError) {
      process.stderr.write(`forge demo: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
}

process.exitCode = await cli(process.argv.slice(2));
