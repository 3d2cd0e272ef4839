/**
 * README.md stays true to the code: the `.github/forge.yml` reference is exactly the table generated
 * from the config schema (every field, its default and its description), every `/forge` command and
 * every CLI command is documented, and the setup and test commands CI relies on are unchanged.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SLASH_COMMANDS } from "../../src/app/commands.js";
import { COMMANDS as CLI_COMMANDS } from "../../src/cli/commands/index.js";
import { Command } from "commander";
import { configFields, configReference } from "./config-reference.js";
import { readmeSample, sampleDrift, shape } from "./readme-sample.js";

const readme = readFileSync("README.md", "utf8");

describe("README.md", () => {
  it("holds the generated .github/forge.yml reference (regenerate: npx tsx test/demo/config-reference.ts --write)", () => {
    expect(readme).toContain(configReference());
    const fields = configFields().map((f) => f.path);
    expect(fields).toEqual(
      expect.arrayContaining([
        "max_parallel_agents",
        "timeouts.agent_minutes",
        "agent.adapter",
        "followups.keywords",
        "retry_backoff.base_seconds",
      ]),
    );
    for (const f of fields) expect(readme).toContain(`| \`${f}\` |`);
  });

  it("keeps the setup and test commands", () => {
    expect(readme).toContain(
      "```sh\nnpm ci        # installs and builds; afterwards `npx forge <command>` works from this folder\nnpm run install:agent-clis   # opencode and Qwen Code, for their real-binary tests and demos (test/agent-clis)\nnpm test      # the unit and in-process lanes: minutes, between two changes\nnpm run test:all   # every lane, as CI runs them (.ci/run: npm test, then the processes and release lanes)\n```",
    );
    expect(readme).toContain("npx forge demo");
  });

  it("documents every /forge command and every CLI command", () => {
    for (const c of SLASH_COMMANDS) expect(readme).toContain(`/forge ${c}`);
    const program = new Command();
    for (const register of CLI_COMMANDS) register(program, { io: { out: () => {}, err: () => {}, cwd: "." }, setExitCode: () => {} });
    const names = program.commands.map((c) => c.name());
    expect(names).toContain("demo");
    for (const n of names) expect(readme).toContain(`| \`forge ${n}`);
  });

  it("holds a sample of the demo's output, the whole summary included (test/demo/demo.test.ts checks it against a run)", () => {
    const sample = readmeSample(readme);
    for (const line of [
      "Task      Kind      Status",
      "Follow-up _followup-1 (from slugify)",
      "CI fix: ",
      "Jobs: ",
      "The project's own CI",
      "OK: run textkit-",
    ])
      expect(
        sample.some((l) => l.startsWith(line)),
        line,
      ).toBe(true);
  });

  it("reads the sample as the demo's output's shape: times, counts, shas and elided text aside", () => {
    expect(shape("  78.7s ▕█░░▏  1/11  case  RUNNING → FAILED  attempt 1  single: Error: x")).toBe(
      "Ns ▕▏ case RUNNING → FAILED attempt N single: Error: x",
    );
    expect(shape("case      task      MERGED  2         #7   185.0 s  1 retry")).toBe(shape("case task MERGED 3 #9 12.0 s"));
    expect(shape("Report: /tmp/forge-demo-a1B2/forge-demo-textkit-67279bf.html")).toBe("Report: …/forge-demo-textkit-SHA.html");
    const live = "  1.0s ▕░▏  0/2  run textkit-abcdef0 started\n  2.0s ▕█▏  1/2  a  RUNNING → MERGED  attempt 1\n";
    const summaryText = "Task  Kind\na     task\nOK: run textkit-abcdef0 completed in 3.1 s.\n";
    const sample = [
      "   1.5s ▕░░▏  0/2  run textkit-1234567 started",
      "…",
      "Task  Kind",
      "a  task",
      "OK: run textkit-7654321 completed in 9.9 s.",
    ];
    expect(sampleDrift(sample, live, summaryText)).toEqual([]);
    expect(sampleDrift(["   2.0s ▕█▏  1/2  a  RUNNING → … attempt 1", ...sample.slice(2)], live, summaryText)).toEqual([]);
    // A line the demo does not print, lines out of order, a summary line left out.
    expect(sampleDrift(["OK: run textkit-1234567 completed in 1 s.", "Task  Kind", "a  task", "b  task"], live, summaryText)).toEqual([
      "not in the demo's output (in this order): Task  Kind",
      "not in the demo's output (in this order): a  task",
      "not in the demo's output (in this order): b  task",
      "the summary's line is missing from the sample: Task  Kind",
      "the summary's line is missing from the sample: a     task",
    ]);
  });
});
