/**
 * What the attempt's agent has spent so far (docs/runner.md#budgets), from each adapter's own
 * accounting: Claude Code's reported cost per session (its `result`), Codex's tokens per turn priced
 * by the config's `prices`, and a command agent's `FORGE_SPEND_FILE` (JSON `{ cost_usd?,
 * input_tokens?, output_tokens? }`, its running total). The highest of the dollar figures counts, and
 * the tokens likewise: a source that reports nothing does not lower what another reported. The
 * runner's model proxy measures the same calls from the model's answers (their usage, priced by
 * `prices`), a second figure that counts as well and that result.json keeps apart (`proxy`).
 */
import path from "node:path";
import { readAgentFileSync } from "../../../src/agent/agent-files.js";
import type { ForgeConfig } from "../../../src/core/schemas/config.js";
import { priceUsage, type ModelUsage } from "../../../src/agent/model-usage.js";
import type { Progress } from "../agent-runner.js";

export interface Spent {
  usd?: number;
  tokens?: number;
  /** The tokens split, from the source that counted the most. */
  split?: { input: number; output: number };
}

/** The largest spend file read (bytes): the agent writes it, the runner only reads a few numbers. */
const SPEND_FILE_MAX = 4_096;

export class SpendMeter {
  /** Cost of the sessions that ended, and the running session's so far (by stage). */
  readonly #sessionUsd = new Map<string, number>();
  #codexTokens = { input: 0, output: 0 };
  #file: { usd?: number; split?: { input: number; output: number } } = {};

  constructor(
    readonly spendFile: string,
    private readonly prices: ForgeConfig["prices"],
    private readonly model: string | undefined,
    /** The runner's model proxy's reading of the model's answers, when the agent goes through it. */
    private readonly proxyUsage?: () => ModelUsage,
  ) {}

  /** What the proxy measured: requests, tokens, and their cost by the price table (undefined when a model has no price). */
  get proxy(): { requests: number; input: number; output: number; usd?: number } | undefined {
    const u = this.proxyUsage?.();
    if (!u || u.requests === 0) return undefined;
    const usd = priceUsage(u, this.prices);
    return {
      requests: u.requests,
      input: u.inputTokens + u.cacheCreationTokens + u.cacheReadTokens,
      output: u.outputTokens,
      ...(usd !== undefined ? { usd } : {}),
    };
  }

  /** A progress event that carries spend. */
  onProgress(p: Progress, session: number): void {
    if (p.costUsd !== undefined) this.#sessionUsd.set(`${session}:${p.stage ?? ""}`, p.costUsd);
    if (p.tokens)
      this.#codexTokens = { input: this.#codexTokens.input + p.tokens.input, output: this.#codexTokens.output + p.tokens.output };
  }

  /** Reads the spend file again (missing, too large or not JSON: what was read before stands). */
  readFile(): void {
    let text: string;
    try {
      // The agent's file: never through a link, never a FIFO that would block the runner.
      const buf = readAgentFileSync(path.dirname(this.spendFile), this.spendFile, { maxBytes: SPEND_FILE_MAX });
      if (!buf) return;
      text = buf.toString("utf8");
    } catch {
      return;
    }
    if (text.length > SPEND_FILE_MAX) return;
    try {
      const j = JSON.parse(text) as Record<string, unknown>;
      const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : undefined);
      const usd = num(j.cost_usd);
      const input = num(j.input_tokens);
      const output = num(j.output_tokens);
      this.#file = {
        ...(usd !== undefined ? { usd } : {}),
        ...(input !== undefined || output !== undefined
          ? { split: { input: Math.round(input ?? 0), output: Math.round(output ?? 0) } }
          : {}),
      };
    } catch {
      // Half-written: read again next time.
    }
  }

  /** Tokens priced by the config's table: the model's row, else `default`; undefined when neither is there. */
  price(input: number, output: number, model = this.model): number | undefined {
    const row = (model !== undefined ? this.prices[model] : undefined) ?? this.prices.default;
    return row ? (input * row.input_per_mtok + output * row.output_per_mtok) / 1e6 : undefined;
  }

  get spent(): Spent {
    const sessions = [...this.#sessionUsd.values()];
    const reported = sessions.length ? sessions.reduce((a, b) => a + b, 0) : undefined;
    const codexTokens = this.#codexTokens.input + this.#codexTokens.output;
    const codexUsd = codexTokens ? this.price(this.#codexTokens.input, this.#codexTokens.output) : undefined;
    const proxy = this.proxy;
    const usd = [reported, codexUsd, this.#file.usd, proxy?.usd].filter((x): x is number => x !== undefined);
    const candidates = [
      codexTokens ? this.#codexTokens : undefined,
      this.#file.split,
      proxy ? { input: proxy.input, output: proxy.output } : undefined,
    ].filter((x): x is { input: number; output: number } => x !== undefined);
    const split = candidates.sort((a, b) => b.input + b.output - (a.input + a.output))[0];
    return {
      ...(usd.length ? { usd: Math.round(Math.max(...usd) * 1e6) / 1e6 } : {}),
      ...(split ? { tokens: split.input + split.output, split: { ...split } } : {}),
    };
  }

  /**
   * The model proxy's gate (src/agent/model-proxy.ts): once the spend has reached the cap, why no
   * further model call goes out (the spend file read again first). Worded for the agent's CLI, which
   * shows it as the API's error; not a rate limit, so nothing waits and retries.
   */
  refusal(cap: Spent): string | undefined {
    this.readFile();
    const s = this.spent;
    if (cap.usd !== undefined && (s.usd ?? 0) >= cap.usd)
      return `Forge: this attempt's budget is spent ($${(s.usd ?? 0).toFixed(2)} of $${cap.usd.toFixed(2)}); the model is not called again in this attempt.`;
    if (cap.tokens !== undefined && (s.tokens ?? 0) >= cap.tokens)
      return `Forge: this attempt's budget is spent (${s.tokens ?? 0} of ${cap.tokens} tokens); the model is not called again in this attempt.`;
    return undefined;
  }

  /** What the spend crossed, if anything. */
  over(cap: Spent): { limit: Spent; spent: Spent } | undefined {
    const s = this.spent;
    if ((cap.usd !== undefined && (s.usd ?? 0) > cap.usd) || (cap.tokens !== undefined && (s.tokens ?? 0) > cap.tokens))
      return { limit: cap, spent: s };
    return undefined;
  }
}
