/**
 * Codex CLI, non-interactive (checked against the real `codex exec` 0.169.0, offline, in
 * test/agent/real/, its row):
 *
 *   codex exec --json --skip-git-repo-check --cd <cwd> -c allow_login_shell=false
 *              --sandbox workspace-write
 *              -c approval_policy="never" -c sandbox_workspace_write.network_access=true
 *              [--add-dir <session dir>…] [--model M] [-c developer_instructions=<toml string>] -
 *
 * or, where the machine is the sandbox (see codexSandbox), `--dangerously-bypass-approvals-and-sandbox`
 * in place of the sandbox flags. What the CLI does with them:
 * - `--json`: one JSON event per stdout line — `thread.started` (`thread_id`), `turn.started`,
 *   `item.started` / `item.updated` / `item.completed` (`item.type`: `agent_message` with `text`,
 *   `reasoning` with `text`, `command_execution` with `command`/`aggregated_output`/`exit_code`
 *   (its `exec_command` tool), `file_change` with `changes[]` of `{ path, kind }` (its
 *   `apply_patch` tool), `mcp_tool_call`, `web_search`, `todo_list`, `error` — also used for
 *   warnings such as an unknown model's metadata), `turn.completed` (`usage`: `input_tokens`,
 *   `cached_input_tokens`, `output_tokens`, `reasoning_output_tokens`), `turn.failed`
 *   (`error.message`) and `error` (`message`, e.g. `exceeded retry limit, last status: 429 Too
 *   Many Requests, request id: …`). One `codex exec` is one Codex turn, however many model calls
 *   and tool calls it makes.
 * - `-` as the prompt: read it from stdin (no argument-length limit; stdin is closed afterwards, so
 *   codex never waits on it).
 * - `--sandbox workspace-write`: commands and patches may write in `--cd`, `/tmp` and each
 *   `--add-dir`; everything else is read-only. Forge's session directory (walkthrough, question,
 *   signal files) is usually outside the checkout, so it is added. `read-only` when no write tool
 *   is allowed — Codex has no per-tool allowlist; the sandbox is the closest equivalent.
 * - `approval_policy="never"`: no command ever waits for a person (a CI job has none); a command
 *   the sandbox refuses fails and the model sees the failure.
 * - `sandbox_workspace_write.network_access=true`: the sandbox blocks the network by default, but
 *   an agent's own `forge spawn` (a sub-agent must reach the model) and test commands that install
 *   packages need it. Forge's boundary is the job's runner, not the network.
 * - `allow_login_shell=false`: Codex runs commands through `bash -lc` by default, and a login shell
 *   reads /etc/profile, which on Debian-like systems resets PATH — dropping the `forge` shim of the
 *   session (a sub-agent's `forge spawn` then is "command not found") and the job's own tools (the
 *   Node of actions/setup-node). Plain `bash -c` keeps the environment Forge gave the agent.
 * - `--skip-git-repo-check`: the session directory of a sub-agent need not be a repository.
 * - `-c developer_instructions=…`: the system prompt (WHO/HOW), as a TOML string; Codex sends it as
 *   a `developer` message after its own instructions.
 * Codex has no turn limit flag; the wall-clock and idle timeouts bound it instead. Its key is
 * `OPENAI_API_KEY` (or `CODEX_API_KEY`); `CODEX_HOME` (its config.toml: model provider, base URL)
 * is passed through. Cost is not reported.
 */
import path from "node:path";
import { SPAWNABLE_BY } from "../hierarchy.js";
import type { AgentKind } from "../types.js";
import { agentEnv, HeadlessParser, sessionWritableDirs, type Json } from "./headless.js";
import { oneLine, type Adapter, type AdapterInput, type AdapterOutcome, type Invocation, type ProgressDraft } from "./types.js";

// Shared with the other headless adapters (headless.ts); still importable from here.
export { sessionWritableDirs } from "./headless.js";

export const CODEX_ENV = ["OPENAI_*", "CODEX_*", "AZURE_OPENAI_API_KEY"];

const WRITE_TOOLS = new Set(["Write", "Edit", "MultiEdit", "NotebookEdit", "Bash"]);

/** `read-only` / `workspace-write` / `danger-full-access` are `--sandbox` modes; `bypass` is `--dangerously-bypass-approvals-and-sandbox`. */
export type CodexSandbox = "read-only" | "workspace-write" | "danger-full-access" | "bypass";
const SANDBOXES: readonly CodexSandbox[] = ["read-only", "workspace-write", "danger-full-access", "bypass"];

