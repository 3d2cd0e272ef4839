/**
 * The architecture's arrows are lint rules (eslint.config.js): a wrong import fails `npm run lint`,
 * hence CI. Each case lints a one-line file placed in a part of the tree with ESLint's own API.
 */
import { ESLint } from "eslint";
import { beforeAll, describe, expect, it } from "vitest";

const eslint = new ESLint({ cwd: process.cwd() });

async function errors(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(`${code}\nexport {};\n`, { filePath });
  return result!.messages.filter((m) => m.ruleId === "no-restricted-imports").map((m) => m.message);
}

describe("the architecture's arrows", () => {
  // The first lint builds the type-aware program (tens of seconds on a loaded machine): once, here.
  beforeAll(() => errors("src/core/probe.ts", ""), 180_000);

  const wrong: [string, string, RegExp][] = [
    ["src/core/probe.ts", `import { Engine } from "../app/engine/index.js";`, /The core imports nothing of the App/],
    ["src/core/probe.ts", `import { OctokitPort } from "../github/octokit-port.js";`, /The core imports nothing/],
    ["src/core/probe.ts", `import { runStages } from "../agent/stages/index.js";`, /The core imports nothing/],
    ["src/core/probe.ts", `import { createSim } from "../local-github/server.js";`, /The core imports nothing/],
    ["src/core/decide/probe.ts", `import type { Probot } from "probot";`, /no Probot/],
    ["src/app/probe.ts", `import { Octokit } from "@octokit/rest";`, /Only src\/github/],
    ["src/app/probe.ts", `import { runStages } from "../agent/stages/index.js";`, /The App reaches the agent runner/],
    ["src/agent/probe.ts", `import { Engine } from "../app/engine/index.js";`, /never reaches into the App/],
    ["action/src/probe.ts", `import { Engine } from "../../src/app/engine/index.js";`, /reaches the App only through the core/],
    ["action/src/probe.ts", `import { Octokit } from "@octokit/rest";`, /Only src\/github/],
    ["src/github/probe.ts", `import { Engine } from "../app/engine/index.js";`, /knows only the core/],
    ["src/agent/probe.ts", `import matter from "gray-matter";`, /readFrontMatter/],
    ["src/local-github/probe.ts", `import { Engine } from "../app/engine/index.js";`, /The local GitHub is a GitHub stand-in/],
    ["src/local-github/rest/probe.ts", `import { runStages } from "../../agent/stages/index.js";`, /imports only the core/],
    ["src/local-github/runner/probe.ts", `import { runDemo } from "../../demo/run.js";`, /imports only the core/],
    ["src/local-github/probe.ts", `import { main } from "../fake-agents/scripted-agent.js";`, /imports only the core/],
    ["src/local-github/probe.ts", `import { main } from "../cli/main.js";`, /imports only the core/],
    ["src/fake-agents/probe.ts", `import { createSim } from "../local-github/server.js";`, /The fake agents import only the core/],
    [
      "src/fake-agents/responses/probe.ts",
      `import { spawnAgent } from "../../agent/spawn/index.js";`,
      /The fake agents import only the core/,
    ],
    ["src/fake-agents/probe.ts", `import { Octokit } from "@octokit/rest";`, /Only src\/github/],
    ["src/demo/probe.ts", `import { runStages } from "../agent/stages/index.js";`, /The demo runs the agent layer/],
    ["src/app/probe.ts", `import { runDemo } from "../demo/run.js";`, /Only the CLI and tests start the demo/],
    [
      "src/agent/probe.ts",
      `import { main } from "../fake-agents/scripted-agent.js";`,
      /Only the CLI and tests start the demo or a fake agent/,
    ],
    ["action/src/probe.ts", `import { main } from "../../src/fake-agents/scripted-agent.js";`, /Only the CLI and tests start/],
  ];
  for (const [file, code, message] of wrong) {
    it(`refuses in ${file}: ${code}`, async () => {
      const found = await errors(file, code);
      expect(found.length, `no error for ${code}`).toBeGreaterThan(0);
      expect(found.join("\n")).toMatch(message);
    });
  }

  const right: [string, string][] = [
    ["src/app/probe.ts", `import { decide } from "../core/decide/index.js";`],
    ["src/app/probe.ts", `import { OctokitPort } from "../github/octokit-port.js";`],
    ["action/src/probe.ts", `import { branchName } from "../../src/core/decide/index.js";`],
    ["src/github/probe.ts", `import { Octokit } from "@octokit/rest";`],
    ["src/core/front-matter.ts", `import matter from "gray-matter";`],
    ["src/local-github/probe.ts", `import { GitError } from "../core/git-error.js";`],
    ["src/fake-agents/probe.ts", `import { EXIT_CODES } from "../core/exit-codes.js";`],
    ["src/demo/probe.ts", `import { startForgeServer } from "../app/server.js";`],
    ["src/demo/probe.ts", `import { createSim } from "../local-github/server.js";`],
    ["src/demo/probe.ts", `import { startModelServer } from "../fake-agents/model-server.js";`],
    ["src/demo/probe.ts", `import { Octokit } from "@octokit/rest";`],
    ["src/cli/probe.ts", `import { LATENCY_PROFILE_NAMES } from "../local-github/latency/profile.js";`],
  ];
  for (const [file, code] of right) {
    it(`allows in ${file}: ${code}`, async () => {
      expect(await errors(file, code)).toEqual([]);
    });
  }
});
