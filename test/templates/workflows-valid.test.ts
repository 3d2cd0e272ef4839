// Every workflow file Forge ships or seeds — the templates users install (templates/), the
// examples, the demo project's own CI — is one GitHub accepts: GitHub's own parser
// (@actions/workflow-parser) reads each without an error.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CI_WORKFLOW, TEST_WORKFLOW } from "../../src/demo/project.js";
import { checkWorkflow } from "../../src/local-github/runner/workflow.js";

/** The YAML files under a folder, at any depth. */
function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.ya?ml$/.test(e.name))
    .map((e) => path.join(e.parentPath, e.name));
}

const shipped = [...yamlFiles("templates"), ...yamlFiles("examples")].map((file) => ({ file, text: readFileSync(file, "utf8") }));
const seeded = [
  { file: "demo .github/workflows/ci.yml", text: CI_WORKFLOW },
  { file: "demo .github/workflows/test.yml", text: TEST_WORKFLOW },
];

describe("Forge's workflow files, read by GitHub's parser", () => {
  it("finds the templates users install", () => {
    expect(shipped.map((s) => s.file)).toEqual(
      expect.arrayContaining(["templates/workflows/forge-agent.yml", "templates/workflows/forge-tick.yml"]),
    );
  });

  for (const { file, text } of [...shipped, ...seeded]) {
    it(`${file} has no error`, async () => {
      const checked = await checkWorkflow(text, `.github/workflows/${path.basename(file)}`);
      expect(checked.ok ? [] : checked.error.problems.map((p) => p.message)).toEqual([]);
    });
  }
});
