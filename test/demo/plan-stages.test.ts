/**
 * How `forge demo` replays a plan folder: the base plan a person commits (overlays taken out, and
 * still a valid plan), and the Captain's files for the run's n-th Change Request (overlay n with the
 * run's CR id, its new tasks, dag.json with overlays 1..n) — which together give back the example.
 */
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadPlan } from "../../src/core/plan/index.js";
import { validatePlan } from "../../src/core/plan/validate.js";
import { DEFAULT_PLAN } from "../../src/demo/run.js";
import { DemoPlanError, loadPlanStages, scriptedEscalations } from "../../src/demo/plan-stages.js";
import { dagSvg } from "../../src/core/render/dag-svg.js";
import { markdownToHtml } from "../../src/core/render/run-report.js";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function materialise(files: Record<string, string>, planId: string): string {
  const tmp = mkdtempSync(path.join(tmpdir(), "forge-demo-plan-"));
  dirs.push(tmp);
  // forge validate wants the folder named after the plan.
  const root = path.join(tmp, planId);
  for (const [p, text] of Object.entries(files)) {
    const rel = p.slice(`.forge/plans/${planId}/`.length);
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), text);
  }
  return root;
}

describe("the demo's plan stages", () => {
  it("the base plan of textkit is valid and has no docs task; the Captain's files restore the example", async () => {
    const stages = await loadPlanStages(DEFAULT_PLAN);
    expect(stages.planId).toBe("textkit");
    expect(stages.overlays).toEqual([
      { id: "overlay-001", cr: "cr-release-1", addedTasks: ["docs"], addedEdges: [{ from: "docs", to: "release" }] },
    ]);
    const base = stages.baseFiles;
    expect(Object.keys(base).some((p) => p.includes("/overlays/") || p.endsWith("/tasks/docs.md"))).toBe(false);
    const baseDir = materialise(base, "textkit");
    expect(validatePlan(await loadPlan(baseDir))).toEqual([]);
    const dag = JSON.parse(base[".forge/plans/textkit/dag.json"]!) as {
      nodes: { id: string; dependencies: string[] }[];
      metadata: { totalTasks: number };
    };
    expect(dag.nodes.find((n) => n.id === "release")!.dependencies).toEqual(["wrap", "template"]);
    expect(dag.metadata.totalTasks).toBe(9);
    expect(dag.nodes.filter((n) => n.id !== "core" && n.id !== "release")).toHaveLength(9);
    expect(dag.nodes.find((n) => n.id === "table")!.dependencies).toEqual(["pad", "truncate"]);

    const captain = stages.captainFiles(1, "cr-release-7");
    expect(captain[".forge/plans/textkit/overlays/overlay-001.md"]).toMatch(/^cr: cr-release-7$/m);
    const fullDir = materialise({ ...base, ...captain }, "textkit");
    expect(validatePlan(await loadPlan(fullDir))).toEqual([]);
    expect(() => stages.captainFiles(2, "cr-x")).toThrow(DemoPlanError);
  });

  it("commits a plan's overlays with it unless its tasks are scripted to raise the Change Requests they answer", async () => {
    // textkit's release escalates once: its one overlay is the Captain's answer, to come.
    const textkit = await loadPlanStages(DEFAULT_PLAN);
    expect([textkit.committed, textkit.toCome.map((o) => o.id)]).toEqual([0, ["overlay-001"]]);
    expect(textkit.testCommands).toEqual(["node --test"]);
    // csv-lite escalates nowhere: the App runs dag.json with its overlay, and so does the demo.
    const csv = await loadPlanStages(path.resolve("examples/plans/csv-lite"));
    expect([csv.committed, csv.toCome]).toEqual([1, []]);
    const root = ".forge/plans/csv-lite";
    expect(Object.keys(csv.baseFiles)).toEqual(expect.arrayContaining([`${root}/overlays/overlay-001.md`, `${root}/tasks/quote.md`]));
    expect(csv.baseFiles[`${root}/dag.json`]).toBe(readFileSync("examples/plans/csv-lite/dag.json", "utf8"));
    expect(validatePlan(await loadPlan(materialise(csv.baseFiles, "csv-lite")))).toEqual([]);
    expect(() => csv.captainFiles(1, "cr-x")).toThrow(/overlay-001, but the plan has 0 overlay\(s\) to come after its 1 committed one/);
    // A plan whose tasks name no test_command is checked by the project's npm test.
    const semver = await loadPlanStages(path.resolve("examples/plans/semver-lite"));
    expect(semver.testCommands).toEqual(["npm test", "npm run typecheck && npm test"]);
  });

  it("counts the escalations a plan's scripted blocks hold", () => {
    const block = (yaml: string) => `---\nid: a\n---\n\n\`\`\`forge-scripted-agent\n${yaml}\n\`\`\`\n`;
    expect(
      scriptedEscalations({
        "tasks/a.md": block("attempts:\n  1: { outcome: escalate }\n  3: escalate"),
        "tasks/b.md": block("default: escalate"),
        "tasks/c.md": block("attempts: [not, a, mapping"),
        "overlays/overlay-001.md": block("default: escalate"),
      }),
    ).toBe(3);
  });

  it("an invalid plan is refused with forge validate's problems", async () => {
    await expect(loadPlanStages(path.resolve("examples/invalid/cycle"))).rejects.toThrow(/does not pass forge validate/);
  });

  it("draws the DAG as SVG and renders Forge's Markdown without fetching anything", () => {
    const svg = dagSvg([
      { id: "a", kind: "task", dependencies: [], status: "MERGED" },
      { id: "r", kind: "refinery", dependencies: ["a"], status: "RUNNING" },
    ]);
    expect(svg).toContain('<g class="node" data-id="r" data-status="RUNNING">');
    expect(svg).toContain("<polygon");
    expect(svg.match(/<path class="edge" data-from="a" data-to="r" d="M[\d.]+,[\d.]+( L[\d.]+,[\d.]+)+"/g)).toHaveLength(1);
    const html = markdownToHtml(
      "## T\n\n| a | b |\n|---|---|\n| `x` | **y** |\n\n```mermaid\nflowchart TD\n```\n\n- one\n---\n<sub>small</sub>",
      (lang) => (lang === "mermaid" ? "<svg/>" : undefined),
    );
    expect(html).toBe(
      "<h3>T</h3>\n<table><thead><tr><th>a</th><th>b</th></tr></thead><tbody><tr><td><code>x</code></td><td><strong>y</strong></td></tr></tbody></table>\n<svg/>\n<ul><li>one</li></ul>\n<hr>\n<p><sub>small</sub></p>",
    );
  });
});
