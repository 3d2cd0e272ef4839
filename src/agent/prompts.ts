/**
 * Layer 1 (see docs/runner.md#system-prompts): one system prompt per kind of agent. Each says WHO the agent is and HOW it
 * works — tools, the exit-code protocol, the report files, what it must never touch — and never WHAT
 * to do: that is the prompt, built by the stage runner from the task.
 *
 * Built-in prompts are `prompts/<kind>.md` beside this module; a repository overrides one with
 * `.forge/prompts/<kind>.md`.
 */
import { readAgentText } from "./agent-files.js";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { AgentKind } from "./types.js";

export const REPO_PROMPT_DIR = ".forge/prompts";

/**
 * Where the built-in prompts are: `FORGE_PROMPTS_DIR`, then `prompts/` beside this module (source, or
 * a bundle that copied them), then `src/agent/prompts` of the package (tsc does not copy .md files to
 * dist/).
 */
export function builtinPromptDir(env: NodeJS.ProcessEnv = process.env): string {
  const candidates = [
    env.FORGE_PROMPTS_DIR,
    fileURLToPath(new URL("./prompts/", import.meta.url)),
    fileURLToPath(new URL("../../src/agent/prompts/", import.meta.url)),
  ].filter((d): d is string => Boolean(d));
  return candidates.find((d) => existsSync(path.join(d, "1.md"))) ?? candidates[candidates.length - 1]!;
}

export interface LoadPromptOptions {
  /** The repository checkout; `.forge/prompts/<kind>.md` there wins. */
  repoDir?: string;
  builtinDir?: string;
}

export interface LoadedPrompt {
  kind: AgentKind;
  text: string;
  source: "repository" | "builtin";
  path: string;
}

export class PromptNotFoundError extends Error {
  constructor(
    readonly kind: string,
    readonly searched: string[],
  ) {
    super(`no system prompt for agent kind '${kind}' (looked in ${searched.join(", ")})`);
    this.name = "PromptNotFoundError";
  }
}

export async function loadSystemPrompt(kind: AgentKind, options: LoadPromptOptions = {}): Promise<LoadedPrompt> {
  const searched: string[] = [];
  if (options.repoDir) {
    const file = path.join(options.repoDir, REPO_PROMPT_DIR, `${kind}.md`);
    searched.push(file);
    // The checkout's file: never read through a link, never outside the checkout.
    const text = await readAgentText(options.repoDir, file);
    if (text !== undefined && text.trim() !== "") return { kind, text, source: "repository", path: file };
  }
  const file = path.join(options.builtinDir ?? builtinPromptDir(), `${kind}.md`);
  searched.push(file);
  const text = await readFile(file, "utf8").catch(() => undefined);
  if (text === undefined) throw new PromptNotFoundError(kind, searched);
  return { kind, text, source: "builtin", path: file };
}
