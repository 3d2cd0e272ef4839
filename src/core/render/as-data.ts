/**
 * Agent and outside text that Forge puts on GitHub is shown as data, never acted on: Forge's hidden
 * markers (`<!-- forge:run … -->`, `<!-- forge:cr … -->`, `<!-- forge:comment … -->`,
 * `<!-- forge:walkthrough … -->`) are taken out of it, so a follow-up or a question cannot tie an
 * issue to another run or pass for a comment Forge posted; and its @mentions are broken with a
 * zero-width space, so an agent cannot notify people (or teams) through the App. Linear in the text.
 */

/** A hidden Forge marker, closed or not (an unclosed comment hides the rest of the text). */
const FORGE_MARKER = /<!--\s*forge[\s\S]*?(?:-->|$)/gi;
/** The opening of one, as removing markers may leave it (`<!<!-- forge -->-- forge:cr …`). */
const FORGE_OPENER = /<!--(?=\s*forge)/gi;

/** An @mention as GitHub links it: `@` not after a word character (an e-mail address), then a login or `org/team`. */
const MENTION = /(?<!\w)@(?=[A-Za-z0-9])/g;

/** Zero-width space: `@\u200Bname` reads as `@name` and notifies nobody. */
export const MENTION_BREAK = "\u200B";

/**
 * Forge's hidden markers taken out of `text`. What the removal joins into a marker's opening is
 * shown instead (`&lt;!--`): escaping cannot make an opening, so none is left.
 */
export function stripForgeMarkers(text: string): string {
  return text.replace(FORGE_MARKER, "").replace(FORGE_OPENER, "&lt;!--");
}

/** `text`'s @mentions broken so that GitHub links and notifies nobody. */
export function neutralizeMentions(text: string): string {
  return text.replace(MENTION, `@${MENTION_BREAK}`);
}

/** Agent or outside text ready to be rendered by Forge on GitHub: no Forge markers, no live @mentions. */
export function asData(text: string): string {
  return neutralizeMentions(stripForgeMarkers(text));
}

/** A code fence longer than any run of backticks in `text`, so the text cannot close it. */
export function fenceFor(text: string): string {
  let longest = 0;
  let run = 0;
  for (const ch of text) {
    run = ch === "`" ? run + 1 : 0;
    if (run > longest) longest = run;
  }
  return "`".repeat(Math.max(3, longest + 1));
}

/**
 * Outside text (a check's name) as Forge writes it inside a sentence of its own: one line, at most
 * `max` characters, with the Markdown that could make a link, an image, emphasis, code, HTML or a
 * table cell of it escaped — and shown as data (`asData`).
 */
export function inlineData(text: string, max = 200): string {
  const line = text.slice(0, max).replace(/[\r\n\t]+/g, " ");
  return asData(line.replace(/[\\`*_[\]<>|~]/g, (c) => `\\${c}`));
}
