/**
 * Token usage read from the model API's answers as the runner's proxy streams them back
 * (docs/runner.md#budgets): Anthropic's Messages API (`message_start`'s usage, then `message_delta`'s
 * output tokens, streamed or in one JSON body) and OpenAI's Responses API (`response.completed`'s
 * usage) or Chat Completions (`usage`), and the Gemini API (`usageMetadata`, in every streamed chunk
 * so far, or in the one JSON body). The answer is forwarded untouched; only a bounded copy is read.
 */

export interface ModelUsage {
  requests: number;
  inputTokens: number;
  outputTokens: number;
  cacheCreationTokens: number;
  cacheReadTokens: number;
  /** The same, by the model the answers named. */
  byModel: Record<string, { inputTokens: number; outputTokens: number; cacheCreationTokens: number; cacheReadTokens: number }>;
}

export const emptyUsage = (): ModelUsage => ({
  requests: 0,
  inputTokens: 0,
  outputTokens: 0,
  cacheCreationTokens: 0,
  cacheReadTokens: 0,
  byModel: {},
});

/** The most of one answer that is read for its usage (the rest is still forwarded). */
const READ_MAX = 8 * 1024 * 1024;

type Json = Record<string, unknown>;
const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : 0);

/** Reads one answer's usage as its bytes pass; `end()` adds it to the total. */
export class AnswerUsage {
  #text = "";
  #model = "";
  #u = { inputTokens: 0, outputTokens: 0, cacheCreationTokens: 0, cacheReadTokens: 0 };
  constructor(private readonly sse: boolean) {}

  write(chunk: Buffer): void {
    if (this.#text.length < READ_MAX) this.#text += chunk.toString("utf8");
    if (!this.sse) return;
    let nl: number;
    while ((nl = this.#text.indexOf("\n")) >= 0) {
      const line = this.#text.slice(0, nl).trim();
      this.#text = this.#text.slice(nl + 1);
      if (line.startsWith("data:")) this.#event(line.slice(5).trim());
    }
  }

  #event(data: string): void {
    let e: Json;
    try {
      e = JSON.parse(data) as Json;
    } catch {
      return;
    }
    if (e.usageMetadata && typeof e.usageMetadata === "object") this.#gemini(e);
    else if (e.type === "message_start") this.#anthropic((e.message ?? {}) as Json);
    else if (e.type === "message_delta") {
      const u = (e.usage ?? {}) as Json;
      if (u.output_tokens !== undefined) this.#u.outputTokens = num(u.output_tokens);
    } else if (e.type === "response.completed") this.#openai((e.response ?? {}) as Json);
    else if (e.usage && typeof e.usage === "object") this.#openai(e);
  }

  #anthropic(m: Json): void {
    const u = (m.usage ?? {}) as Json;
    if (typeof m.model === "string") this.#model = m.model.slice(0, 100);
    this.#u = {
      inputTokens: num(u.input_tokens),
      outputTokens: num(u.output_tokens),
      cacheCreationTokens: num(u.cache_creation_input_tokens),
      cacheReadTokens: num(u.cache_read_input_tokens),
    };
  }

  #openai(r: Json): void {
    const u = (r.usage ?? {}) as Json;
    if (typeof r.model === "string") this.#model = r.model.slice(0, 100);
    const cached = num(((u.input_tokens_details ?? u.prompt_tokens_details ?? {}) as Json).cached_tokens);
    const input = num(u.input_tokens ?? u.prompt_tokens);
    // OpenAI counts cached tokens inside the input; they are priced apart.
    this.#u = {
      inputTokens: input - Math.min(cached, input),
      outputTokens: num(u.output_tokens ?? u.completion_tokens),
      cacheCreationTokens: 0,
      cacheReadTokens: cached,
    };
  }

  /**
   * Gemini: the usage so far (each chunk's replaces the last). Thinking tokens are billed as output;
   * cached tokens are inside the prompt's count and priced apart.
   */
  #gemini(r: Json): void {
    const u = r.usageMetadata as Json;
    if (typeof r.modelVersion === "string") this.#model = r.modelVersion.slice(0, 100);
    const cached = num(u.cachedContentTokenCount);
    const prompt = num(u.promptTokenCount) + num(u.toolUsePromptTokenCount);
    this.#u = {
      inputTokens: prompt - Math.min(cached, prompt),
      outputTokens: num(u.candidatesTokenCount) + num(u.thoughtsTokenCount),
      cacheCreationTokens: 0,
      cacheReadTokens: cached,
    };
  }

  /** Adds this answer to `total`. */
  end(total: ModelUsage): void {
    if (!this.sse) {
      try {
        const body = JSON.parse(this.#text) as Json;
        if (body.usageMetadata && typeof body.usageMetadata === "object") this.#gemini(body);
        else if (body.type === "message") this.#anthropic(body);
        else if (body.usage) this.#openai(body);
      } catch {
        // Not JSON (an error page): no usage.
      }
    } else if (this.#text.trim().startsWith("data:")) this.#event(this.#text.trim().slice(5).trim());
    const u = this.#u;
    if (!u.inputTokens && !u.outputTokens && !u.cacheCreationTokens && !u.cacheReadTokens) return;
    total.requests++;
    total.inputTokens += u.inputTokens;
    total.outputTokens += u.outputTokens;
    total.cacheCreationTokens += u.cacheCreationTokens;
    total.cacheReadTokens += u.cacheReadTokens;
    const m = (total.byModel[this.#model || "unknown"] ??= { inputTokens: 0, outputTokens: 0, cacheCreationTokens: 0, cacheReadTokens: 0 });
    m.inputTokens += u.inputTokens;
    m.outputTokens += u.outputTokens;
    m.cacheCreationTokens += u.cacheCreationTokens;
    m.cacheReadTokens += u.cacheReadTokens;
  }
}

/** Prices per million tokens, as the config's `prices` holds them. */
export interface Price {
  input_per_mtok: number;
  output_per_mtok: number;
  cache_write_per_mtok?: number;
  cache_read_per_mtok?: number;
}

/** The usage's cost by the price table (the model's row, else `default`); undefined when a model has no price. */
export function priceUsage(usage: ModelUsage, prices: Record<string, Price>): number | undefined {
  let usd = 0;
  for (const [model, u] of Object.entries(usage.byModel)) {
    const p = prices[model] ?? prices.default;
    if (!p) return undefined;
    usd +=
      (u.inputTokens * p.input_per_mtok +
        u.outputTokens * p.output_per_mtok +
        u.cacheCreationTokens * (p.cache_write_per_mtok ?? p.input_per_mtok) +
        u.cacheReadTokens * (p.cache_read_per_mtok ?? p.input_per_mtok)) /
      1e6;
  }
  return Math.round(usd * 1e6) / 1e6;
}
