/**
 * Which agent runs a task (docs/runner.md#agents-per-task): the task's own `agent` (front matter),
 * else its agent kind's in `.github/forge.yml` (`agent.kinds.<kind>`), else `agent.adapter`. Each is
 * one adapter or an ordered list: the first runs the task, and when an attempt ends on the
 * provider's side — a usage limit, or a rate limit the job could not wait out — the next attempt goes
 * to the next one instead of pausing the run (docs/executor.md#agent-fallback).
 *
 * An agent's name is untrusted text (a plan's front matter): it is only ever one of Forge's adapter
 * names, looked up in a table, never a command, a path or an option. Plain data shared by the App,
 * `forge validate` and the runner.
 */
import { z } from "zod";
import { ADAPTERS, type Adapter } from "./schemas/adapters.js";
import { isTierName, modelSpecSchema } from "./tiers.js";

/** The most agents one list may name. */
export const MAX_AGENTS = 5;

export function isAdapterName(v: unknown): v is Adapter {
  return typeof v === "string" && (ADAPTERS as readonly string[]).includes(v);
}

/** Messages of the problems below start so, which gives them their rule (`unknown-agent`, `model-not-for-agent`). */
export const AGENT_PROBLEM = { unknown: "unknown agent", model: "model not for agent" } as const;

/** What an unknown name is called in a message: quoted, cut, on one line. */
const shown = (v: string) => JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);

function unknownAgent(name: string): string {
  return `${AGENT_PROBLEM.unknown} ${shown(name)}: use one of ${ADAPTERS.join(", ")}`;
}

/**
 * `agent:` as written: one adapter name or an ordered list of them (the fallback order). Every name
 * is checked against Forge's adapters; what is not one is refused with `unknown-agent`.
 */
export const agentChoiceSchema = z
  .union([z.string(), z.array(z.string()).min(1).max(MAX_AGENTS)])
  .superRefine((v, ctx) => {
    const names = typeof v === "string" ? [v] : v;
    names.forEach((name, i) => {
      if (!isAdapterName(name)) ctx.addIssue({ code: "custom", path: typeof v === "string" ? [] : [i], message: unknownAgent(name) });
    });
  })
  .describe(
    `The agent that runs it — one of ${ADAPTERS.join(", ")} — or an ordered list of them: the first runs it, and an attempt stopped by its provider (a usage limit, a rate limit) hands the next attempt to the next one (at most ${MAX_AGENTS}).`,
  );

/** A checked choice as a list. */
export function agentList(choice: string | readonly string[] | undefined): Adapter[] | undefined {
  if (choice === undefined) return undefined;
  const names = typeof choice === "string" ? [choice] : choice;
  return names.every(isAdapterName) && names.length > 0 ? [...names] : undefined;
}

/**
 * The model families an adapter's CLI can talk to: a model id of another known family cannot be
 * given to it (Claude Code speaks Anthropic's API, Codex OpenAI's, Gemini CLI Gemini's). An adapter
 * not listed (a `command`, or a CLI that reaches many providers) takes any model id, and so does
 * every adapter for an id of no known family (a gateway's own names). A tier fits every adapter.
 */
const FAMILIES: Readonly<Record<string, RegExp>> = {
  anthropic: /^(?:claude(?:-|$)|haiku|sonnet|opus|(?:[a-z]{2}\.)?anthropic\.)/i,
  openai: /^(?:gpt-|o[1-9](?:-|$)|codex-|chatgpt-)/i,
  google: /^(?:gemini-|gemma-)/i,
};
export const ADAPTER_FAMILIES: Readonly<Partial<Record<string, readonly string[]>>> = {
  claude: ["anthropic"],
  codex: ["openai"],
  gemini: ["google"],
  copilot: ["anthropic"],
};