/**
 * The sandbox of a session: `FORGE_CODEX_SANDBOX` when it names one; else `danger-full-access`
 * for a sub-agent of a Codex agent (the parent's sandbox still holds); else `bypass` inside a
 * GitHub Actions job; else `workspace-write` when a write tool is allowed, `read-only` otherwise.
 *
 * Why bypass in Actions: the runner is already the sandbox — a fresh VM thrown away after the job,
 * holding only what the job gave it, and Forge keeps every token it does not need out of the agent's
 * environment. Codex's own Linux sandbox (bubblewrap in a user namespace) cannot start on GitHub's
 * ubuntu-24.04 runners, whose AppArmor forbids unprivileged user namespaces ("bwrap: loopback:
 * Failed RTM_NEWADDR: Operation not permitted"), so every command would fail there. Neither mode
 * stops the agent from reading files on the runner; bypass only lifts the write limits. A
 * self-hosted runner with a working sandbox (or a job that ran `sudo sysctl -w
 * kernel.apparmor_restrict_unprivileged_userns=0`) sets `FORGE_CODEX_SANDBOX=workspace-write`.
 */
export function codexSandbox(input: Pick<AdapterInput, "allowedTools"> & { parentEnv?: NodeJS.ProcessEnv }): CodexSandbox {
  const asked = input.parentEnv?.FORGE_CODEX_SANDBOX?.trim();
  if (asked && (SANDBOXES as readonly string[]).includes(asked)) return asked as CodexSandbox;
  // A sub-agent started by a Codex agent's command (Codex sets CODEX_THREAD_ID there) already runs
  // inside that agent's sandbox, if any; a second one cannot start inside it (its writes fail).
  if (input.parentEnv?.CODEX_THREAD_ID) return "danger-full-access";
  if (input.parentEnv?.GITHUB_ACTIONS === "true") return "bypass";
  return input.allowedTools.some((t) => WRITE_TOOLS.has(t.replace(/\(.*$/, ""))) ? "workspace-write" : "read-only";
}

/**
 * Where a Codex session writes outside `cwd` (sessionWritableDirs); for a kind that may spawn
 * sub-agents (2, 3, refinery) also CODEX_HOME (default ~/.codex), because a Codex sub-agent started
 * by its `forge spawn` runs inside this sandbox and cannot start without writing its state there
 * ("failed to initialize in-process app-server client: Read-only file system").
 */
export function codexWritableDirs(cwd: string, forgeEnv: Record<string, string> = {}, parentEnv: NodeJS.ProcessEnv = {}): string[] {
  const kind = forgeEnv.FORGE_AGENT_TYPE as AgentKind | undefined;
  const home =
    kind && (SPAWNABLE_BY[kind]?.length ?? 0) > 0
      ? parentEnv.CODEX_HOME || (parentEnv.HOME ? path.join(parentEnv.HOME, ".codex") : undefined)
      : undefined;
  return sessionWritableDirs(cwd, forgeEnv, [home]);
}

/**
 * The `-c` options that send Codex's model requests to `baseUrl` — the job's model proxy
 * (`OPENAI_BASE_URL`, action/src/agent-access.ts) — with the key in `OPENAI_API_KEY`: a provider
 * `forge` speaking the Responses API. Codex 0.169.0 ignores `OPENAI_BASE_URL` itself (its built-in
 * `openai` provider goes to api.openai.com, over a WebSocket first), so without them the session
 * would never reach the proxy.
 */
export function codexProviderArgs(baseUrl: string | undefined): string[] {
  if (!baseUrl) return [];
  const provider = `{ name = "Forge model proxy", base_url = ${JSON.stringify(baseUrl)}, wire_api = "responses", env_key = "OPENAI_API_KEY" }`;
  return ["-c", 'model_provider="forge"', "-c", `model_providers.forge=${provider}`];
}

export function codexArgs(
  input: Pick<AdapterInput, "systemPrompt" | "model" | "modelTier" | "allowedTools" | "cwd" | "resumeSession"> & {
    parentEnv?: NodeJS.ProcessEnv;
    forgeEnv?: Record<string, string>;
    extraEnv?: Record<string, string>;
  },
): string[] {
  const sandbox = codexSandbox(input);
  // Commands get the environment Forge composed (PATH with `forge` and the job's tools) as is.
  const args = ["exec", "--json", "--skip-git-repo-check", "--cd", input.cwd, "-c", "allow_login_shell=false"];
  args.push(...codexProviderArgs(input.extraEnv?.OPENAI_BASE_URL ?? input.parentEnv?.OPENAI_BASE_URL));
  if (sandbox === "bypass") args.push("--dangerously-bypass-approvals-and-sandbox");
  else {
    args.push("--sandbox", sandbox, "-c", 'approval_policy="never"');
    if (sandbox === "workspace-write") {
      args.push("-c", "sandbox_workspace_write.network_access=true");
      for (const dir of codexWritableDirs(input.cwd, input.forgeEnv, input.parentEnv)) args.push("--add-dir", dir);
    }
  }
  if (input.model) args.push("--model", input.model);
  // A tier is also a reasoning effort (low, medium and high are Codex's own words for it).
  if (input.modelTier) args.push("-c", `model_reasoning_effort="${input.modelTier}"`);
  // A JSON string is a valid TOML basic string.
  if (input.systemPrompt) args.push("-c", `developer_instructions=${JSON.stringify(input.systemPrompt)}`);
  // A resumed attempt continues the earlier thread (`codex exec resume <id>`): exec's options stay
  // before the subcommand, which takes the thread id and the prompt (`-`: stdin).
  if (input.resumeSession) args.push("resume", input.resumeSession);
  args.push("-");
  return args;
}

export const codexAdapter: Adapter = {
  name: "codex",
  invocation(input: AdapterInput): Invocation {
    return {
      command: input.binary ?? "codex",
      args: codexArgs(input),
      env: agentEnv(input, CODEX_ENV),
      stdin: input.prompt,
    };
  },
  parser: () => new CodexJsonParser(),
};

export class CodexJsonParser extends HeadlessParser {
  #lastMessage: string | undefined;
  #threadId: string | undefined;
  #turnFailed = false;
  #completed = false;

  protected event(e: Json): ProgressDraft[] {
    switch (e.type) {
      case "thread.started":
        if (typeof e.thread_id === "string") this.#threadId = e.thread_id;
        return [{ kind: "system", summary: "thread started" }];
      case "turn.started":
        this.turnCount++;
        return [{ kind: "system", summary: `turn ${this.turnCount}` }];
      case "turn.completed": {
        this.#completed = true;
        const u = (e.usage ?? {}) as Json;
        const tokens =
          typeof u.input_tokens === "number" && typeof u.output_tokens === "number"
            ? ` (${u.input_tokens} input, ${u.output_tokens} output tokens)`
            : "";
        return [
          {
            kind: "result",
            summary: oneLine(`turn completed${tokens}${this.#lastMessage ? `: ${this.#lastMessage}` : ""}`),
            ...(tokens ? { tokens: { input: u.input_tokens as number, output: u.output_tokens as number } } : {}),
          },
        ];
      }
      case "turn.failed": {
        const msg = String(((e.error ?? {}) as Json).message ?? "turn failed");
        this.#turnFailed = true;
        this.errors.push(msg);
        return [{ kind: "result", summary: oneLine(`error: ${msg}`) }];
      }
      case "error": {
        const msg = String(e.message ?? "error");
        this.errors.push(msg);
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
      if (phase === "item.started") this.running.add(id);
      if (done) this.running.delete(id);
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
        return done
          ? [
              {
                kind: "tool_use",
                tool: "Edit",
                summary: oneLine(`Edit ${changes.map((c) => `${String(c.kind ?? "")} ${String(c.path ?? "")}`).join(", ")}`),
              },
            ]
          : [];
      }
      case "mcp_tool_call":
        return phase === "item.started"
          ? [
              {
                kind: "tool_use",
                tool: String(item.tool ?? "mcp"),
                summary: oneLine(`${String(item.server ?? "")} ${String(item.tool ?? "")}`),
              },
            ]
          : [];
      case "web_search":
        return phase === "item.started"
          ? [{ kind: "tool_use", tool: "WebSearch", summary: oneLine(`WebSearch ${String(item.query ?? "")}`) }]
          : [];
      case "error":
        return [{ kind: "stderr", summary: oneLine(String(item.message ?? "error")) }];
      default:
        return done ? [{ kind: "system", summary: oneLine(String(item.type ?? "item")) }] : [];
    }
  }

  finish(exitCode: number | null): AdapterOutcome {
    // Codex reports transient stream errors (`error`) and retries them itself; only a failed turn or a
    // non-zero exit is a failure, but every message is kept for the rate-limit check.
    return this.outcome(
      exitCode === 0 && !this.#turnFailed,
      { result: this.#lastMessage, sessionId: this.#threadId },
      { exitCode, ended: this.#completed, missingEnd: "codex ended without turn.completed" },
    );
  }
}
