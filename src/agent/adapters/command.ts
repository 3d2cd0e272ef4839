/**
 * Any executable as an agent. The contract: environment variables in — `FORGE_PROMPT`,
 * `FORGE_SYSTEM_PROMPT`, `FORGE_MODEL`, `FORGE_SESSION_DIR`, `FORGE_SPAWN_DEPTH`, `FORGE_TRACE_ID`,
 * `FORGE_AGENT_TYPE`, `FORGE_ALLOWED_TOOLS`, `FORGE_MAX_TURNS`, the report paths
 * (`FORGE_WALKTHROUGH_PATH`, `FORGE_QUESTION_FILE`, `FORGE_CHANGE_REQUEST_FILE`,
 * `FORGE_REFINEMENT_FILE`, `FORGE_SIGNAL_DIR`), `FORGE_RESUME_SESSION` for a resumed attempt's session — and the exit code (docs/runner.md#exit-codes) and files out. The
 * prompt is also written to stdin. Lines in Claude Code's stream-json shape are understood as such;
 * other lines are plain progress. No model key passes unless `passEnv` names it.
 */
import { pickEnv } from "../env.js";
import { StreamJsonParser } from "./claude.js";
import type { Adapter, AdapterInput, AdapterOutcome, Invocation } from "./types.js";

export const commandAdapter: Adapter = {
  name: "command",
  invocation(input: AdapterInput): Invocation {
    if (!input.command) throw new Error("adapter 'command' needs a command to run");
    return {
      command: input.command,
      args: input.args ?? [],
      env: {
        ...pickEnv(input.parentEnv, input.passEnv),
        ...input.forgeEnv,
        ...input.extraEnv,
        // The session a resumed attempt continues, for an agent that keeps sessions of its own.
        ...(input.resumeSession ? { FORGE_RESUME_SESSION: input.resumeSession } : {}),
      },
      stdin: input.prompt,
    };
  },
  parser: () => new CommandOutputParser(),
};

class CommandOutputParser extends StreamJsonParser {
  /** The last lines a plain agent printed on stderr (its error, as most programs print one). */
  readonly #stderr: string[] = [];

  override stderrLine(line: string): ReturnType<StreamJsonParser["stderrLine"]> {
    if (line.trim()) this.#stderr.push(line.trim());
    if (this.#stderr.length > 20) this.#stderr.shift();
    return super.stderrLine(line);
  }

  override finish(exitCode: number | null): AdapterOutcome {
    const outcome = super.finish(exitCode);
    const plain = outcome.result === undefined && this.plainLines.length > 0;
    outcome.ok = exitCode === 0;
    // Plain output: the last lines are the agent's final word.
    if (plain) outcome.result = this.plainLines.slice(-20).join("\n");
    // Why it failed, in its own words: its last error line on stderr, else its last line on stdout —
    // not its progress lines ("writing src/a.js", "Spent $0.05 so far") run together.
    if (!outcome.ok && plain && outcome.errorText === undefined) {
      const said = this.#stderr.findLast((l) => /\berror\b/i.test(l)) ?? this.#stderr.at(-1) ?? this.plainLines.at(-1)?.trim();
      if (said) outcome.errorText = said;
    }
    return outcome;
  }
}
