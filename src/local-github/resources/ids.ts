// What every builder of the local GitHub's JSON objects shares: the object type, and node ids.

export type O = Record<string, unknown>;

/** Node ids are opaque base64 strings on GitHub; any stable unique string will do. */
export function nodeId(kind: string, id: number | string): string {
  return Buffer.from(`${kind}:${id}`).toString("base64").replace(/=+$/, "");
}
