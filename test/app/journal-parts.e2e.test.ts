/**
 * A run whose journal is kept in parts (docs/formats.md#journal-parts), through the App on the local
 * GitHub: small part sizes make a 7-task plan split as a 1,000-task one would. The run completes;
 * journal.json carries only its live tasks and names its parts; another process joins them to the
 * same run the App holds, mid-run and at the end, and `forge report` counts every task; a part
 * someone else rewrote is refused.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Octokit } from "@octokit/rest";
import { afterEach, describe, expect, it } from "vitest";
import { journalKeyFrom } from "../../src/app/journal-seal.js";
import { JournalRefusedError, RunStore } from "../../src/app/run-store.js";
import type { Journal } from "../../src/core/journal.js";
import { JOURNAL_FILE, stateBranch } from "../../src/core/layout.js";
import { OctokitPort } from "../../src/github/octokit-port.js";
import { runForge } from "../cli/helpers.js";
import { planFiles } from "../helpers/plan-files.js";
import { OWNER, REPO, startHarness, type Harness } from "./helpers.js";
import type { Script } from "./scripted-runner.js";

let h: Harness | undefined;
afterEach(async () => {
  const done = h;
  h = undefined;
  await done?.close();
}, 60_000);

const PARTS = { splitAt: 3, partSize: 2, liveMax: 1 };

describe("a run's journal in parts", () => {
  it(
    "runs to completion; journal.json carries only live tasks; another reader joins the parts; a rewritten part is refused",
    { timeout: 120_000 },
    async () => {
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      h = await startHarness((id): Script => ({ kind: "success", ...(id === "g" ? { gate } : {}) }), { journalParts: PARTS });
      const g = h;
      await g.pushFiles(planFiles("big", { a: [], b: ["a"], c: ["a"], d: ["b", "c"], e: [], f: ["e"], g: ["d", "f"] }), "Add plan");
      const running = await g.waitFor((j) => j.tasks.find((t) => t.id === "g")!.status === "RUNNING");
      const runId = running.runId;
      await g.app.forge.idle();

      const octokit = new Octokit({ baseUrl: g.sim.apiUrl, auth: g.sim.control.installationToken(g.installationId) });
      const port = new OctokitPort(octokit as never, OWNER, REPO);
      const key = journalKeyFrom(g.privateKey);
      const raw = async () => {
        const file = await port.readFile(JOURNAL_FILE, stateBranch(runId));
        return JSON.parse(file!.content) as { journal: Journal; split?: { nodes: number; parts: string[]; live: number[] } };
      };

      // Mid-run: journal.json names 4 parts of 2 nodes and carries g (RUNNING) among its few live tasks.
      const mid = await raw();
      expect(mid.split?.nodes).toBe(7);
      expect(mid.split?.parts).toHaveLength(4);
      expect(mid.journal.tasks.length).toBeLessThanOrEqual(PARTS.liveMax + 1);
      expect(mid.journal.tasks.map((t) => t.id)).toContain("g");
      // Another process (a replica, a restarted App) reads the parts and has the whole run.
      const other = await new RunStore(port, key, PARTS).load(runId);
      expect(other!.state.journal.tasks.map((t) => [t.id, t.status])).toEqual(running.tasks.map((t) => [t.id, t.status]));
      expect(other!.state.journal.plan.nodes.map((n) => n.id)).toEqual(["a", "b", "c", "d", "e", "f", "g"]);

      release();
      const done = await g.waitFor((j) => j.status === "completed");
      expect(done.merged).toBe(7);
      await g.app.forge.idle();
      const end = await new RunStore(port, key, PARTS).load(runId);
      expect(end!.state.journal.status).toBe("completed");
      expect(end!.state.journal.tasks.every((t) => t.status === "MERGED")).toBe(true);
      const { data: listing } = await octokit.rest.repos.getContent({ owner: OWNER, repo: REPO, path: "parts", ref: stateBranch(runId) });
      expect(Array.isArray(listing) && listing.length).toBeGreaterThanOrEqual(4);

      // `forge report`, as a person reads it through the API, joins the parts too: every task counted.
      const out = mkdtempSync(path.join(tmpdir(), "forge-report-parts-"));
      const saved = { GITHUB_TOKEN: process.env.GITHUB_TOKEN, GITHUB_API_URL: process.env.GITHUB_API_URL };
      try {
        process.env.GITHUB_TOKEN = g.sim.control.userToken("octocat");
        process.env.GITHUB_API_URL = g.sim.apiUrl;
        const r = await runForge(["report", runId, "--repo", `${OWNER}/${REPO}`, "--out", out], out);
        expect(r.err).toBe("");
        expect(r.code).toBe(0);
        expect(r.out).toContain("| Tasks merged | 7 of 7 |");
        const figures = JSON.parse(readFileSync(path.join(out, `forge-report-${runId}.json`), "utf8")) as {
          tasks: number;
          tasksMerged: number;
        };
        expect([figures.tasks, figures.tasksMerged]).toEqual([7, 7]);
      } finally {
        for (const [k, v] of Object.entries(saved)) {
          if (v === undefined) delete process.env[k];
          else process.env[k] = v;
        }
        rmSync(out, { recursive: true, force: true });
      }

      // Anything with contents: write can rewrite a part; its hash no longer matches its name: refused.
      const last = await raw();
      const victim = `parts/${last.split!.parts[0]}.json`;
      const file = await port.readFile(victim, stateBranch(runId));
      const forged = file!.content.replace('"retries":0', '"retries":9');
      expect(forged).not.toBe(file!.content);
      await g.user.rest.repos.createOrUpdateFileContents({
        owner: OWNER,
        repo: REPO,
        path: victim,
        branch: stateBranch(runId),
        message: "tamper",
        content: Buffer.from(forged).toString("base64"),
        sha: file!.blobSha,
      });
      await expect(new RunStore(port, key, PARTS).load(runId)).rejects.toBeInstanceOf(JournalRefusedError);
      await expect(new RunStore(port, key, PARTS).load(runId)).rejects.toThrow(/does not match its hash/);
    },
  );
});
