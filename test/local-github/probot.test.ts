// A real Probot 14 app receiving signed webhooks from the local GitHub and answering through it:
// Probot authenticates as the App (JWT → installation token) against the GHES-style /api/v3 and
// its webhook middleware verifies every signature. The App also receives the events it caused.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Probot, ProbotOctokit, createNodeMiddleware } from "probot";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSim, type Sim } from "../../src/local-github/server.js";
import { appKeys } from "./support/helpers.js";

let sim: Sim;
let server: Server;
const seen: Array<{ name: string; action?: string; senderType: string; installation?: number }> = [];

beforeAll(async () => {
  sim = await createSim();
  await sim.control.createRepo({ owner: "acme", name: "widgets", files: { "README.md": "hi\n" }, collaborators: { alice: "write" } });
  const keys = appKeys();
  const app = sim.control.registerApp({
    slug: "forge-probot",
    publicKeyPem: keys.publicKeyPem,
    webhookUrl: "http://127.0.0.1:1/unset",
    webhookSecret: "probot-secret",
    permissions: { issues: "write", contents: "read" },
    events: ["issues", "issue_comment"],
  });
  sim.control.install(app.id, "acme", ["acme/widgets"]);

  const probot = new Probot({
    appId: app.id,
    privateKey: keys.privateKeyPem,
    secret: "probot-secret",
    baseUrl: sim.apiUrl,
    logLevel: "fatal",
    // Tests disable retries and throttling (function form, so the defaults are replaced).
    Octokit: ProbotOctokit.defaults((instanceOptions: object) => ({
      ...instanceOptions,
      retry: { enabled: false },
      throttle: { enabled: false },
    })),
  });
  const middleware = await createNodeMiddleware(
    (a) => {
      a.onAny(async (context) => {
        const p = context.payload as { action?: string; sender: { type: string }; installation?: { id: number } };
        seen.push({ name: context.name, action: p.action, senderType: p.sender.type, installation: p.installation?.id });
      });
      a.on("issues.opened", async (context) => {
        await context.octokit.rest.issues.createComment(context.issue({ body: "Forge saw this issue." }));
      });
    },
    { probot },
  );
  server = createServer((req, res) => {
    void middleware(req, res, () => {
      res.writeHead(404);
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  sim.control.setAppWebhookUrl(app.id, `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/github/webhooks`);
});

afterAll(async () => {
  await sim?.close();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
});

describe("a real Probot app", () => {
  it("verifies the signed webhooks, authenticates as the installation, and receives its own events", async () => {
    const opened = await sim.control.openIssue("alice", "acme/widgets", "Please run", "body");
    expect(opened.status).toBe(201);
    const number = (opened.body as { number: number }).number;
    for (let i = 0; i < 200 && !seen.some((s) => s.name === "issue_comment"); i++) {
      await sim.idle();
      await new Promise((r) => setTimeout(r, 10));
    }
    await sim.idle();
    expect(seen[0]).toMatchObject({ name: "issues", action: "opened", senderType: "User" });
    // The App's own comment comes back to it, sent by its bot.
    expect(seen).toContainEqual(expect.objectContaining({ name: "issue_comment", action: "created", senderType: "Bot" }));
    const comments = await sim.control.api("alice", "GET", `/repos/acme/widgets/issues/${number}/comments`);
    expect((comments.body as Array<{ body: string; user: { login: string } }>).map((c) => [c.user.login, c.body])).toEqual([
      ["forge-probot[bot]", "Forge saw this issue."],
    ]);
    // Probot answered 2xx to every delivery (a bad signature would have been a 400).
    // (installation.created went to the placeholder URL set before Probot started, and failed.)
    expect(sim.control.deliveries({ event: "installation" })[0]?.status).toBe("failed");
    const deliveries = sim.control.deliveries().filter((d) => d.event !== "installation");
    expect(deliveries.map((d) => `${d.event}.${d.action}`)).toEqual(["issues.opened", "issue_comment.created"]);
    expect(deliveries.every((d) => d.status === "ok" && d.statusCode >= 200 && d.statusCode < 300)).toBe(true);
    expect(sim.violations).toEqual([]);
  });
});
