/**
 * Secrets and untrusted text.
 *
 * - `Masker` replaces every known secret value, and every token shape (GitHub, Anthropic, OpenAI
 *   keys, private keys, basic auth of a token), in text before it reaches a log, an events file, a
 *   transcript or anything a job publishes (action/src/publish.ts), and registers the values with `@actions/core` `setSecret` inside GitHub Actions so the
 *   runner's own log masks them too.
 * - `sanitizeUntrusted` cleans text that comes from outside the reviewed plan (issue or PR text, a
 *   person's answer) before it becomes part of a prompt.
 */

/** Variable names whose values are secrets. */
const SECRET_NAME = /(TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|PRIVATE_?KEY|CREDENTIAL|AUTH)/i;

/** Shapes of well-known tokens, masked even when nobody registered them. */
const TOKEN_SHAPES: RegExp[] = [
  /\bgh[opsur]_[A-Za-z0-9]{20,}\b/g, // GitHub tokens: ghp_, gho_, ghs_ (installation/job), ghu_, ghr_
  /\bgithub_pat_[A-Za-z0-9_]{20,}\b/g,
  /\bsk-ant-[A-Za-z0-9_-]{8,}\b/g, // Anthropic keys
  /\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}\b/g, // OpenAI keys
  // Basic auth of a token nobody registered: base64 of `x-access-token:` (15 bytes, so it always
  // encodes to these 20 characters) and of the token after it.
  /eC1hY2Nlc3MtdG9rZW46[A-Za-z0-9+/]{8,}={0,2}/g,
  // A key runs to its END line, never past the next BEGIN: one scan per key, whatever the text.
  /-----BEGIN [A-Z ]*PRIVATE KEY-----(?:(?!-----BEGIN )[\s\S])*?-----END [A-Z ]*PRIVATE KEY-----/g,
];

export const MASK = "***";

export class Masker {
  readonly #values = new Set<string>();
  #pattern: RegExp | null = null;

  /** Registers a secret value. Values shorter than 4 characters are ignored (masking them would destroy logs). */
  add(value: string | undefined | null): this {
    if (!value || value.length < 4) return this;
    for (const v of [value, ...value.split(/\r?\n/).filter((l) => l.length >= 4)]) this.#values.add(v);
    // Secrets also appear base64-encoded (basic auth headers: x-access-token:<token>).
    this.#values.add(Buffer.from(value, "utf8").toString("base64"));
    this.#values.add(Buffer.from(`x-access-token:${value}`, "utf8").toString("base64"));
    this.#pattern = null;
    return this;
  }

  /** Registers the value of every variable whose name says it is a secret (`*TOKEN*`, `*KEY*`, …). */
  addFromEnv(env: NodeJS.ProcessEnv): this {
    for (const [name, value] of Object.entries(env)) if (isSecretName(name) && value) this.add(value);
    return this;
  }

  get size(): number {
    return this.#values.size;
  }

  values(): string[] {
    return [...this.#values];
  }

  mask(text: string): string {
    if (!text) return text;
    let out = text;
    if (this.#values.size > 0) {
      this.#pattern ??= new RegExp(
        [...this.#values]
          .sort((a, b) => b.length - a.length)
          .map(escapeRegExp)
          .join("|"),
        "g",
      );
      out = out.replace(this.#pattern, MASK);
    }
    for (const shape of TOKEN_SHAPES) out = out.replace(shape, MASK);
    return out;
  }

  /** `mask` over every string in a JSON-like value (objects and arrays copied, other values kept). */
  maskDeep<T>(value: T): T {
    if (typeof value === "string") return this.mask(value) as T;
    if (Array.isArray(value)) return value.map((v: unknown) => this.maskDeep(v)) as T;
    if (value && typeof value === "object")
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [this.mask(k), this.maskDeep(v)])) as T;
    return value;
  }