/** Why `adapter` cannot take the model spec `spec` (a tier or a model id), or undefined when it can. */
export function modelAgentProblem(adapter: string, spec: string): string | undefined {
  const takes = ADAPTER_FAMILIES[adapter];
  if (!takes || isTierName(spec.replace(/-tier$/, ""))) return undefined;
  const family = Object.keys(FAMILIES).find((f) => FAMILIES[f]!.test(spec));
  if (family === undefined || takes.includes(family)) return undefined;
  return `${AGENT_PROBLEM.model}: ${adapter} cannot take the ${family} model ${shown(spec)}; name a tier (low, medium, high), which each agent maps to its own model, or a model of its own`;
}

/** An agent kind's choice in the config: its agent(s) and the model (tier or id) of its implementer sessions. */
export const kindAgentSchema = z
  .object({
    agent: agentChoiceSchema.optional(),
    model: modelSpecSchema.optional().describe("A tier or a model id for the kind's implementer sessions, under a task's own `model`."),
  })
  .strict()
  .superRefine((v, ctx) => checkModelFits(v.agent, v.model, ctx));

/** A model id every listed agent must be able to take, as a problem at `model`. */
export function checkModelFits(agent: string | readonly string[] | undefined, model: string | undefined, ctx: z.RefinementCtx): void {
  const agents = agentList(agent);
  if (!agents || model === undefined) return;
  for (const a of agents) {
    const problem = modelAgentProblem(a, model);
    if (problem) {
      ctx.addIssue({ code: "custom", path: ["model"], message: problem });
      return;
    }
  }
}

/** The agent kinds a config names: the task agent types (a follow-up is a type 1). */
export const AGENT_KINDS = ["1", "2", "3", "refinery"] as const;

/** What decides a task's agents: its own front matter, and the config's. */
export interface AgentConfig {
  adapter: string;
  kinds?: Partial<Record<string, { agent?: string | readonly string[] | undefined; model?: string | undefined }>> | undefined;
}

/** A node's agents in fallback order, and where they were chosen. Never empty. */
export function agentsOf(
  node: { agentType: string; agents?: readonly string[] | undefined },
  agent: AgentConfig,
): { agents: Adapter[]; source: "task" | "kind" | "config" } {
  const own = agentList(node.agents);
  if (own) return { agents: own, source: "task" };
  const kind = agentList(agent.kinds?.[node.agentType]?.agent);
  if (kind) return { agents: kind, source: "kind" };
  return { agents: isAdapterName(agent.adapter) ? [agent.adapter] : ["claude"], source: "config" };
}

/** The model spec a kind's config gives its implementer sessions, under the task's own. */
export function kindModel(agentType: string, agent: AgentConfig): string | undefined {
  return agent.kinds?.[agentType]?.model;
}

/** The rule of a problem one of this module's checks raised, from its message. */
export function agentRuleOf(message: string): "unknown-agent" | "model-not-for-agent" | undefined {
  if (message.startsWith(AGENT_PROBLEM.unknown)) return "unknown-agent";
  if (message.startsWith(AGENT_PROBLEM.model)) return "model-not-for-agent";
  return undefined;
}

/** How long a reason for a change of agent may be, in the journal and the dispatch. */
export const AGENT_REASON_MAX = 300;

/**
 * The agent of an attempt as its dispatch tells the job (`context.agent`): the adapter, and when it
 * is not the previous attempt's, which one that was and why it changed. Always inline in the
 * dispatch (it is short), so the job knows its agent before it reads anything else.
 */
export const dispatchAgentSchema = z
  .object({
    adapter: z.enum(ADAPTERS).describe("The adapter the attempt runs on."),
    switched: z
      .object({
        from: z.enum(ADAPTERS).describe("The previous attempt's adapter."),
        reason: z.string().max(AGENT_REASON_MAX).describe("Why the attempt runs on another agent."),
      })
      .strict()
      .optional()
      .describe("The attempt goes to the next agent of the task's list: from which, and why."),
  })
  .strict()
  .describe("The agent the attempt runs on (docs/runner.md#agents-per-task).");
export type DispatchAgent = z.infer<typeof dispatchAgentSchema>;
