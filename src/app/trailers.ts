/** Trailers of the commits Forge reads: the runner's record and checkpoint commits. */
/** `Key: value` trailers of a commit message (the last paragraph). */
export function parseTrailers(message: string): Record<string, string> {
  const paragraphs = message.trimEnd().split(/\n\s*\n/);
  const last = paragraphs[paragraphs.length - 1] ?? "";
  const out: Record<string, string> = {};
  for (const line of last.split("\n")) {
    const m = /^([A-Za-z][A-Za-z0-9-]*):\s*(.*)$/.exec(line.trim());
    if (m) out[m[1]!] = m[2]!.trim();
  }
  return out;
}