  /**
   * Inside GitHub Actions, tells the runner to mask the values in its log too (`::add-mask::`).
   * `@actions/core` is imported only there; it is ESM-only since version 3.
   */
  async registerWithActions(env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
    if (env.GITHUB_ACTIONS !== "true") return false;
    const core = await import("@actions/core");
    for (const v of this.#values) core.setSecret(v);
    return true;
  }
}

export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

// ---------------------------------------------------------------- untrusted text

/**
 * Zero-width and invisible characters, bidi controls (Trojan Source), tag characters (U+E0000 block,
 * used to smuggle ASCII invisibly), variation selectors, and other format characters.
 */
const INVISIBLE =
  // eslint-disable-next-line no-misleading-character-class -- removing these characters one by one is the point
  /[\u00AD\u034F\u061C\u115F\u1160\u17B4\u17B5\u180B-\u180F\u200B-\u200F\u202A-\u202E\u2060-\u206F\u3164\uFE00-\uFE0F\uFEFF\uFFA0\uFFF0-\uFFFB]|\uDB40[\uDC00-\uDFFF]/g;

/** Control characters except tab, newline and carriage return. */
// eslint-disable-next-line no-control-regex -- removing control characters is the point
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/g;

/** Phrases that try to take over the agent; they are kept visible but defused. */
const INJECTION_MARKERS: RegExp[] = [
  /\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+)?(?:the\s+)?(?:previous|prior|above|earlier|preceding|system)\s+(?:instructions?|prompts?|messages?|rules?|context)\b/gi,
  /\byou\s+are\s+now\s+(?:a|an|the|in)\b/gi,
  /\bnew\s+(?:system\s+)?instructions?\s*:/gi,
  /\b(?:developer|jailbreak|DAN)\s+mode\b/gi,
];

/** Fake conversation/role tags: `<system>`, `</system>`, `<|im_start|>`, `[INST]`, `Human:` at a line start… */
const ROLE_TAGS =
  /<\/?\s*(?:system|assistant|user|human|instructions?|tool_result|function_results?)\s*>|<\|[a-z_]+\|>|\[\/?INST\]|<<\/?SYS>>/gi;
const ROLE_LINES = /^([ \t]*)(system|assistant|human)[ \t]*:/gim;

/*
 * Every pattern below runs in time linear in the text, whatever the text (an issue body, an agent's
 * walkthrough): no pattern can scan the same stretch of text again from each of many starting points.
 * A scan stops at the character that would begin the next match (`<` ends an attribute name or an
 * unquoted value, `[` an image's alt text, `(` a link's address), attributes are separated by
 * required whitespace, an element's closing tag is looked up in an index rather than searched for
 * from every opening tag, and a run of spaces is taken whole from its first character.
 */

/** A tag's attributes: name, or name=value with the value quoted or not. A name or an unquoted value never holds `<`. */
const ATTRS = String.raw`(?:\s+[^\s"'<>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>` + "`" + String.raw`]+))?)*`;
/** An opening (or self-closing) tag: name in group 1, attributes in group 2. */
const OPEN_TAG = new RegExp(String.raw`<([a-z][a-z0-9-]*)(${ATTRS})\s*/?>`, "gi");
/** A closing tag: name in group 1. */
const CLOSE_TAG = /<\/([a-z][a-z0-9-]*)\s*>/gi;
/** Any tag, opening or closing. */
const ANY_TAG = new RegExp(String.raw`</?[a-z][a-z0-9-]*${ATTRS}\s*/?>`, "gi");
const DETAILS_TAG = new RegExp(String.raw`</?(?:details|summary)${ATTRS}\s*/?>`, "gi");
/** Elements whose content is never displayed. */
const UNDISPLAYED = new Set(["script", "style", "template", "noscript"]);
const HIDDEN_ATTR = /\bhidden|style\s*=\s*["'][^"']*display\s*:\s*none/i;

/**
 * Removes every element `drop` names, from its opening tag to the first closing tag of the same name
 * after it (an element without one is left alone). Closing tags are indexed once, by name and
 * position, so no opening tag searches the rest of the text for its own.
 */
function removeElements(s: string, drop: (name: string, attrs: string) => boolean): string {
  const closes = new Map<string, { at: number; end: number }[]>();
  for (const m of s.matchAll(CLOSE_TAG)) {
    const name = m[1]!.toLowerCase();
    let list = closes.get(name);
    if (!list) closes.set(name, (list = []));
    list.push({ at: m.index, end: m.index + m[0].length });
  }
  const closeAfter = (name: string, from: number) => {
    const list = closes.get(name);
    if (!list) return undefined;
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (list[mid]!.at < from) lo = mid + 1;
      else hi = mid;
    }
    return list[lo];
  };
  const open = new RegExp(OPEN_TAG.source, OPEN_TAG.flags);
  let out = "";
  let kept = 0;
  for (let m = open.exec(s); m; m = open.exec(s)) {
    const name = m[1]!.toLowerCase();
    const close = drop(name, m[2]!) ? closeAfter(name, m.index + m[0].length) : undefined;
    if (!close) {
      // As a regular expression would: the next try starts one character on (a tag may sit in a quoted value).
      open.lastIndex = m.index + 1;
      continue;
    }
    out += s.slice(kept, m.index);
    kept = close.end;
    open.lastIndex = close.end;
  }
  return kept === 0 ? s : out + s.slice(kept);
}

