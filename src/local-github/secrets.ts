// Actions secrets of a repository (docs.github.com/rest/actions/secrets): each repository has a
// Curve25519 key pair; a client seals a value with its public key (a libsodium sealed box, as
// GitHub's "Encrypting secrets for the REST API" shows) and sends it with the key's id; the
// simulator opens the box with the private key, so the value really is stored, and passes it to
// the repository's workflow runs (`secrets.*`, never for a pull request from a fork). Values are
// never returned. Names follow GitHub's rules ("Naming your secrets"): letters, digits and
// underscores, not starting with a digit or GITHUB_, case-insensitive (kept upper-case).
import { randomInt } from "node:crypto";
import sodium from "libsodium-wrappers";
import { HttpError } from "./auth.js";
import type { Handler, RestCtx } from "./rest/index.js";
import type { Repo } from "./state.js";
import { now } from "./state.js";

export interface StoredSecret {
  name: string;
  value: string;
  createdAt: string;
  updatedAt: string;
}

export interface RepoSecrets {
  byName: Map<string, StoredSecret>;
  /** the repository's sealing key, made on first use */
  key?: { id: string; publicKey: Uint8Array; privateKey: Uint8Array };
}

function secretsOf(repo: Repo): RepoSecrets {
  return (repo.secrets ??= { byName: new Map() });
}

/** Why GitHub refuses a secret name, or undefined when it is valid. */
export function invalidSecretName(name: string): string | undefined {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
    return "Secret names can only contain alphanumeric characters ([a-z], [A-Z], [0-9]) or underscores (_), and must not start with a number.";
  if (/^GITHUB_/i.test(name)) return "Secret names must not start with the GITHUB_ prefix.";
  return undefined;
}

/** "Secrets are limited to 48 KB in size." (docs.github.com/actions/reference/secrets-reference#limits-for-secrets) */
export const SECRET_MAX_BYTES = 48 * 1024;

/** Stores a secret's plain value (the control API's seeding, and a PUT once its box is opened). Returns whether it was new. */
export function storeSecret(repo: Repo, name: string, value: string): boolean {
  const bad = invalidSecretName(name);
  if (bad) throw new Error(bad);
  const all = secretsOf(repo).byName;
  const key = name.toUpperCase();
  const t = now();
  const existing = all.get(key);
  if (existing) {
    existing.value = value;
    existing.updatedAt = t;
    return false;
  }
  all.set(key, { name: key, value, createdAt: t, updatedAt: t });
  return true;
}

/** The values a workflow run of the repository gets as `secrets.*`. */
export function secretValues(repo: Repo): Record<string, string> {
  return Object.fromEntries([...(repo.secrets?.byName.values() ?? [])].map((s) => [s.name, s.value]));
}

async function keyOf(repo: Repo): Promise<NonNullable<RepoSecrets["key"]>> {
  const s = secretsOf(repo);
  if (!s.key) {
    await sodium.ready;
    const pair = sodium.crypto_box_keypair();
    // GitHub's key ids are long decimal numbers.
    s.key ??= { id: `${randomInt(1e8, 1e9)}${randomInt(1e8, 1e9)}`, publicKey: pair.publicKey, privateKey: pair.privateKey };
  }
  return s.key;
}

// ---------------------------------------------------------------- REST

function repoOf(ctx: RestCtx): Repo {
  if (!ctx.repo) throw new HttpError(404, "Not Found", ctx.doc);
  return ctx.repo;
}

function secretJson(s: StoredSecret): Record<string, unknown> {
  return { name: s.name, created_at: s.createdAt, updated_at: s.updatedAt };
}

/** GitHub's answer to a value that was not sealed with the repository's current key. */
const IMPROPERLY_ENCRYPTED = "Bad request - validation failed due to an improperly encrypted secret";

export const secretHandlers: Record<string, Handler> = {
  // docs.github.com/rest/actions/secrets#list-repository-secrets
  "actions/list-repo-secrets": async (ctx) => {
    const all = [...(repoOf(ctx).secrets?.byName.values() ?? [])].sort((a, b) => a.name.localeCompare(b.name));
    return { status: 200, body: { total_count: all.length, secrets: ctx.page(all).map(secretJson) } };
  },
  "actions/get-repo-secret": async (ctx) => {
    const s = repoOf(ctx).secrets?.byName.get(String(ctx.params.secret_name).toUpperCase());
    if (!s) throw new HttpError(404, "Not Found", ctx.doc);
    return { status: 200, body: secretJson(s) };
  },
  // "Anyone with read access to the repository can use this endpoint."
  "actions/get-repo-public-key": async (ctx) => {
    const key = await keyOf(repoOf(ctx));
    return { status: 200, body: { key_id: key.id, key: sodium.to_base64(key.publicKey, sodium.base64_variants.ORIGINAL) } };
  },
  // 201 (empty object) when created, 204 when updated; the body's shape (`encrypted_value` in
  // base64, `key_id`) is checked against GitHub's description before it reaches here.
  "actions/create-or-update-repo-secret": async (ctx) => {
    const repo = repoOf(ctx);
    const name = String(ctx.params.secret_name);
    const bad = invalidSecretName(name);
    if (bad) throw new HttpError(422, bad, ctx.doc);
    const key = await keyOf(repo);
    const b = ctx.body ?? {};
    if (b.key_id !== key.id) throw new HttpError(422, IMPROPERLY_ENCRYPTED, ctx.doc);
    let value: string;
    try {
      const sealed = sodium.from_base64(String(b.encrypted_value), sodium.base64_variants.ORIGINAL);
      value = sodium.to_string(sodium.crypto_box_seal_open(sealed, key.publicKey, key.privateKey));
    } catch {
      throw new HttpError(422, IMPROPERLY_ENCRYPTED, ctx.doc);
    }
    if (Buffer.byteLength(value, "utf8") > SECRET_MAX_BYTES)
      throw new HttpError(422, `Secret value is too large: secrets are limited to 48 KB (${SECRET_MAX_BYTES} bytes).`, ctx.doc);
    return storeSecret(repo, name, value) ? { status: 201, body: {} } : { status: 204 };
  },
  "actions/delete-repo-secret": async (ctx) => {
    const all = repoOf(ctx).secrets?.byName;
    if (!all?.delete(String(ctx.params.secret_name).toUpperCase())) throw new HttpError(404, "Not Found", ctx.doc);
    return { status: 204 };
  },
};
