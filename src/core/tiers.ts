/**
 * Model tiers (docs/runner.md#model-tiers): which model each agent session uses. Every session has a
 * role — from its agent kind and its stage — and every role a default tier, as the composition
 * hierarchy gives them: implementation `high`, research and analysis `medium`, validation `low`, the
 * Captain (sequencing and routing decisions) `high`. A tier becomes a concrete model through the
 * adapter's tier table (`agent.tiers` in .github/forge.yml over `DEFAULT_TIER_MODELS`).
 *
 * Who decides, first match wins: the stage's `model` in .forge/stages.yml (sessions of the task's
 * own kind), the task's `model` (its implementer sessions), `agent.models.<role>`, `agent.model` (every
 * role, as before tiers), the role's default tier. Plain data shared by the App (validation), the
 * runner and `forge spawn` (sub-agents inherit the table through `FORGE_MODELS`).
 */
import { z } from "zod";

export const TIER_NAMES = ["low", "medium", "high"] as const;
export type TierName = (typeof TIER_NAMES)[number];

/** What a session is for, which decides its default tier. */
export const MODEL_ROLES = ["implementer", "analyst", "verifier", "sentinel", "captain"] as const;
export type ModelRole = (typeof MODEL_ROLES)[number];

export const DEFAULT_ROLE_TIERS: Readonly<Record<ModelRole, TierName>> = {
  implementer: "high",
  analyst: "medium",
  verifier: "low",
  sentinel: "low",
  captain: "high",
};

/**
 * Each adapter's tiers as models. Claude Code takes its own aliases (it resolves them to the newest
 * model of the family). Codex runs one model at three reasoning efforts: a tier also reaches it as
 * `model_reasoning_effort` (src/agent/adapters/codex.ts). Gemini CLI takes Gemini model ids (its
 * `auto` router would add a call of its own). opencode and Qwen Code take the model id their
 * Chat Completions endpoint (the model proxy's upstream) knows. Copilot CLI, on a provider of one's own (Anthropic's API
 * through the model proxy), takes Anthropic's model ids. A command agent gets the tier itself
 * (`FORGE_MODEL_TIER`) and the model only when the config names one.
 */
export const DEFAULT_TIER_MODELS: Readonly<Record<string, Readonly<Record<TierName, string>>>> = {
  claude: { low: "haiku", medium: "sonnet", high: "opus" },
  codex: { low: "gpt-5.5", medium: "gpt-5.5", high: "gpt-5.5" },
  gemini: { low: "gemini-2.5-flash", medium: "gemini-2.5-pro", high: "gemini-2.5-pro" },
  opencode: { low: "gpt-5.5", medium: "gpt-5.5", high: "gpt-5.5" },
  qwen: { low: "qwen3-coder-flash", medium: "qwen3-coder-plus", high: "qwen3-coder-plus" },
  copilot: { low: "claude-haiku-4-5", medium: "claude-sonnet-4-5", high: "claude-opus-4-5" },
};

/** Stages whose sessions are not implementation (every other stage's are). */
const STAGE_ROLES: Readonly<Record<string, ModelRole>> = {
  plan: "analyst",
  walkthrough: "analyst",
  verify: "verifier",
  validate: "verifier",
  test: "verifier",
  sentinel: "sentinel",
};

/** The role of a session of agent kind `kind` in stage `stage`: sentinels and Captains by kind, others by stage. */
export function modelRoleOf(kind: string, stage?: string): ModelRole {
  if (kind === "sentinel" || kind.startsWith("sentinel-")) return "sentinel";
  if (kind === "captain") return "captain";
  const base = stage?.replace(/-retry$/, "");
  return (base !== undefined ? STAGE_ROLES[base] : undefined) ?? "implementer";
}

/** A model id as a CLI takes it: never an option (`-…`), never spaces or shell characters; `[1m]` may end it. */
export const MODEL_ID = /^[A-Za-z0-9][A-Za-z0-9._:/@-]{0,127}(\[1m\])?$/;

export function isTierName(value: string): value is TierName {
  return (TIER_NAMES as readonly string[]).includes(value);
}

/** `high-tier` (the hierarchy's spelling) is `high`. */
function tierOf(spec: string): string | undefined {
  if (isTierName(spec)) return spec;
  const m = /^([a-z]+)-tier$/.exec(spec);
  return m ? m[1] : undefined;
}

/** Why `spec` is neither a tier nor a model id, or undefined when it is one. */
export function modelSpecProblem(spec: string): string | undefined {
  const tier = tierOf(spec);
  if (tier !== undefined && !isTierName(tier)) return `unknown tier '${spec}': use ${TIER_NAMES.join(", ")} or a model id`;
  if (tier === undefined && !MODEL_ID.test(spec))
    return `'${spec}' is neither a tier (${TIER_NAMES.join(", ")}) nor a model id (letters, digits and . _ : / @ -, not starting with -)`;
  return undefined;
}

/** A tier (`low`, `medium`, `high`, or `high-tier`) or a model id. */
export const modelSpecSchema = z
  .string()
  .min(1)
  .superRefine((v, ctx) => {
    const problem = modelSpecProblem(v);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  })
  .describe("A tier (low, medium, high) or a model id.");

/** A model choice: the model to pass (absent: the CLI's own default), the tier it came from, and where it was decided. */
export interface ModelChoice {
  model?: string;
  tier?: TierName;
  role: ModelRole;
  source: "stage" | "task" | "role" | "agent.model" | "default";
}

