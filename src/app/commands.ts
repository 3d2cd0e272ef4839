/**
 * `/forge` commands in comments. Parsing is pure; who may run them is checked by the App through
 * the collaborator-permission API (write, maintain or admin), and bots are never obeyed.
 */

/** The `/forge` commands (the `forge` command line's subcommands are `COMMANDS` of src/cli/commands/index.ts). */
export const SLASH_COMMANDS = [
  "retry",
  "fix",
  "steer",
  "status",
  "pause",
  "resume",
  "cancel",
  "approve",
  "reject",
  "budget",
  "run",
  "plan",
  "help",
] as const;
export type SlashCommandName = (typeof SLASH_COMMANDS)[number];

export type ParsedCommand = { name: SlashCommandName; args: string[]; rest: string } | { name: "unknown"; word: string };

/** GitHub keeps a comment to 65,536 characters; nothing longer is read. */
const MAX_BODY = 65_536;

/**
 * Whether an HTML comment is still open at the end of `line`, given whether one was open at its
 * start: `<!--` opens one, `-->` closes it (a scan with `indexOf`, linear in the line).
 */
function commentOpenAfter(line: string, open: boolean): boolean {
  let at = 0;
  for (;;) {
    if (open) {
      const close = line.indexOf("-->", at);
      if (close < 0) return true;
      open = false;
      at = close + 3;
    } else {
      const start = line.indexOf("<!--", at);
      if (start < 0) return false;
      open = true;
      at = start + 4;
    }
  }
}

/**
 * The line of a comment's Markdown that is a command: the first that starts with `/forge` outside
 * code, quotes and HTML comments. A fenced block (``` or ~~~), an indented code block (four spaces
 * or a tab) and a quote (`>`) show a command, they do not give one — a pasted log or a quoted
 * comment is not obeyed. An HTML comment (`<!-- … -->`) shows nothing at all: GitHub renders none of
 * it, so a command there is one nobody reading the thread can see, and it is not obeyed either.
 */
function commandLine(lines: string[]): number {
  let fence: string | undefined;
  let comment = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (comment) {
      // The line that closes a comment belongs to it (CommonMark's HTML block ends with that line).
      comment = commentOpenAfter(line, true);
      continue;
    }
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence) {
      if (marker && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) fence = undefined;
      continue;
    }
    if (marker) {
      fence = marker;
      continue;
    }
    if (/^ {0,3}\/forge(\s|$)/.test(line)) return i;
    comment = commentOpenAfter(line, false);
  }
  return -1;
}

/**
 * The first line of a comment that starts with `/forge` (outside code and quotes), split into a
 * command and its arguments. `rest` keeps the text after the command as written (a retry message
 * may span several lines).
 */
export function parseCommand(body: string): ParsedCommand | undefined {
  const lines = body.slice(0, MAX_BODY).replace(/\r\n/g, "\n").split("\n");
  const at = commandLine(lines);
  if (at < 0) return undefined;
  const first = lines[at]!.trim().slice("/forge".length).trim();
  const [word = "help", ...args] = first.split(/\s+/).filter(Boolean);
  const name = word.toLowerCase();
  if (!(SLASH_COMMANDS as readonly string[]).includes(name)) return { name: "unknown", word };
  const afterWord = first.slice(first.toLowerCase().indexOf(name) + name.length).trim();
  const more = lines
    .slice(at + 1)
    .join("\n")
    .trim();
  return { name: name as SlashCommandName, args, rest: [afterWord, more].filter(Boolean).join("\n") };
}

export const WRITE_PERMISSIONS = new Set(["admin", "maintain", "write"]);

export const HELP = [
  "**Forge commands** (people with write access):",
  "",
  "| Command | Where | What it does |",
  "|---|---|---|",
  "| `/forge retry [task] [message]` | task PR, tracker | Retry a failed, stale or waiting task; the message reaches the next attempt (an answer to the agent's question). |",
  "| `/forge retry failed [message]` | tracker | Retry every failed or exhausted task of the run at once (after an outage, a broken dependency fixed); tasks waiting for an answer, a Change Request or budget keep waiting for their own command. |",
  "| `/forge fix [message]` | task PR | Revise the PR on its branch: the agent answers the message (and any review waiting), within `review.max_iterations`. |",
  "| `/forge steer [task] <message>` | a running task's PR, tracker | Tell the running agent something: it reaches the agent at the start of its next stage. |",
  "| `/forge status` | anywhere | Reply with the run's state. |",
  "| `/forge pause` / `/forge resume` | tracker, task PR | Stop or restart dispatching; agents at work finish. |",
  "| `/forge cancel` | tracker, task PR | Cancel the run and its running agents. |",
  "| `/forge approve` / `/forge reject` | Change Request issue, refinery PR | Decide a Change Request (review mode), or approve a gated refinery's merge. |",
  "| `/forge budget [task] +<dollars>` | tracker, task PR | Raise the run's budget (a run paused for its budget resumes), or one task's (a task stopped at its budget goes again). |",
  "| `/forge run <planId>` | any issue | Start a run of `.forge/plans/<planId>/`. |",
  '| `/forge plan` | an issue | With sub-issues: the plan is built from the tree (a task per sub-issue, edges from "blocked by"), as a PR. Otherwise a Captain agent writes a plan from the issue, as a PR. |',
  "| `/forge help` | anywhere | This table. |",
].join("\n");
