/**
 * The journal is the App's alone: every `journal.json` the App writes carries a seal — an
 * HMAC-SHA256 of its content, keyed by a secret only the App holds — and a journal whose seal does
 * not verify is refused (see docs/architecture.md#trust). Anything with `contents: write` (an agent
 * job's own token included) can push to `forge/<runId>/_state`; without the key it cannot write a
 * journal the App will act on.
 *
 * The key is derived from the App's private key (HKDF-SHA256 over its DER form, so every replica and
 * `forge tick` derive the same key from the same registration), or given as `FORGE_JOURNAL_KEY`.
 */
import { createHmac, createPrivateKey, hkdfSync, timingSafeEqual } from "node:crypto";

/** The field of `journal.json` that holds the seal: always the last one, outside the stored run's schema. */
export const SEAL_FIELD = "seal";
const PREFIX = "hmac-sha256:";

export type JournalKey = Buffer;

/** The journal key of an App: derived from its private key (PEM, PKCS#1 or PKCS#8). */
export function journalKeyFrom(privateKeyPem: string): JournalKey {
  const der = createPrivateKey(privateKeyPem).export({ type: "pkcs8", format: "der" });
  return Buffer.from(hkdfSync("sha256", der, "forge", "forge journal seal v1", 32));
}

/** A key given as configuration (`FORGE_JOURNAL_KEY`, at least 32 characters). */
export function journalKeyFromSecret(secret: string): JournalKey {
  if (secret.length < 32) throw new Error("FORGE_JOURNAL_KEY must be at least 32 characters");
  return Buffer.from(hkdfSync("sha256", Buffer.from(secret, "utf8"), "forge", "forge journal seal v1", 32));
}

function mac(key: JournalKey, text: string): string {
  return PREFIX + createHmac("sha256", key).update(text, "utf8").digest("hex");
}

/** `journal.json`'s text: the stored run's JSON with its seal as the last field. */
export function sealJournal(key: JournalKey, state: object): string {
  const body = JSON.stringify(state);
  return `${body.slice(0, -1)}${body.length > 2 ? "," : ""}"${SEAL_FIELD}":${JSON.stringify(mac(key, body))}}\n`;
}

export type Unsealed = { ok: true; value: unknown } | { ok: false; reason: string };

/**
 * The stored run of a `journal.json` text, when its seal verifies. The seal covers the JSON of
 * everything else, as written (`JSON.stringify` of the parsed object gives back the same text, the
 * field order being kept).
 */
export function unsealJournal(key: JournalKey, text: string): Unsealed {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    return { ok: false, reason: `it is not JSON: ${(e as Error).message}` };
  }
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) return { ok: false, reason: "it is not a JSON object" };
  const { [SEAL_FIELD]: seal, ...rest } = raw as Record<string, unknown>;
  if (typeof seal !== "string") return { ok: false, reason: "it carries no seal: the Forge App did not write it" };
  const expected = Buffer.from(mac(key, JSON.stringify(rest)));
  const given = Buffer.from(seal);
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    return { ok: false, reason: "its seal does not match its content: it was changed by someone other than the Forge App" };
  return { ok: true, value: rest };
}