export interface SanitizeOptions {
  /** Cut the text to this many characters (default 20,000). */
  maxLength?: number;
}

/** How much more than `maxLength` is read: removals shrink the text, so some of it is kept to fill the cut. */
const READ_FACTOR = 4;

/**
 * Cleans text from outside the plan before it reaches a prompt, keeping it readable:
 * HTML comments and hidden elements removed, invisible/bidi Unicode removed, markdown that hides
 * text (image alt text, link titles, reference definitions, collapsed `<details>`) made visible or
 * dropped, and prompt-injection markers defused. Only the first `READ_FACTOR × maxLength`
 * characters are read, and every pattern is linear in what is read.
 */
export function sanitizeUntrusted(text: string, options: SanitizeOptions = {}): string {
  const max = options.maxLength ?? 20_000;
  const read = Math.max(max * READ_FACTOR, 1_000);
  // NFKC may lengthen text (one character becomes up to 18): cut before and after it.
  let s = text.length > read ? text.slice(0, read) : text;
  s = s.normalize("NFKC");
  if (s.length > read) s = s.slice(0, read);
  const cutEarly = text.length > read;
  s = s.replace(INVISIBLE, "").replace(CONTROL, "");
  // HTML comments (also unterminated ones, which hide the rest of the text in rendered Markdown).
  s = s.replace(/<!--[\s\S]*?(?:-->|$)/g, "");
  // Elements whose content is not displayed, and hidden attributes.
  s = removeElements(s, (name) => UNDISPLAYED.has(name));
  s = removeElements(s, (_name, attrs) => HIDDEN_ATTR.test(attrs));
  // <details>/<summary>: keep the text, drop the tags so nothing stays collapsed.
  s = s.replace(DETAILS_TAG, "");
  // Markdown images: the alt text is invisible in most renderings; keep it as plain text.
  s = s.replace(
    /!\[([^[\]]*)\]\(([^()\s]*)(?:\s+"[^"]*")?\)/g,
    (_m, alt: string, url: string) => `[image: ${alt.trim() || "untitled"}] (${url})`,
  );
  // Link titles ("hover text") are hidden; drop them.
  s = s.replace(/\]\(([^()\s]+)\s+"[^"]*"\)/g, "]($1)");
  // Reference-style link definitions never render; drop them (the address may be on the next line).
  s = s.replace(/^[ \t]{0,3}\[[^[\]\n]+\]:[ \t]*(?:\n[ \t]*)?\S+(?:[ \t]+(?:"[^"\n]*"|'[^'\n]*'|\([^)\n]*\)))?[ \t]*$/gm, "");
  // Remaining HTML tags: keep their text.
  s = s.replace(ANY_TAG, "");
  // Prompt-injection markers.
  s = s.replace(ROLE_TAGS, (m) => `[removed tag ${m.replace(/[<>|]/g, "")}]`);
  s = s.replace(ROLE_LINES, (_m, indent: string, role: string) => `${indent}(quoted) ${role}:`);
  for (const marker of INJECTION_MARKERS) s = s.replace(marker, (m) => `[quoted text: "${m}"]`);
  // Tidy: no runs of blank lines left behind by removals (a run of spaces is matched from its first).
  s = s
    .replace(/(?<![ \t])[ \t]+$/gm, "")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
  if (s.length > max || cutEarly) s = `${s.slice(0, max)}\n[… cut at ${max} characters]`;
  return s;
}

/**
 * Wraps sanitized outside text so the agent sees where it starts and ends and that it is data,
 * not instructions.
 */
export function quoteUntrusted(label: string, text: string): string {
  const clean = sanitizeUntrusted(text);
  return [`<untrusted-text source="${label.replace(/["<>]/g, "")}">`, clean.replaceAll("</untrusted-text>", ""), `</untrusted-text>`].join(
    "\n",
  );
}
