/**
 * Codex CLI, non-interactive:
 *
 *   codex exec --json --skip-git-repo-check --cd <cwd> --sandbox <mode>
 *              [--model M] [-c developer_instructions=<toml string>] -
 *
 * Flags relied on (`codex exec --help`):
 * - `--json`: one JSON event per stdout line — `thread.started` (`thread_id`), `turn.started`,
 *   `item.started` / `item.updated` / `item.completed` (`item.type`: `agent_message` with `text`,
 *   `reasoning`, `command_execution` with `command`/`exit_code`, `file_change` with `changes[]`,
 *   `mcp_tool_call`, `web_search`, `todo_list`, `error`), `turn.completed` (`usage`), `turn.failed`
 *   (`error.message`) and `error` (`message`).
 * - `-` as the prompt: read it from stdin (no argument-length limit; stdin is closed afterwards, so
 *   codex never waits on it).
 * - `--sandbox workspace-write` when the agent may edit or run commands, `read-only` otherwise —
 *   Codex has no per-tool allowlist; the sandbox is the closest equivalent.
 * - `--skip-git-repo-check`: the session directory of a sub-agent need not be a repository.
 * - `-c developer_instructions=…`: the system prompt (WHO/HOW), as a TOML string.
 * Codex has no turn limit flag; the wall-clock and idle timeouts bound it instead. Its key is
 * `OPENAI_API_KEY` (or `CODEX_API_KEY`); cost is not reported.
 */
import { pickEnv } from "../env.js";
import { oneLine, type Adapter, type AdapterInput, type AdapterOutcome, type Invocation, type OutputParser, type ProgressDraft } from "./types.js";

export const CODEX_ENV = ["OPENAI_*", "CODEX_*", "AZURE_OPENAI_API_KEY"];

const WRITE_TOOLS = new Set(["Write", "Edit", "MultiEdit", "NotebookEdit", "Bash"]);