/** What decides the models of one adapter's sessions: the config's part, resolved by `modelPlan`. */
export interface ModelPlan {
  adapter: string;
  /** Each role's spec (tier or id), config over defaults; `agent.model` already folded in. */
  roles: Record<ModelRole, { spec: string; source: ModelChoice["source"] }>;
  /** The adapter's tiers as models. */
  tiers: Partial<Record<TierName, string>>;
  /** Claude Code on Anthropic's API with `agent.long_context`: its models' 1M-token variant (`[1m]`). */
  longContext?: boolean;
}

export interface ModelConfig {
  model?: string | undefined;
  models?: Partial<Record<ModelRole, string>> | undefined;
  tiers?: Partial<Record<string, Partial<Record<TierName, string>>>> | undefined;
  long_context?: boolean | undefined;
}

/**
 * Whether the job's environment sends Claude Code to Anthropic's own API: not to another base URL
 * (an alternative provider or gateway), Vertex or Bedrock, which do not take the 1M-context beta.
 */
export function onAnthropicApi(env: Readonly<Record<string, string | undefined>>): boolean {
  const base = env.ANTHROPIC_BASE_URL;
  if (base && !/^https:\/\/api\.anthropic\.com(\/|$)/.test(base)) return false;
  return env.CLAUDE_CODE_USE_VERTEX !== "1" && env.CLAUDE_CODE_USE_BEDROCK !== "1";
}

/** The 1M-token variant of a Claude model (Claude Code sends the `context-1m` beta for it); Haiku has none. */
export function longContextModel(model: string): string {
  return model.endsWith("[1m]") || /haiku/i.test(model) ? model : `${model}[1m]`;
}

/**
 * The plan of an adapter's models from the config's `agent` section. `anthropicApi`: the job talks
 * to Anthropic's own API (`onAnthropicApi`); `long_context` applies only then, and only to Claude Code.
 */
export function modelPlan(adapter: string, agent: ModelConfig, opts: { anthropicApi?: boolean } = {}): ModelPlan {
  const roles = {} as ModelPlan["roles"];
  for (const role of MODEL_ROLES) {
    const own = agent.models?.[role];
    roles[role] =
      own !== undefined
        ? { spec: own, source: "role" }
        : agent.model !== undefined
          ? { spec: agent.model, source: "agent.model" }
          : { spec: DEFAULT_ROLE_TIERS[role], source: "default" };
  }
  const longContext = agent.long_context === true && adapter === "claude" && opts.anthropicApi !== false;
  return { adapter, roles, tiers: { ...DEFAULT_TIER_MODELS[adapter], ...agent.tiers?.[adapter] }, ...(longContext ? { longContext } : {}) };
}

/** `spec` as a choice: a tier becomes the adapter's model for it (none when the adapter has no table). */
export function specChoice(
  plan: Pick<ModelPlan, "tiers" | "longContext">,
  spec: string,
  role: ModelRole,
  source: ModelChoice["source"],
): ModelChoice {
  const long = (m: string) => (plan.longContext ? longContextModel(m) : m);
  const tier = tierOf(spec);
  if (tier !== undefined && isTierName(tier)) {
    const model = plan.tiers[tier];
    return { ...(model !== undefined ? { model: long(model) } : {}), tier, role, source };
  }
  return { model: long(spec), role, source };
}

/**
 * The model of a session of `kind` in `stage`. `stageSpec` (the stage's own `model`) applies to the
 * task's own kind; `taskSpec` (the task's front matter) to its implementer sessions.
 */
export function chooseModel(
  plan: ModelPlan,
  kind: string,
  stage?: string,
  own: { stageSpec?: string | undefined; taskSpec?: string | undefined } = {},
): ModelChoice {
  const role = modelRoleOf(kind, stage);
  if (own.stageSpec !== undefined) return specChoice(plan, own.stageSpec, role, "stage");
  if (own.taskSpec !== undefined && role === "implementer") return specChoice(plan, own.taskSpec, role, "task");
  const r = plan.roles[role];
  return specChoice(plan, r.spec, role, r.source);
}

/** `FORGE_MODELS`: the models sub-agents take, per role (`forge spawn` without `--model`). */
export const MODELS_ENV = "FORGE_MODELS";

/** Each role's choice as the JSON of `FORGE_MODELS`: `{ "sentinel": { "model": "haiku", "tier": "low" }, … }`. */
export function modelsEnvValue(plan: ModelPlan): string {
  const out: Record<string, { model?: string; tier?: TierName }> = {};
  for (const role of MODEL_ROLES) {
    const c = specChoice(plan, plan.roles[role].spec, role, plan.roles[role].source);
    out[role] = { ...(c.model !== undefined ? { model: c.model } : {}), ...(c.tier !== undefined ? { tier: c.tier } : {}) };
  }
  return JSON.stringify(out);
}

const envChoiceSchema = z.record(
  z.enum(MODEL_ROLES),
  z.object({ model: z.string().regex(MODEL_ID).optional(), tier: z.enum(TIER_NAMES).optional() }).strict(),
);

/** A sub-agent's model from `FORGE_MODELS` (its parent's table), or undefined when there is none or it is malformed. */
export function modelFromEnv(value: string | undefined, kind: string): { model?: string; tier?: TierName } | undefined {
  if (!value) return undefined;
  try {
    const parsed = envChoiceSchema.safeParse(JSON.parse(value));
    return parsed.success ? parsed.data[modelRoleOf(kind)] : undefined;
  } catch {
    return undefined;
  }
}
