// The local GitHub as a program: its options, read from a command line, and the server they start —
// repositories, people and their tokens, Actions secrets, an App, the runner and the actions it
// serves from folders — printed as URLs. `src/local-github/main.ts` runs it as it is; `forge sim`
// (src/cli/sim-main.ts) adds Forge's own setup through `setup`.
import { createPublicKey } from "node:crypto";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs, type ParseArgsConfig } from "node:util";
import { LOCAL_GITHUB_OPTIONS, parseActionSpec, parseSecretSpec } from "./options.js";
import { createSimExecutor } from "./runner/sim-executor.js";
import { createSim, type Sim } from "./server.js";
import type { Role } from "./state.js";

type Values = Record<string, string | boolean | string[] | undefined>;

/** What a program built on this one adds: options of its own, and setup once the repositories are seeded. */
export interface LocalGitHubExtension {
  options?: ParseArgsConfig["options"];
  /** Remote actions served from folders, besides the `--action` ones. */
  actions?: (values: Values) => Record<string, string>;
  /** What `--help` prints (default: the options, one a line). */
  help?: string;
  /** Runs once the repositories, people and secrets exist; returns lines to print. */
  setup?: (sim: Sim, values: Values, seeded: string[]) => Promise<string[]>;
}

/** Starts the local GitHub from `args` (relative paths against `base`), prints its URLs and runs until SIGINT or SIGTERM. */
export async function runLocalGitHub(args: string[], base: string, ext: LocalGitHubExtension = {}): Promise<void> {
  const { values } = parseArgs({ args, options: { ...LOCAL_GITHUB_OPTIONS, ...ext.options }, strict: true, allowPositionals: false });
  const v = values as Values;
  if (v.help) {
    console.log(ext.help ?? localGitHubHelp());
    return;
  }
  const str = (k: string) => v[k] as string | undefined;
  const list = (k: string) => (v[k] as string[] | undefined) ?? [];
  const num = (x: string | undefined) => (x === undefined ? undefined : Number(x));
  const faults = Object.fromEntries(
    Object.entries({
      seed: num(str("seed")),
      apiErrorRate: num(str("api-error-rate")),
      rateLimitRate: num(str("rate-limit-rate")),
      webhookDropRate: num(str("webhook-drop-rate")),
      webhookDuplicateRate: num(str("webhook-duplicate-rate")),
      webhookReorderWindow: num(str("webhook-reorder-window")),
    }).filter(([, x]) => x !== undefined),
  );
  const executor = str("executor") ?? "runner";
  if (!["runner", "noop", "none"].includes(executor)) throw new Error(`--executor must be runner, noop or none`);
  const sim = await createSim({
    port: Number(str("port") ?? "0"),
    host: str("host") ?? "127.0.0.1",
    strict: false,
    verbose: !!v.verbose,
    workflowExecutor: executor === "noop" ? "noop" : "none",
    faults,
  });
  const actions: Record<string, string> = { ...ext.actions?.(v) };
  for (const spec of list("action")) {
    const a = parseActionSpec(spec);
    if (!a) throw new Error(`--action expects owner/repo[/path]=folder, got ${spec}`);
    actions[a.name] = resolve(base, a.dir);
  }
  if (executor === "runner") sim.onWorkflowDispatch(createSimExecutor({ localActions: actions }).handler);

  const seeded = await seed(sim, v, base);
  const lines = (await ext.setup?.(sim, v, seeded)) ?? [];
  const appLine = registerAppFile(sim, str("app"), base);
  console.log(`Forge local GitHub
web:      ${sim.url}
api:      ${sim.apiUrl}   (GHES style: give this as baseUrl)
git:      ${sim.gitUrl}/<owner>/<repo>.git
control:  ${sim.url}/_sim/
executor: ${executor}${
    Object.keys(actions).length
      ? ` (actions from folders: ${Object.entries(actions)
          .map(([n, d]) => `${n} → ${d}`)
          .join(", ")})`
      : ""
  }${appLine ? `\n${appLine}` : ""}`);
  for (const r of sim.core.state.repos.values())
    console.log(`repo:     ${r.owner.login}/${r.name}  ${sim.gitUrl}/${r.owner.login}/${r.name}.git`);
  for (const login of people(sim, v)) console.log(`user:     ${login}  token ${sim.control.userToken(login)}`);
  for (const line of lines) console.log(line);
  const stop = () => {
    void sim.close().then(() => process.exit(0));
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

/** The repositories, collaborators, users and secrets of the command line; returns the repositories' full names. */
async function seed(sim: Sim, v: Values, base: string): Promise<string[]> {
  const list = (k: string) => (v[k] as string[] | undefined) ?? [];
  const seeded: string[] = [];
  for (const spec of list("repo")) {
    const [full, dir] = spec.split("=");
    const [owner, name] = (full ?? "").split("/");
    if (!owner || !name) throw new Error(`--repo expects owner/name[=folder], got ${spec}`);
    await sim.control.createRepo({ owner, name, ...(dir ? { fromDir: resolve(base, dir) } : { files: { "README.md": `# ${name}\n` } }) });
    seeded.push(`${owner}/${name}`);
  }
  for (const spec of list("collaborator")) {
    const [full, login, role] = spec.split(":");
    sim.control.setCollaborator(full!, login!, (role ?? "write") as Role);
  }
  for (const login of list("user")) sim.control.createUser(login);
  for (const spec of list("secret")) {
    const s = parseSecretSpec(spec);
    if (!s) throw new Error(`--secret expects [owner/name:]NAME[=value], got ${spec}`);
    const value = s.value ?? process.env[s.name];
    if (value === undefined) throw new Error(`--secret ${s.name}: no value given and no ${s.name} in the environment`);
    const repos = s.repo ? [s.repo] : seeded;
    if (repos.length === 0) throw new Error(`--secret ${s.name}: no repository (give --repo, or owner/name:${s.name})`);
    for (const repo of repos) sim.control.setSecret(repo, s.name, value);
  }
  return seeded;
}

/** The people a token is printed for: the owners of the repositories, the collaborators, the --user ones. */
function people(sim: Sim, v: Values): string[] {
  const list = (k: string) => (v[k] as string[] | undefined) ?? [];
  const logins = [
    ...[...sim.core.state.repos.values()].map((r) => r.owner.login),
    ...list("collaborator").map((c) => c.split(":")[1]!),
    ...list("user"),
  ];
  return [...new Set(logins)];
}

/** An App registered (and installed) from a JSON file (`--app`); returns the line that says so. */
function registerAppFile(sim: Sim, file: string | undefined, base: string): string {
  if (!file) return "";
  const cfg = JSON.parse(readFileSync(resolve(base, file), "utf8")) as {
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
  let line = `app:      ${app.slug} (id ${app.id})`;
  if (cfg.install) {
    const inst = sim.control.install(app.id, cfg.install.account, cfg.install.repositories);
    line += `, installation ${inst.id} on ${cfg.install.account}`;
  }
  return line;
}

/** The options, one a line: `forge sim --help` says more (src/cli/sim-options.ts). */
function localGitHubHelp(): string {
  const lines = Object.entries(LOCAL_GITHUB_OPTIONS).map(
    ([name, o]) => `  --${name}${o.type === "string" ? " <value>" : ""}${"multiple" in o && o.multiple ? " (repeatable)" : ""}`,
  );
  return ["Usage: node dist/local-github/main.js [options]   (forge sim --help says what each does)", "", ...lines, ""].join("\n");
}
