/**
 * The report's DAG as a person sees it: the HTML report of the textkit plan (twelve nodes, the
 * overlay's `docs` included) opened in a real Chromium. In the browser's own geometry — each box's
 * bounding box, points sampled along each edge as drawn — no edge passes through a box, and every
 * link of the page leads to an element of the page. A screenshot of the DAG is kept
 * (FORGE_ARTIFACTS_DIR, else the temporary folder; docs/images/report-dag.png is one).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser } from "puppeteer-core";
import { afterAll, describe, expect, it } from "vitest";
import { loadPlan } from "../../src/core/plan/index.js";
import { renderReport, type ReportTask } from "../../src/core/render/run-report.js";
import type { TaskStatus } from "../../src/core/schemas/common.js";
import { launchBrowser } from "../helpers/browser.js";

let browser: Browser | undefined;
afterAll(async () => browser?.close());

const STATUS: Record<string, TaskStatus> = { release: "RUNNING", docs: "MERGE_READY", template: "FAILED" };

async function textkitReport(): Promise<string> {
  const plan = await loadPlan(path.resolve("examples/plans/textkit"));
  const tasks: ReportTask[] = plan.dag.data!.nodes.map((n, i) => ({
    id: n.id,
    kind: n.type,
    title: plan.tasks.find((t) => t.data?.id === n.id)?.data?.title ?? n.id,
    dependencies: n.dependencies,
    status: STATUS[n.id] ?? "MERGED",
    attempts: 1,
    pr: i + 2,
  }));
  return renderReport({
    title: "Forge demo: textkit",
    runId: "textkit-0000000",
    planId: "textkit",
    agent: "scripted agent",
    status: "running",
    durationMs: 1000,
    repo: "acme/textkit",
    tasks,
    changeRequests: [],
    followups: [],
    notes: [],
    pulls: tasks.map((t) => ({ number: t.pr!, title: t.title, body: `## ${t.id}\n\nLinks back to [the tracker](#tracker).` })),
    trackerIssue: 1,
    trackerBody: "## Run\n\n```mermaid\nflowchart TD\n```\n",
    log: [],
  });
}

/**
 * Run in the page (as text: the tests are typed without the DOM): the boxes' bounding boxes, each
 * edge sampled every pixel of its length as Chromium draws it, the samples strictly inside a box,
 * and the links that lead to no element of the page.
 */
const IN_THE_PAGE = `(() => {
  const svg = document.querySelector("section svg.forge-dag");
  const boxes = [...svg.querySelectorAll("g.node")].map((g) => {
    const b = g.querySelector("rect, polygon").getBBox();
    return { id: g.getAttribute("data-id"), x: b.x, y: b.y, w: b.width, h: b.height };
  });
  const through = new Set();
  let samples = 0;
  const edges = [...svg.querySelectorAll("path.edge")];
  for (const edge of edges) {
    const length = edge.getTotalLength();
    for (let at = 0; at <= length; at += 1) {
      const pt = edge.getPointAtLength(at);
      samples++;
      for (const b of boxes)
        if (pt.x > b.x + 1 && pt.x < b.x + b.w - 1 && pt.y > b.y + 1 && pt.y < b.y + b.h - 1)
          through.add(edge.getAttribute("data-from") + "→" + edge.getAttribute("data-to") + " through " + b.id);
    }
  }
  const dead = [...document.querySelectorAll("a[href]")]
    .map((a) => a.getAttribute("href"))
    .filter((h) => !h.startsWith("#") || !document.getElementById(h.slice(1)));
  return { boxes: boxes.length, edges: edges.length, samples, through: [...through], dead };
})()`;

describe("the report in Chromium", () => {
  it(
    "draws the DAG with no edge through a box, its links lead inside the page, and a screenshot of it is kept",
    { timeout: 120_000 },
    async () => {
      browser = await launchBrowser();
      const page = await browser.newPage();
      await page.setViewport({ width: 1200, height: 900, deviceScaleFactor: 1 });
      await page.setContent(await textkitReport(), { waitUntil: "load" });

      const found = (await page.evaluate(IN_THE_PAGE)) as {
        boxes: number;
        edges: number;
        samples: number;
        through: string[];
        dead: string[];
      };
      expect(found.boxes).toBe(12);
      // Every dependency of the plan is an edge.
      expect(found.edges).toBe(19);
      expect(found.samples).toBeGreaterThan(1000);
      expect(found.through).toEqual([]);
      expect(found.dead).toEqual([]);

      const dag = (await page.$("section svg.forge-dag"))!;
      const png = Buffer.from(await dag.screenshot({ type: "png" }));
      const dir = process.env.FORGE_ARTIFACTS_DIR ?? tmpdir();
      mkdirSync(dir, { recursive: true });
      const file = path.join(dir, "report-dag.png");
      writeFileSync(file, png);
      // A PNG of the whole drawing, not an empty one.
      expect(png.subarray(1, 4).toString("latin1")).toBe("PNG");
      expect(png.length).toBeGreaterThan(10_000);
      console.log(`report DAG screenshot: ${file}`);
    },
  );
});
