// An App's RSA key pair: what `forge demo` registers its Forge App with (and the tests theirs).
import { generateKeyPairSync } from "node:crypto";

export interface AppKeys {
  privateKeyPem: string;
  publicKeyPem: string;
}

let cachedKeys: AppKeys | undefined;
/** One RSA key pair per process (generation costs ~100 ms). */
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
