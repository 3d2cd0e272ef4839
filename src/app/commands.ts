/**
 * `/forge` commands in comments. Parsing is pure; who may run them is checked by the App through
 * the collaborator-permission API (write, maintain or admin), and bots are never obeyed.
 */

export const COMMANDS = ["retry", "status", "pause", "resume", "cancel", "approve", "reject", "run", "plan", "help"] as const;
export type CommandName = (typeof COMMANDS)[number];

export type ParsedCommand = { name: CommandName; args: string[]; rest: string } | { name: "unknown"; word: string };

/**
 * The first line of a comment that starts with `/forge`, split into a command and its arguments.
 * `rest` keeps the text after the command as written (a retry message may span several lines).
 */
export function parseCommand(body: string): ParsedCommand | undefined {
  const lines = body.replace(/\r\n/g, "\n").split("\n");
  const at = lines.findIndex((l) => /^\s*\/forge(\s|$)/.test(l));
  if (at < 0) return undefined;
  const first = lines[at]!.trim().slice("/forge".length).trim();
  const [word = "help", ...args] = first.split(/\s+/).filter(Boolean);
  const name = word.toLowerCase();
  if (!(COMMANDS as readonly string[]).includes(name)) return { name: "unknown", word };
  const afterWord = first.slice(first.toLowerCase().indexOf(name) + name.length).trim();
  const more = lines
    .slice(at + 1)
    .join("\n")
    .trim();
  return { name: name as CommandName, args, rest: [afterWord, more].filter(Boolean).join("\n") };
}

export const WRITE_PERMISSIONS = new Set(["admin", "maintain", "write"]);

export const HELP = [
  "**Forge commands** (people with write access):",
  "",
  "| Command | Where | What it does |",
  "|---|---|---|",
  "| `/forge retry [task] [message]` | task PR, tracker | Retry a failed, stale or waiting task; the message reaches the next attempt (an answer to the agent's question). |",
  "| `/forge status` | anywhere | Reply with the run's state. |",
  "| `/forge pause` / `/forge resume` | tracker, task PR | Stop or restart dispatching; agents at work finish. |",
  "| `/forge cancel` | tracker, task PR | Cancel the run and its running agents. |",
  "| `/forge approve` / `/forge reject` | Change Request issue, refinery PR | Decide a Change Request (review mode), or approve a gated refinery's merge. |",
  "| `/forge run <planId>` | any issue | Start a run of `.forge/plans/<planId>/`. |",
  "| `/forge plan` | an issue | A Captain agent writes a plan from the issue, as a PR. |",
  "| `/forge help` | anywhere | This table. |",
].join("\n");
