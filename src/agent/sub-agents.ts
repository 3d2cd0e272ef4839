/**
 * The cap on sub-agents per job (docs/runner.md#sub-agent-cap): depth bounds how deep sessions nest,
 * this bounds how many there are. Every session admitted below the job's own stage sessions — a
 * `forge spawn` at any depth, type 3's subtasks, the refinery's helpers — takes one place; once the
 * places are gone a spawn is refused with exit 2 and `error.code` `sub_agents_exceeded`, the refusal
 * kept here for the attempt's record (result.json's `sub_agents`) and said in the live progress.
 *
 * One count is shared by all the stages of a job: the runner makes it and passes it in every
 * session's options; each stage's hierarchy service (hierarchy-service.ts) consults it, so a
 * `forge spawn` three levels down counts against the same number as a subtask Forge started itself.
 */

/** The agent-invocation design's hard limit on agents in total (10), the default of `agent.max_sub_agents`. */
export const DEFAULT_MAX_SUB_AGENTS = 10;

/** Refusals kept in the record (the count goes on beyond). */
const REFUSALS_KEPT = 20;

export interface SubAgentRefusal {
  at: string;
  /** The type the caller asked for. */
  agentType?: string;
  /** Depth the refused sub-agent would have run at. */
  depth: number;
  message: string;
}

/** What result.json's `sub_agents` records. */
export interface SubAgentSummary {
  limit: number;
  spawned: number;
  refused: number;
  refusals?: SubAgentRefusal[];
}

export class SubAgentCap {
  #spawned = 0;
  #refused = 0;
  readonly #refusals: SubAgentRefusal[] = [];
  readonly #listeners: Array<(r: SubAgentRefusal) => void> = [];

  constructor(
    readonly limit: number = DEFAULT_MAX_SUB_AGENTS,
    private readonly now: () => number = Date.now,
  ) {
    if (!Number.isInteger(limit) || limit < 0) throw new Error(`the sub-agent cap must be a whole number ≥ 0, not ${limit}`);
  }

  get spawned(): number {
    return this.#spawned;
  }

  /**
   * Takes a place for a sub-agent at `depth`: undefined when it may run, else the refusal's message
   * (recorded, and told to whoever listens).
   */
  take(depth: number, agentType?: string): string | undefined {
    if (this.#spawned < this.limit) {
      this.#spawned++;
      return undefined;
    }
    const message = `this job has already started ${this.#spawned} sub-agent${this.#spawned === 1 ? "" : "s"}, its cap (agent.max_sub_agents: ${this.limit}, counted across every depth); no more may be spawned — finish the work in this session, or stop and say what is left`;
    const refusal: SubAgentRefusal = { at: new Date(this.now()).toISOString(), ...(agentType ? { agentType } : {}), depth, message };
    this.#refused++;
    if (this.#refusals.length < REFUSALS_KEPT) this.#refusals.push(refusal);
    for (const l of this.#listeners) {
      try {
        l(refusal);
      } catch {
        /* observers never break a spawn */
      }
    }
    return message;
  }

  /** Called on each refusal (the runner's live progress). */
  onRefusal(listener: (r: SubAgentRefusal) => void): void {
    this.#listeners.push(listener);
  }

  summary(): SubAgentSummary {
    return {
      limit: this.limit,
      spawned: this.#spawned,
      refused: this.#refused,
      ...(this.#refusals.length ? { refusals: this.#refusals.map((r) => ({ ...r })) } : {}),
    };
  }
}