export function codexArgs(input: Pick<AdapterInput, "systemPrompt" | "model" | "allowedTools" | "cwd">): string[] {
  const sandbox = input.allowedTools.some((t) => WRITE_TOOLS.has(t.replace(/\(.*$/, ""))) ? "workspace-write" : "read-only";
  const args = ["exec", "--json", "--skip-git-repo-check", "--cd", input.cwd, "--sandbox", sandbox];
  if (input.model) args.push("--model", input.model);
  // A JSON string is a valid TOML basic string.
  if (input.systemPrompt) args.push("-c", `developer_instructions=${JSON.stringify(input.systemPrompt)}`);
  args.push("-");
  return args;
}

export const codexAdapter: Adapter = {
  name: "codex",
  invocation(input: AdapterInput): Invocation {
    return {
      command: input.binary ?? "codex",
      args: codexArgs(input),
      env: { ...pickEnv(input.parentEnv, [...CODEX_ENV, ...input.passEnv]), ...input.forgeEnv, ...input.extraEnv },
      stdin: input.prompt,
    };
  },
  parser: () => new CodexJsonParser(),
};

type Json = Record<string, unknown>;

export class CodexJsonParser implements OutputParser {
  #turns = 0;
  #lastMessage: string | undefined;
  #threadId: string | undefined;
  readonly #errors: string[] = [];
  #turnFailed = false;
  #completed = false;
  readonly #running = new Set<string>();

  stdoutLine(line: string): ProgressDraft[] {
    const t = line.trim();
    if (!t) return [];
    let e: Json;
    try {
      e = JSON.parse(t) as Json;
      if (!e || typeof e !== "object") throw new Error("not an object");
    } catch {
      return [{ kind: "output", summary: oneLine(line) }];
    }
    switch (e.type) {
      case "thread.started":
        if (typeof e.thread_id === "string") this.#threadId = e.thread_id;
        return [{ kind: "system", summary: "thread started" }];
      case "turn.started":
        this.#turns++;
        return [{ kind: "system", summary: `turn ${this.#turns}` }];
      case "turn.completed":
        this.#completed = true;
        return [{ kind: "result", summary: oneLine(`turn completed${this.#lastMessage ? `: ${this.#lastMessage}` : ""}`) }];
      case "turn.failed": {
        const msg = String(((e.error ?? {}) as Json).message ?? "turn failed");
        this.#turnFailed = true;
        this.#errors.push(msg);
        return [{ kind: "result", summary: oneLine(`error: ${msg}`) }];
      }
      case "error": {
        const msg = String(e.message ?? "error");
        this.#errors.push(msg);
        return [{ kind: "stderr", summary: oneLine(msg) }];
      }
      case "item.started":
      case "item.updated":
      case "item.completed":
        return this.#item(String(e.type), (e.item ?? {}) as Json);
      default:
        return [{ kind: "system", summary: oneLine(String(e.type ?? "event")) }];
    }
  }

  #item(phase: string, item: Json): ProgressDraft[] {
    const done = phase === "item.completed";
    const id = typeof item.id === "string" ? item.id : undefined;
    if (id && (item.type === "command_execution" || item.type === "mcp_tool_call")) {
      if (phase === "item.started") this.#running.add(id);
      if (done) this.#running.delete(id);
    }
    switch (item.type) {
      case "agent_message":
        if (typeof item.text === "string" && done) {
          this.#lastMessage = item.text;
          return [{ kind: "text", summary: oneLine(item.text) }];
        }
        return [];
      case "reasoning":
        return done ? [{ kind: "text", summary: "thinking" }] : [];
      case "command_execution":
        return phase === "item.started"
          ? [{ kind: "tool_use", tool: "Bash", summary: oneLine(`Bash ${String(item.command ?? "")}`) }]
          : done
            ? [{ kind: "tool_result", summary: oneLine(`exit ${String(item.exit_code ?? "?")}: ${String(item.aggregated_output ?? "")}`) }]
            : [];
      case "file_change": {
        const changes = (Array.isArray(item.changes) ? item.changes : []) as Json[];
        return done ? [{ kind: "tool_use", tool: "Edit", summary: oneLine(`Edit ${changes.map((c) => `${String(c.kind ?? "")} ${String(c.path ?? "")}`).join(", ")}`) }] : [];
      }
      case "mcp_tool_call":
        return phase === "item.started" ? [{ kind: "tool_use", tool: String(item.tool ?? "mcp"), summary: oneLine(`${String(item.server ?? "")} ${String(item.tool ?? "")}`) }] : [];
      case "web_search":
        return phase === "item.started" ? [{ kind: "tool_use", tool: "WebSearch", summary: oneLine(`WebSearch ${String(item.query ?? "")}`) }] : [];
      case "error":
        return [{ kind: "stderr", summary: oneLine(String(item.message ?? "error")) }];
      default:
        return done ? [{ kind: "system", summary: oneLine(String(item.type ?? "item")) }] : [];
    }
  }

  stderrLine(line: string): ProgressDraft[] {
    return line.trim() ? [{ kind: "stderr", summary: oneLine(line) }] : [];
  }

  turns(): number {
    return this.#turns;
  }

  busy(): boolean {
    return this.#running.size > 0;
  }

  finish(exitCode: number | null): AdapterOutcome {
    // Codex reports transient stream errors (`error`) and retries them itself; only a failed turn or a
    // non-zero exit is a failure, but every message is kept for the rate-limit check.
    const outcome: AdapterOutcome = { ok: exitCode === 0 && !this.#turnFailed, turns: this.#turns };
    if (this.#lastMessage !== undefined) outcome.result = this.#lastMessage;
    if (this.#threadId) outcome.sessionId = this.#threadId;
    if (this.#errors.length > 0) outcome.errorText = this.#errors.join("\n");
    else if (exitCode === 0 && !this.#completed) outcome.errorText = "codex ended without turn.completed";
    return outcome;
  }
}
