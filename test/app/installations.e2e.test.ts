/**
 * The App's view of where it is installed follows GitHub: `installation` and
 * `installation_repositories` change it at once, and a repository installed again works without a
 * restart (the old installation's tokens are gone with it).
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Journal } from "../../src/core/journal.js";
import { LABELS } from "../../src/core/layout.js";
import { planFor } from "../chaos/harness.js";
import { planFiles } from "../helpers/plan-files.js";
import { appJwt } from "../local-github/support/helpers.js";
import { FULL, OWNER, REPO, startHarness, type Harness } from "./helpers.js";

let h: Harness | undefined;
afterEach(async () => {
  const done = h;
  h = undefined;
  await done?.close();
}, 60_000);

describe("installations", () => {
  it("uninstalled and installed again: the next plan runs to completion without restarting the App", { timeout: 120_000 }, async () => {
    h = await startHarness(() => ({ kind: "success" }));
    // The App learns of the repository from the installation event, before any other webhook.
    await h.sim.idle();
    expect(h.app.forge.runtimes.get(FULL)?.installationId).toBe(h.installationId);

    h.sim.control.uninstall(h.installationId, "octocat");
    await h.sim.idle();
    expect(h.app.forge.runtimes.has(FULL)).toBe(false);

    const again = h.sim.control.install(h.appId, OWNER, [FULL]);
    await h.sim.idle();
    expect(h.app.forge.runtimes.get(FULL)?.installationId).toBe(again.id);

    const plan = await planFor(1, 2);
    await h.pushFiles(plan.files, "Add the plan");
    const done = await h.waitFor((j) => j.status === "completed", 100_000);
    expect(done.tasks.map((t) => t.status)).toEqual(["MERGED", "MERGED"]);
    expect(h.sim.violations).toEqual([]);
  });

  it(
    "a reconcile pass finds the installations and repositories by itself, and forgets an uninstalled one",
    { timeout: 60_000 },
    async () => {
      h = await startHarness(() => ({ kind: "success" }));
      await h.sim.idle();
      // Forget everything, as a restarted process knows nothing.
      h.app.forge.runtimes.clear();
      await h.app.forge.tick();
      expect([...h.app.forge.runtimes.keys()]).toEqual([FULL]);
      // Uninstalled while the App missed the webhook: the next pass forgets the repository.
      const webhookUrl = h.app.webhookUrl;
      h.sim.control.setAppWebhookUrl(h.appId, "http://127.0.0.1:9/down");
      h.sim.control.uninstall(h.installationId, "octocat");
      await h.sim.idle();
      h.sim.control.setAppWebhookUrl(h.appId, webhookUrl);
      expect(h.app.forge.runtimes.has(FULL)).toBe(true);
      await h.app.forge.tick();
      expect(h.app.forge.runtimes.has(FULL)).toBe(false);
    },
  );

  it(
    "suspended mid-run: its tokens answer 403 and the App stops, saying so; unsuspended, it reconciles and the run completes",
    { timeout: 120_000 },
    async () => {
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      h = await startHarness((id) => ({ kind: "success", ...(id === "a" ? { gate } : {}) }));
      const plan = await planFor(1, 2);
      await h.pushFiles(plan.files, "Add the plan");
      await h.waitFor((j) => j.tasks.some((t) => t.status === "RUNNING"));
      await h.app.forge.idle();
      const token = h.sim.control.installationToken(h.installationId);

      h.sim.control.suspend(h.installationId, "octocat");
      await h.sim.idle();
      expect(h.sim.control.deliveries({ event: "installation", action: "suspend" })).toHaveLength(1);
      expect(h.app.forge.runtimes.has(FULL)).toBe(false);
      // "This installation has been suspended": its tokens, old and new, are refused.
      const asApp = await fetch(`${h.sim.apiUrl}/repos/${FULL}`, { headers: { authorization: `token ${token}` } });
      expect(asApp.status).toBe(403);
      expect(((await asApp.json()) as { message: string }).message).toBe("This installation has been suspended");

      // The job ends while the App hears nothing: its webhooks are not sent to a suspended installation.
      const before = h.sim.control.deliveries({ event: "workflow_run" }).length;
      release();
      await h.sim.idle();
      await new Promise((r) => setTimeout(r, 500));
      await h.sim.idle();
      expect(h.sim.control.deliveries({ event: "workflow_run" }).length).toBe(before);

      h.sim.control.unsuspend(h.installationId, "octocat");
      await h.sim.idle();
      expect(h.sim.control.deliveries({ event: "installation", action: "unsuspend" })).toHaveLength(1);
      const done = await h.waitFor((j) => j.status === "completed", 100_000);
      expect(done.tasks.map((t) => t.status)).toEqual(["MERGED", "MERGED"]);
      // Both installation events, and everything else, as GitHub's description says.
      expect(h.sim.violations).toEqual([]);
    },
  );
});

describe("a deleted installation", () => {
  it(
    "deleted mid-run: its tokens answer 401 and new ones 404, Forge calls nothing with them and logs the runs that stop; installed again, the run resumes and /forge retry carries a held task on",
    { timeout: 120_000 },
    async () => {
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      h = await startHarness((id, attempt) =>
        id === "a"
          ? { kind: "success", gate }
          : attempt === 1
            ? { kind: "exit", code: 2, error: "spawn depth exhausted" }
            : { kind: "success" },
      );
      const task = (j: Journal, id: string) => j.tasks.find((t) => t.id === id)!;
      // The App's warnings, as its log has them.
      const warned: string[] = [];
      const log = h.app.probot.log as unknown as { child: (...a: unknown[]) => { warn: (...a: unknown[]) => unknown } };
      const child = log.child.bind(log);
      log.child = (...a: unknown[]) => {
        const c = child(...a);
        const warn = c.warn.bind(c);
        c.warn = (...args: unknown[]) => {
          warned.push(JSON.stringify(args));
          return warn(...args);
        };
        return c;
      };
      await h.pushFiles(planFiles("mini", { a: [], b: [] }), "Add plan");
      const running = await h.waitFor((j) => task(j, "a").status === "RUNNING" && task(j, "b").status === "FAILED");
      expect(task(running, "b").attempt?.hold).toBe("fatal");
      await h.app.forge.idle();
      const token = h.sim.control.installationToken(h.installationId);

      h.sim.control.uninstall(h.installationId, "octocat");
      await h.sim.idle();
      expect(h.sim.control.deliveries({ event: "installation", action: "deleted" })).toHaveLength(1);
      expect(h.app.forge.runtimes.has(FULL)).toBe(false);
      expect(warned.join("\n")).toContain("installation deleted: Forge no longer acts on its repositories");
      expect(warned.join("\n")).toContain(`${FULL}#${running.runId}`);
      // GitHub's answers for a deleted installation: its tokens 401 "Bad credentials", a new token 404.
      const asApp = await fetch(`${h.sim.apiUrl}/repos/${FULL}`, { headers: { authorization: `token ${token}` } });
      expect([asApp.status, ((await asApp.json()) as { message: string }).message]).toEqual([401, "Bad credentials"]);
      const minted = await fetch(`${h.sim.apiUrl}/app/installations/${h.installationId}/access_tokens`, {
        method: "POST",
        headers: { authorization: `Bearer ${appJwt(h.appId, h.privateKey)}` },
      });
      expect(minted.status).toBe(404);
      // What GitHub answers from here on (the probes above aside).
      h.sim.core.served.clear();

      // The job ends meanwhile (its own token works): no webhook reaches the App, and the App calls nothing.
      release();
      await h.sim.idle();
      await h.advance(10 * 60_000);
      await h.sim.idle();
      const served = [...h.sim.core.served];
      expect(served.filter((x) => / 401$/.test(x) || x === "apps/create-installation-access-token 404")).toEqual([]);
      expect(h.app.forge.runtimes.has(FULL)).toBe(false);

      // Installed again: the run is reconciled at once (the ended job's result read), and a writer's
      // /forge retry carries the held task on.
      h.sim.control.install(h.appId, OWNER, [FULL]);
      await h.sim.idle();
      const resumed = await h.waitFor((j) => task(j, "a").status === "MERGED");
      expect(task(resumed, "b")).toMatchObject({ status: "FAILED", attempts: 1 });
      const { data: trackers } = await h.user.rest.issues.listForRepo({ owner: OWNER, repo: REPO, state: "all", labels: LABELS.tracker });
      await h.user.rest.issues.createComment({ owner: OWNER, repo: REPO, issue_number: trackers[0]!.number, body: "/forge retry b" });
      const done = await h.waitFor((j) => j.status === "completed", 100_000);
      expect(done.tasks.map((t) => t.status)).toEqual(["MERGED", "MERGED"]);
      expect(h.sim.violations).toEqual([]);
    },
  );
});
