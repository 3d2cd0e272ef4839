/**
 * Secrets and untrusted text.
 *
 * - `Masker` replaces every known secret value in text before it reaches a log, an events file or a
 *   transcript, and registers the values with `@actions/core` `setSecret` inside GitHub Actions so the
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
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g,
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
const ROLE_LINES = /^(\s*)(system|assistant|human)\s*:/gim;

export interface SanitizeOptions {
  /** Cut the text to this many characters (default 20,000). */
  maxLength?: number;
}

/**
 * Cleans text from outside the plan before it reaches a prompt, keeping it readable:
 * HTML comments and hidden elements removed, invisible/bidi Unicode removed, markdown that hides
 * text (image alt text, link titles, reference definitions, collapsed `<details>`) made visible or
 * dropped, and prompt-injection markers defused.
 */
export function sanitizeUntrusted(text: string, options: SanitizeOptions = {}): string {
  let s = text.normalize("NFKC");
  s = s.replace(INVISIBLE, "").replace(CONTROL, "");
  // HTML comments (also unterminated ones, which hide the rest of the text in rendered Markdown).
  s = s.replace(/<!--[\s\S]*?(?:-->|$)/g, "");
  // Elements whose content is not displayed, and hidden attributes.
  s = s.replace(/<(script|style|template|noscript)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, "");
  s = s.replace(/<([a-z][a-z0-9]*)\b[^>]*\b(?:hidden|style\s*=\s*["'][^"']*display\s*:\s*none)[^>]*>[\s\S]*?<\/\1\s*>/gi, "");
  // <details>/<summary>: keep the text, drop the tags so nothing stays collapsed.
  s = s.replace(/<\/?(?:details|summary)\b[^>]*>/gi, "");
  // Markdown images: the alt text is invisible in most renderings; keep it as plain text.
  s = s.replace(
    /!\[([^\]]*)\]\(([^)\s]*)(?:\s+"[^"]*")?\)/g,
    (_m, alt: string, url: string) => `[image: ${alt.trim() || "untitled"}] (${url})`,
  );
  // Link titles ("hover text") are hidden; drop them.
  s = s.replace(/\]\(([^)\s]+)\s+"[^"]*"\)/g, "]($1)");
  // Reference-style link definitions never render; drop them.
  s = s.replace(/^\s{0,3}\[[^\]]+\]:\s*\S+(?:\s+(?:"[^"]*"|'[^']*'|\([^)]*\)))?\s*$/gm, "");
  // Remaining HTML tags: keep their text.
  s = s.replace(/<\/?[a-z][a-z0-9-]*\b[^>]*>/gi, "");
  // Prompt-injection markers.
  s = s.replace(ROLE_TAGS, (m) => `[removed tag ${m.replace(/[<>|]/g, "")}]`);
  s = s.replace(ROLE_LINES, (_m, indent: string, role: string) => `${indent}(quoted) ${role}:`);
  for (const marker of INJECTION_MARKERS) s = s.replace(marker, (m) => `[quoted text: "${m}"]`);
  // Tidy: no runs of blank lines left behind by removals.
  s = s
    .replace(/[ \t]+$/gm, "")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
  const max = options.maxLength ?? 20_000;
  if (s.length > max) s = `${s.slice(0, max)}\n[… cut at ${max} characters]`;
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
