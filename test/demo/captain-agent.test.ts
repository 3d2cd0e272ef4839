/**
 * The demo's Captain, as the Forge action runs it (action/src/captain.ts): the scripted agent and the
 * Claude Code script both answer a `_captain-<crId>` stage prompt by writing the overlay the task
 * names — from the demo's plan folder, with the run's CR id — so that the amended plan passes
 * `forge validate`; with no overlay left to answer with they fail (exit 1) and write nothing.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { stagePrompt } from "../../src/agent/stages/index.js";
import { loadPlan } from "../../src/core/plan/index.js";
import { validatePlan } from "../../src/core/plan/validate.js";
import { demoClaudeScript } from "../../src/demo/claude-script.js";
import { captain } from "../../src/demo/demo-agent.js";
import { loadPlanStages } from "../../src/demo/plan-stages.js";
import { DEFAULT_PLAN } from "../../src/demo/run.js";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A checkout of the demo repository's default branch: the base plan, as the person committed it. */
async function checkout(): Promise<string> {
  const dir = mkdtempSync(path.join(tmpdir(), "forge-demo-captain-"));
  dirs.push(dir);
  for (const [rel, text] of Object.entries((await loadPlanStages(DEFAULT_PLAN)).baseFiles)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), text);
  }
  return dir;
}

/** The write stage's prompt of a Captain dispatch, with the task text captainJob gives it. */
function captainPrompt(workdir: string, overlay: string): string {
  const task = `# Amend plan textkit for Change Request cr-release-3\n\n- \`.forge/plans/textkit/overlays/${overlay}\` with the overlay frontmatter (\`cr: cr-release-3\`)\n\n\`forge validate .forge/plans/textkit\` must pass.`;
  const reports = {
    walkthrough: "/s/walkthrough.md",
    question: "/s/question.md",
    refinement: "/s/refinement.md",
    changeRequest: "/s/change-request.md",
  } as Parameters<typeof stagePrompt>[2];
  return stagePrompt(
    {
      runId: "textkit-1",
      taskId: "_captain-cr-release-3",
      attempt: 1,
      task,
      goal: "Change Request cr-release-3: the release needs an API reference",
      planDir: ".forge/plans/textkit",
    },
    "write",
    reports,
    "Write the overlay.",
    workdir,
  );
}

describe("the demo's Captain", () => {
  it("the scripted agent writes overlay-001 with the run's CR id; the amended plan is valid", async () => {
    const dir = await checkout();
    const planDir = path.join(dir, ".forge/plans/textkit");
    expect(validatePlan(await loadPlan(planDir))).toEqual([]);
    const said: string[] = [];
    expect(await captain("cr-release-3", DEFAULT_PLAN, captainPrompt(dir, "overlay-001.md"), dir, (l) => said.push(l))).toBe(0);
    expect(readFileSync(path.join(planDir, "overlays/overlay-001.md"), "utf8")).toMatch(/^cr: cr-release-3$/m);
    expect(existsSync(path.join(planDir, "tasks/docs.md"))).toBe(true);
    const dag = JSON.parse(readFileSync(path.join(planDir, "dag.json"), "utf8")) as { nodes: { id: string; dependencies: string[] }[] };
    expect(dag.nodes.find((n) => n.id === "release")!.dependencies).toContain("docs");
    expect(validatePlan(await loadPlan(planDir))).toEqual([]);
    expect(said.join("\n")).toContain("Answering Change Request cr-release-3 with overlay-001");
  });

  it("the scripted agent fails, writing nothing, when the plan folder has no overlay for the CR", async () => {
    const dir = await checkout();
    const said: string[] = [];
    expect(await captain("cr-release-3", DEFAULT_PLAN, captainPrompt(dir, "overlay-002.md"), dir, (l) => said.push(l))).toBe(1);
    expect(said.join("\n")).toMatch(/no overlay-002/);
    expect(existsSync(path.join(dir, ".forge/plans/textkit/overlays"))).toBe(false);
    expect(await captain("cr-release-3", undefined, captainPrompt(dir, "overlay-001.md"), dir, () => {})).toBe(1);
  });

  it("the Claude Code script reads dag.json, then writes the overlay files through tool calls", async () => {
    const dir = await checkout();
    const stages = await loadPlanStages(DEFAULT_PLAN);
    const script = demoClaudeScript(12, (n, crId) => (n <= stages.overlays.length ? stages.captainFiles(n, crId) : `no overlay-${n}`));
    const ask = (turn: number, overlay: string) =>
      script[turn]!({ turn, body: { messages: [{ role: "user", content: captainPrompt(dir, overlay) }] }, toolResults: [] });
    const root = path.join(dir, ".forge/plans/textkit");
    expect(ask(0, "overlay-001.md").toolCalls).toEqual([{ name: "Read", input: { file_path: path.join(root, "dag.json") } }]);
    const writes = ask(1, "overlay-001.md").toolCalls!;
    expect(writes.every((c) => c.name === "Write")).toBe(true);
    const files = Object.fromEntries(
      writes.map((c) => [path.relative(dir, (c.input as { file_path: string }).file_path), (c.input as { content: string }).content]),
    );
    expect(Object.keys(files).sort()).toEqual([
      ".forge/plans/textkit/dag.json",
      ".forge/plans/textkit/overlays/overlay-001.md",
      ".forge/plans/textkit/tasks/docs.md",
    ]);
    expect(files[".forge/plans/textkit/overlays/overlay-001.md"]).toMatch(/^cr: cr-release-3$/m);
    expect(ask(2, "overlay-001.md").text).toMatch(/FORGE_EXIT=0$/);
    // Nothing to answer with: the session ends with exit 1 and no tool call.
    expect(ask(0, "overlay-002.md")).toEqual({ text: "Error: no overlay-2\nFORGE_EXIT=1" });
  });
});
