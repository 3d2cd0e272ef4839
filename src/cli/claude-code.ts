// Whether Claude Code's CLI (`claude`) can be started: `forge demo --agent claude` runs it, and the
// package does not bring it (it is a development dependency of Forge, installed by `npm ci` in a
// checkout only). Looked for where the demo looks: the package's node_modules/.bin, then PATH.
import { accessSync, constants } from "node:fs";
import path from "node:path";
import { copilotBinary } from "../fake-agents/copilot.js";
import { checkoutRoot } from "./child.js";
import { CliError } from "./io.js";

/** The folders a command is looked for in, as the demo's agent environment orders them. */
function searchPath(): string[] {
  return [
    path.join(checkoutRoot(), "test", "agent-clis", "node_modules", ".bin"),
    path.join(checkoutRoot(), "node_modules", ".bin"),
    ...(process.env.PATH ?? "").split(path.delimiter).filter(Boolean),
  ];
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Throws a CliError naming how to install Gemini CLI when `gemini` is nowhere to be started. */
export function requireGeminiCli(flag: string): void {
  if (searchPath().some((dir) => executable(path.join(dir, "gemini")))) return;
  throw new CliError(
    `${flag}: Gemini CLI is not installed (no gemini command on PATH): install it with npm i -g @google/gemini-cli, or run the demo with the scripted agent (no --agent)`,
  );
}

/** Throws a CliError naming how to install an agent CLI (`name`, its `command`, its npm `pkg`) when it is nowhere to be started. */
export function requireAgentCli(flag: string, name: string, command: string, pkg: string): void {
  if (searchPath().some((dir) => executable(path.join(dir, command)))) return;
  throw new CliError(
    `${flag}: ${name} is not installed (no ${command} command on PATH): install it with npm i -g ${pkg}, or run the demo with the scripted agent (no --agent)`,
  );
}

/** Throws a CliError naming how to install Claude Code when `claude` is nowhere to be started. */
export function requireClaudeCode(flag: string): void {
  if (searchPath().some((dir) => executable(path.join(dir, "claude")))) return;
  throw new CliError(
    `${flag}: Claude Code is not installed (no claude command on PATH): install it with npm i -g @anthropic-ai/claude-code, or run the demo with the scripted agent (no --agent)`,
  );
}

/**
 * Throws a CliError naming how to install GitHub Copilot CLI when it is nowhere to be started: its
 * licence keeps it out of Forge's dependencies, so the person installs it (or names it in FORGE_COPILOT_BIN).
 */
export function requireCopilotCli(flag: string): void {
  const named = process.env.FORGE_COPILOT_BIN;
  const install = "install it with npm i -g @github/copilot@1.0.102 (its licence keeps it out of Forge's dependencies)";
  if (named && !executable(named))
    throw new CliError(
      `${flag}: FORGE_COPILOT_BIN ${named} is not an executable file: name GitHub Copilot CLI's binary there, or ${install}`,
    );
  if (copilotBinary() || searchPath().some((dir) => executable(path.join(dir, "copilot")))) return;
  throw new CliError(
    `${flag}: GitHub Copilot CLI is not installed (no copilot command on PATH): ${install}, or set FORGE_COPILOT_BIN to its binary`,
  );
}
