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
      "```sh\nnpm ci        # installs and builds; afterwards `npx forge <command>` works from this folder\nnpm test      # the unit and in-process lanes: minutes, between two changes\nnpm run test:all   # every lane, as CI runs them (.ci/run: npm test, then the processes and release lanes)\n```",
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
});
