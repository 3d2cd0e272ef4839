// Starts Forge's local GitHub and prints its URLs; runs until interrupted.
//
//   npx forge sim [--port 3000] [--host 127.0.0.1]
//       [--repo owner/name[=folder]]...      seed repositories (from a folder, or empty)
//       [--collaborator owner/name:login:role]...
//       [--app app.json]                       register (and install) an App, see below
//       [--executor runner|noop|none]          who runs dispatched workflows (default: runner)
//       [--seed N --api-error-rate R --rate-limit-rate R --webhook-drop-rate R ...]   faults
//       [--verbose]
//
// app.json: { "slug", "id"?, "publicKeyPem"? | "privateKeyPath"? | "publicKeyPath"?, "webhookUrl",
//             "webhookSecret", "permissions", "events", "install"?: { "account", "repositories" } }
// `npx forge sim` runs this file (built: dist/local-github/main.js; from source: `npx tsx src/local-github/main.ts`).
import { createPublicKey } from "node:crypto";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import type { Role } from "./state.js";
import { createSim } from "./server.js";

const base = process.env.FORGE_SIM_CWD ?? process.cwd();

async function start(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: "string", default: "0" },
      host: { type: "string", default: "127.0.0.1" },
      repo: { type: "string", multiple: true, default: [] },
      collaborator: { type: "string", multiple: true, default: [] },
      app: { type: "string" },
      executor: { type: "string", default: "runner" },
      seed: { type: "string" },
      "api-error-rate": { type: "string" },
      "rate-limit-rate": { type: "string" },
      "webhook-drop-rate": { type: "string" },
      "webhook-duplicate-rate": { type: "string" },
      "webhook-reorder-window": { type: "string" },
      verbose: { type: "boolean", default: false },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help) {
    // The comment at the top of this file; not the compiler's `//# sourceMappingURL=` at the end of the built one.
    const lines = readFileSync(new URL(import.meta.url), "utf8").split("\n");
    const end = lines.findIndex((l) => !l.startsWith("//"));
    console.log(
      lines
        .slice(0, end === -1 ? lines.length : end)
        .map((l) => l.slice(3))
        .join("\n"),
    );
    return;
  }
  const num = (v: string | undefined) => (v === undefined ? undefined : Number(v));
  const faults = Object.fromEntries(
    Object.entries({
      seed: num(values.seed),
      apiErrorRate: num(values["api-error-rate"]),
      rateLimitRate: num(values["rate-limit-rate"]),
      webhookDropRate: num(values["webhook-drop-rate"]),
      webhookDuplicateRate: num(values["webhook-duplicate-rate"]),
      webhookReorderWindow: num(values["webhook-reorder-window"]),
    }).filter(([, v]) => v !== undefined),
  );
  const executor = values.executor;
  if (!["runner", "noop", "none"].includes(executor)) throw new Error(`--executor must be runner, noop or none`);
  const sim = await createSim({
    port: Number(values.port),
    host: values.host,
    strict: false,
    verbose: values.verbose,
    workflowExecutor: executor === "noop" ? "noop" : "none",
    faults,
  });
  if (executor === "runner") {
    const { createSimExecutor } = await import("./runner/sim-executor.js");
    sim.onWorkflowDispatch(createSimExecutor().handler);
  }
  for (const spec of values.repo) {
    const [full, dir] = spec.split("=");
    const [owner, name] = (full ?? "").split("/");
    if (!owner || !name) throw new Error(`--repo expects owner/name[=folder], got ${spec}`);
    await sim.control.createRepo({ owner, name, ...(dir ? { fromDir: resolve(base, dir) } : { files: { "README.md": `# ${name}\n` } }) });
  }
  for (const spec of values.collaborator) {
    const [full, login, role] = spec.split(":");
    sim.control.setCollaborator(full!, login!, (role ?? "write") as Role);
  }
  let appLine = "";
  if (values.app) {
    const cfg = JSON.parse(readFileSync(resolve(base, values.app), "utf8")) as {
      slug: string;
      id?: number;
      publicKeyPem?: string;
      publicKeyPath?: string;
      privateKeyPath?: string;
      webhookUrl?: string;
      webhookSecret?: string;
      permissions: Record<string, "read" | "write">;
      events: string[];
      install?: { account: string; repositories: "all" | string[] };
    };
    const pem =
      cfg.publicKeyPem ??
      (cfg.publicKeyPath ? readFileSync(resolve(base, cfg.publicKeyPath), "utf8") : undefined) ??
      (cfg.privateKeyPath
        ? createPublicKey(readFileSync(resolve(base, cfg.privateKeyPath), "utf8"))
            .export({ type: "spki", format: "pem" })
            .toString()
        : undefined);
    if (!pem) throw new Error("app.json needs publicKeyPem, publicKeyPath or privateKeyPath");
    const app = sim.control.registerApp({
      slug: cfg.slug,
      id: cfg.id,
      publicKeyPem: pem,
      webhookUrl: cfg.webhookUrl,
      webhookSecret: cfg.webhookSecret,
      permissions: cfg.permissions,
      events: cfg.events,
    });
    appLine = `app:      ${app.slug} (id ${app.id})`;
    if (cfg.install) {
      const inst = sim.control.install(app.id, cfg.install.account, cfg.install.repositories);
      appLine += `, installation ${inst.id} on ${cfg.install.account}`;
    }
  }
  console.log(`Forge local GitHub
web:      ${sim.url}
api:      ${sim.apiUrl}   (GHES style: give this as baseUrl)
git:      ${sim.gitUrl}/<owner>/<repo>.git
control:  ${sim.url}/_sim/
executor: ${executor}${appLine ? `\n${appLine}` : ""}`);
  for (const r of sim.core.state.repos.values())
    console.log(`repo:     ${r.owner.login}/${r.name}  ${sim.gitUrl}/${r.owner.login}/${r.name}.git`);
  const stop = () => {
    void sim.close().then(() => process.exit(0));
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

start().catch((e: unknown) => {
  console.error(`forge sim: ${(e as Error).message}`);
  process.exit(2);
});
