// The local GitHub's command-line options and the forms of their values, apart from the server
// (./program.ts) so that checking a command line loads nothing else: `forge sim` checks them before
// it starts anything.
import type { ParseArgsConfig } from "node:util";

/** The local GitHub's options (`forge sim --help` says what each does). */
export const LOCAL_GITHUB_OPTIONS = {
  port: { type: "string" },
  host: { type: "string" },
  repo: { type: "string", multiple: true },
  collaborator: { type: "string", multiple: true },
  user: { type: "string", multiple: true },
  secret: { type: "string", multiple: true },
  action: { type: "string", multiple: true },
  app: { type: "string" },
  executor: { type: "string" },
  seed: { type: "string" },
  "api-error-rate": { type: "string" },
  "rate-limit-rate": { type: "string" },
  "webhook-drop-rate": { type: "string" },
  "webhook-duplicate-rate": { type: "string" },
  "webhook-reorder-window": { type: "string" },
  verbose: { type: "boolean" },
  help: { type: "boolean" },
} as const satisfies ParseArgsConfig["options"];

/** What a `--secret` names: the repository (or every seeded one), the name, and the value (else the environment's). */
export function parseSecretSpec(spec: string): { repo?: string; name: string; value?: string } | undefined {
  const m = /^(?:([^/\s:=]+\/[^/\s:=]+):)?([A-Za-z_][A-Za-z0-9_]*)(?:=([\s\S]*))?$/.exec(spec);
  if (!m) return undefined;
  return { ...(m[1] ? { repo: m[1] } : {}), name: m[2]!, ...(m[3] !== undefined ? { value: m[3] } : {}) };
}

/** What an `--action` names: `owner/repo[/path]` served from a folder. */
export function parseActionSpec(spec: string): { name: string; dir: string } | undefined {
  const m = /^([^/\s=@]+\/[^/\s=@]+(?:\/[^\s=@]+)?)=(.+)$/.exec(spec);
  return m ? { name: m[1]!, dir: m[2]! } : undefined;
}
