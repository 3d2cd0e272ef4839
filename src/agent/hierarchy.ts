/**
 * Who may spawn whom, and which tools each kind of agent gets (see docs/runner.md#hierarchy).
 *
 * Sub-agents are spawned only through `forge spawn` (run from the agent's Bash tool), which checks
 * the caller's type — as the hierarchy service recorded it (hierarchy-service.ts), not as the
 * environment says — against this table and counts depth. Claude Code's own sub-agent
 * tool (`Task`/`Agent`) is never allowed: it would bypass both.
 */
import type { AdapterName, AgentKind } from "./types.js";

/** Kinds each kind may spawn: 2 → 1; 3 → 1, 2; refinery → 1, 2, 3; everybody else → nothing. */
export const SPAWNABLE_BY: Readonly<Record<AgentKind, readonly AgentKind[]>> = {
  "1": [],
  "2": ["1"],
  "3": ["1", "2"],
  refinery: ["1", "2", "3"],
  captain: [],
  sentinel: [],
  "sentinel-writer": [],
  "sentinel-executor": [],
  "sentinel-auditor": [],
  "sentinel-consolidator": [],
};

export function mayCallerSpawn(caller: AgentKind, child: AgentKind): boolean {
  return SPAWNABLE_BY[caller].includes(child);
}

const EDIT = ["Read", "Write", "Edit", "MultiEdit", "Glob", "Grep", "LS", "Bash", "TodoWrite"];
const REVIEW = ["Read", "Write", "Glob", "Grep", "LS", "Bash"];

/** Claude Code tool names per kind. Codex maps them to a sandbox mode; command agents get them in FORGE_ALLOWED_TOOLS. */
export const ALLOWED_TOOLS: Readonly<Record<AgentKind, readonly string[]>> = {
  "1": EDIT,
  "2": EDIT,
  "3": EDIT,
  refinery: EDIT,
  captain: EDIT,
  sentinel: REVIEW,
  "sentinel-writer": REVIEW,
  "sentinel-executor": REVIEW,
  "sentinel-auditor": REVIEW,
  "sentinel-consolidator": REVIEW,
};

/** Tools that are never allowed, whatever a caller asks: they spawn agents outside Forge's budget. */
export const FORBIDDEN_TOOLS = new Set(["Task", "Agent"]);

export function allowedToolsFor(kind: AgentKind | undefined, _adapter: AdapterName = "claude"): string[] {
  return [...(kind ? ALLOWED_TOOLS[kind] : EDIT)];
}
