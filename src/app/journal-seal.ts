/**
 * The journal is the App's alone: every `journal.json` the App writes carries a seal — an
 * HMAC-SHA256 keyed by a secret only the App holds, over the repository's id, the run's id and the
 * journal's content — and a journal whose seal does not verify is refused (see
 * docs/architecture.md#trust-boundaries). Anything with `contents: write` (an agent job's own token
 * included) can push to `forge/<runId>/_state`; without the key it cannot write a journal the App
 * will act on, and a journal the App sealed in another repository, or for another run, does not
 * verify here (docs/formats.md#journal-seal).
 *
 * A seal proves authorship, not freshness: an older journal of the same run still verifies.
 * journal-anchor.ts keeps the App's own record of the newest one.
 *
 * The key is derived from the App's private key (HKDF-SHA256 over its DER form, so every replica and
 * `forge tick` derive the same key from the same registration), or given as `FORGE_JOURNAL_KEY`.
 */
import { createHmac, createPrivateKey, hkdfSync, timingSafeEqual } from "node:crypto";

/** The field of `journal.json` that holds the seal: always the last one, outside the stored run's schema. */
export const SEAL_FIELD = "seal";
/** Version 2: `hmac-sha256-v2:<repositoryId>:<hex>`, bound to the repository and the run. */
const PREFIX = "hmac-sha256-v2:";
/** Version 1 (the journal alone, any repository): refused. */
const V1_PREFIX = "hmac-sha256:";

export type JournalKey = Buffer;

/** What a seal binds a journal to besides its content. */
export interface SealBinding {
  /** The repository's id (GitHub's, which survives renames and transfers). */
  repositoryId: number;
  runId: string;
}

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

/** An HMAC of `text` under a purpose and a binding: the journal's seal and the anchor's (journal-anchor.ts). */
export function bound(key: JournalKey, purpose: string, b: SealBinding, text: string): string {
  return createHmac("sha256", key).update(`forge ${purpose}\n${b.repositoryId}\n${b.runId}\n`, "utf8").update(text, "utf8").digest("hex");
}

function mac(key: JournalKey, b: SealBinding, text: string): string {
  return `${PREFIX}${b.repositoryId}:${bound(key, "journal seal v2", b, text)}`;
}

/** Constant-time equality of two strings. */
export function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** `journal.json`'s text: the stored run's JSON with its seal, bound to the repository and the run, as the last field. */
export function sealJournal(key: JournalKey, state: object, binding: SealBinding): string {
  const body = JSON.stringify(state);
  return `${body.slice(0, -1)}${body.length > 2 ? "," : ""}"${SEAL_FIELD}":${JSON.stringify(mac(key, binding, body))}}\n`;
}

export type Unsealed = { ok: true; value: unknown } | { ok: false; reason: string };

/**
 * The stored run of a `journal.json` text, when its seal verifies for this repository and run. The
 * seal covers the JSON of everything else, as written (`JSON.stringify` of the parsed object gives
 * back the same text, the field order being kept).
 */
export function unsealJournal(key: JournalKey, text: string, binding: SealBinding): Unsealed {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    return { ok: false, reason: `it is not JSON: ${(e as Error).message}` };
  }
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) return { ok: false, reason: "it is not a JSON object" };
  const { [SEAL_FIELD]: seal, ...rest } = raw as Record<string, unknown>;
  if (typeof seal !== "string") return { ok: false, reason: "it carries no seal: the Forge App did not write it" };
  if (!seal.startsWith(PREFIX)) {
    if (seal.startsWith(V1_PREFIX))
      return {
        ok: false,
        reason:
          "it carries a version 1 seal, which an earlier Forge wrote and which binds it to no repository or run: Forge no longer adopts such journals (docs/formats.md#journal-seal). Start the plan again with `/forge run <planId>`",
      };
    return { ok: false, reason: "its seal is of no version Forge knows: the Forge App did not write it" };
  }
  const sealedIn = seal.slice(PREFIX.length).split(":")[0];
  if (sealedIn !== String(binding.repositoryId))
    return {
      ok: false,
      reason: `it was sealed in another repository (id ${sealedIn?.slice(0, 20)}), not this one (id ${binding.repositoryId}): Forge adopts only state branches it created in this repository`,
    };
  if (!sameText(seal, mac(key, binding, JSON.stringify(rest))))
    return {
      ok: false,
      reason: `its seal does not match its content and run ${binding.runId}: it was changed by someone other than the Forge App, or sealed for another run`,
    };
  return { ok: true, value: rest };
}
