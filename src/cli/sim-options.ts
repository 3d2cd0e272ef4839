// What `forge sim` takes (src/cli/commands/sim.ts checks it, src/cli/sim-main.ts runs it): the
// local GitHub's options (src/local-github/program.ts) and Forge's own, and the help that says them.
import { LOCAL_GITHUB_OPTIONS } from "../local-github/options.js";

/** The action `forge init`'s workflow names (templates/workflows/forge-agent.yml), without its tag. */
export const FORGE_ACTION = "forge-dev/forge/action";
/** Where `forge app` listens by default (src/app/launch.ts: 127.0.0.1, port 3000). */
export const DEFAULT_FORGE_APP_URL = "http://127.0.0.1:3000";

export const SIM_OPTIONS = {
  ...LOCAL_GITHUB_OPTIONS,
  "forge-app": { type: "string" },
  "forge-app-url": { type: "string" },
} as const;

export const SIM_HELP = `Usage: forge sim [options]

Start Forge's local GitHub — the REST API (/api/v3, GitHub Enterprise Server style), git over HTTP,
signed webhooks and a workflow runner — and print its URLs; it runs until interrupted (Ctrl-C).
Its state lives in memory: every start is a new GitHub. The runner runs workflows on this machine,
and serves Forge's action (forge-dev/forge/action@v1, what \`forge init\`'s workflow uses) from
this package's action/ folder.

A first run (README.md, "A first run on the local GitHub"):
  forge sim --port 4000 --repo octo/hello --secret ANTHROPIC_API_KEY --forge-app ./forge-app

Repositories and people
  --repo owner/name[=folder]          a repository, from a folder's files or with a README only (repeatable)
  --collaborator owner/name:login[:role]
                                      a collaborator: read, triage, write (default), maintain or admin (repeatable)
  --user login                        a user (repeatable); a personal access token is printed for each user,
                                      collaborator and repository owner: the password for git over HTTP
  --secret [owner/name:]NAME[=value]  an Actions secret of that repository, else of every --repo; without
                                      =value, the value of the environment variable NAME (repeatable)

Forge's App
  --forge-app <dir>                   register the Forge App (app.yml's permissions and events), install it on
                                      every --repo with the state-branch ruleset, and write its credentials
                                      and this GitHub's API to <dir>/.env: then \`npx forge app --dir <dir>\`
  --forge-app-url <url>               where that App listens (default ${DEFAULT_FORGE_APP_URL}: forge app's default)
  --app <app.json>                    any other App, from JSON: { "slug", "id"?, "publicKeyPem" | "publicKeyPath" |
                                      "privateKeyPath", "webhookUrl", "webhookSecret", "permissions", "events",
                                      "install"?: { "account", "repositories": "all" | ["owner/name"] } }

The runner
  --executor runner|noop|none         who runs workflow jobs: the runner (default), nobody but a success, nobody
  --action owner/repo[/path]=folder   serve that action from a folder (repeatable; ${FORGE_ACTION} is this
                                      package's action/ unless given)

The server
  --port <n>                          port (default: any free one)
  --host <address>                    address to listen on (default 127.0.0.1)
  --verbose                           print every request

Faults (for tests)
  --seed <n>, --api-error-rate <0-1>, --rate-limit-rate <0-1>, --webhook-drop-rate <0-1>,
  --webhook-duplicate-rate <0-1>, --webhook-reorder-window <n>
`;
