// An App's RSA key pair and its JWTs, as GitHub documents them: what `forge demo` registers its
// Forge App with, and what tests sign App requests with.
import { createSign, generateKeyPairSync } from "node:crypto";

export interface AppKeys {
  privateKeyPem: string;
  publicKeyPem: string;
}

let cachedKeys: AppKeys | undefined;
/** One RSA key pair per test process (generation costs ~100 ms). */
export function appKeys(): AppKeys {
  if (!cachedKeys) {
    const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    cachedKeys = {
      privateKeyPem: privateKey.export({ type: "pkcs1", format: "pem" }).toString(),
      publicKeyPem: publicKey.export({ type: "spki", format: "pem" }).toString(),
    };
  }
  return cachedKeys;
}

/** An App JWT as GitHub documents it: RS256, iat back-dated 60 s, exp ≤ 10 min. */
export function appJwt(appId: number | string, privateKeyPem: string, claims: { iat?: number; exp?: number } = {}): string {
  // eslint-disable-next-line no-restricted-properties -- a JWT is checked against the real clock
  const nowSec = Math.floor(Date.now() / 1000);
  const header = Buffer.from(JSON.stringify({ alg: "RS256", typ: "JWT" })).toString("base64url");
  const payload = Buffer.from(JSON.stringify({ iat: claims.iat ?? nowSec - 60, exp: claims.exp ?? nowSec + 540, iss: appId })).toString(
    "base64url",
  );
  const sig = createSign("RSA-SHA256").update(`${header}.${payload}`).sign(privateKeyPem).toString("base64url");
  return `${header}.${payload}.${sig}`;
}
