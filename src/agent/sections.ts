/**
 * The Markdown sections an agent's document must have (walkthrough, Change Request, refinement):
 * read line by line and trimmed by hand, so an agent's text costs time linear in its length
 * whatever it holds.
 */

/** The text of an ATX heading line (`## Summary ##` → `Summary`), or undefined. */
export function headingText(line: string): string | undefined {
  const m = /^#{1,6}\s+([\s\S]*)$/.exec(line);
  if (!m) return undefined;
  let text = m[1]!.trimEnd();
  let end = text.length;
  while (end > 0 && text[end - 1] === "#") end--;
  text = text.slice(0, end).trim();
  return text || undefined;
}

/** The sections of `required` that `body` has no heading for (case-insensitive), in `required`'s order. */
export function missingSections(body: string, required: readonly string[]): string[] {
  const present = new Set<string>();
  for (const line of body.split("\n")) {
    const title = headingText(line);
    if (title) present.add(title.toLowerCase());
  }
  return required.filter((s) => !present.has(s.toLowerCase()));
}
