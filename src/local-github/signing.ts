// GitHub's own signature on the commits it creates ("About commit signature verification",
// docs.github.com/authentication/managing-commit-signature-verification/about-commit-signature-verification):
// "GitHub will automatically use GPG to sign commits you make using the web interface" — the merge
// and squash commits of the merge button, commits created through the REST API with no author,
// committer or signature given ("Signature verification for bots … contains no custom author
// information, custom committer information, and no custom signature information, such as Commits
// API") — and such commits are verified. A rebase merge is not: "GitHub creates a modified commit …
// and can't therefore sign it".
//
// The local GitHub signs those commits with a key of its own (an HMAC of the commit's payload in
// an armored `gpgsig` block, as git stores a signature) and verifies a commit by that key alone: it
// keeps no person's public keys, so a commit a person signed elsewhere is "unverified" here.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

const BEGIN = "-----BEGIN PGP SIGNATURE-----";
const END = "-----END PGP SIGNATURE-----";

export class CommitSigner {
  readonly #key = randomBytes(32);

  #mac(payload: string): string {
    return createHmac("sha256", this.#key).update(payload, "utf8").digest("base64");
  }

  /** The armored signature of a commit's payload (the commit object without its `gpgsig` header). */
  sign(payload: string): string {
    return `${BEGIN}\n\n${Buffer.from(`forge-local-github:${this.#mac(payload)}`).toString("base64")}\n${END}\n`;
  }

  /**
   * Whether a raw commit carries this key's signature of its own payload; the signature block and
   * payload as the REST `verification` object shows them.
   */
  verify(raw: string): { verified: boolean; signature: string | null; payload: string | null } {
    const split = splitSignature(raw);
    if (!split) return { verified: false, signature: null, payload: null };
    return { verified: this.verifies(split.signature, split.payload), signature: split.signature, payload: split.payload };
  }

  /** Whether `signature` is this key's signature of `payload`. */
  verifies(signature: string, payload: string): boolean {
    const body = /\n\n([A-Za-z0-9+/=]+)\n/.exec(signature)?.[1];
    const given = body ? Buffer.from(body, "base64").toString("utf8") : "";
    const want = `forge-local-github:${this.#mac(payload)}`;
    return given.length === want.length && timingSafeEqual(Buffer.from(given), Buffer.from(want));
  }
}

/** A commit's `gpgsig` header (continuation lines unfolded) and the payload it signs, if it has one. */
export function splitSignature(raw: string): { signature: string; payload: string } | undefined {
  const end = raw.indexOf("\n\n");
  const header = (end < 0 ? raw : raw.slice(0, end)).split("\n");
  const at = header.findIndex((l) => l.startsWith("gpgsig ") || l.startsWith("gpgsig-sha256 "));
  if (at < 0) return undefined;
  let stop = at + 1;
  while (stop < header.length && header[stop]!.startsWith(" ")) stop++;
  const lines = header.slice(at, stop);
  const signature = `${[lines[0]!.slice(lines[0]!.indexOf(" ") + 1), ...lines.slice(1).map((l) => l.slice(1))].join("\n")}\n`;
  const payload = [...header.slice(0, at), ...header.slice(stop)].join("\n") + (end < 0 ? "" : raw.slice(end));
  return { signature, payload };
}

/** The `gpgsig` header of a signature, as git writes it (each line after the first indented by one space). */
export function signatureHeader(signature: string): string {
  return `gpgsig ${signature.replace(/\n$/, "").split("\n").join("\n ")}`;
}
