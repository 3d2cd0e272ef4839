// A deterministic agent for end-to-end tests: its edits and its fate come from the task text.
// See README.md beside this file for the directives; `bin/forge-scripted-agent.mjs` runs it.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { EXIT_CODES } from "../core/exit-codes.js";
import { describeFrontMatterProblem, readFrontMatter } from "../core/front-matter.js";
import { runScriptedSentinel, scriptedSentinel, type ScriptedSentinel } from "./scripted-sentinel.js";

export type Outcome = "succeed" | "fail" | "ask" | "stall" | "escalate" | "rate_limit" | "exit";

/** What to do on one attempt. */
export interface Behaviour {
  outcome: Outcome;
  /** fail: the error printed (default "scripted failure"). */
  message?: string;
  /** ask: the question for a person. */
  question?: string;
  /** escalate: why a Change Request is needed. */
  reason?: string;
  /** escalate: the Change Request's other fields, in the agent's words (defaults: see `changeRequestDraft`). */
  change_request?: ScriptedChangeRequest;
  /** rate_limit: when the limit resets, as Claude Code words it (default "3pm (America/New_York)"). */
  resets?: string;
  /** exit: the exit code. */
  code?: number;
  /** Write the task's files before the outcome (default: succeed, stall and exit do; the others don't). */
  write_files?: boolean;
  /** stall: milliseconds of silence before exiting 0 anyway (default: never — wait to be killed). */
  stall_ms?: number;
  /** What the attempt spends, reported in FORGE_SPEND_FILE once its files are written (default: $0.05 + $0.02 a file). */
  spend_usd?: number;
}

/** The fields of a scripted Change Request besides its reason (docs/formats.md#change-request). */
export interface ScriptedChangeRequest {
  title?: string;
  affected_tasks?: string[];
  suggested_action?: string;
  priority?: string;
  suggested_changes?: string;
}

export type { ScriptedSentinel } from "./scripted-sentinel.js";
export { runScriptedSentinel } from "./scripted-sentinel.js";

export interface Directives {
  /** Behaviour by attempt number ("1", "2", …); `default` for the others. */
  attempts: Record<string, Behaviour>;
  default: Behaviour;
  /** Extra files: path → content. */
  files: Record<string, string>;
  /** Progress lines printed while working, one every `progress_interval_ms`. */
  progress: string[];
  progress_interval_ms: number;
  /** Written into the walkthrough on success (bug-like ones make the App spawn a follow-up agent). */
  followups: string[];
  risks: string[];
  /** The task sentinel's verdicts and the implementer's fixes (see README.md#the-task-sentinel). */
  sentinel: ScriptedSentinel;
}

export interface ScriptedTask {
  id: string;
  title: string;
  /** Files to write, in a stable (sorted) order: path → content. */
  files: Array<[string, string]>;
  directives: Directives;
}

/**
 * The command line's own usage error. A Forge job running this agent through the command adapter
 * reads 2 as depth exceeded (docs/runner.md#exit-codes), as it would any command's 2.
 */
const USAGE_ERROR = 2;

export class ScriptedTaskError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ScriptedTaskError";
  }
}

const DIRECTIVE_FENCE = /^(`{3,})forge-scripted-agent[^\n]*\n([\s\S]*?)^\1[ \t]*$/m;
const FILE_FENCE = /^(`{3,})([^\n`]*)\n([\s\S]*?)^\1[ \t]*$/gm;

function fileFromInfo(info: string): string | null {
  for (const token of info.trim().split(/\s+/)) {
    const m = /^(?:file|path)[=:](.+)$/.exec(token);
    if (m) return m[1]!.replace(/^["']|["']$/g, "");
  }
  return null;
}

function asBehaviour(value: unknown, where: string): Behaviour {
  const v = typeof value === "string" ? { outcome: value } : value;
  if (!v || typeof v !== "object") throw new ScriptedTaskError(`${where}: expected an outcome or a mapping`);
  const b = v as Behaviour;
  const outcomes: Outcome[] = ["succeed", "fail", "ask", "stall", "escalate", "rate_limit", "exit"];
  if (!outcomes.includes(b.outcome)) throw new ScriptedTaskError(`${where}: outcome must be one of ${outcomes.join(", ")}`);
  if (b.outcome === "exit" && !Number.isInteger(b.code)) throw new ScriptedTaskError(`${where}: outcome exit needs an integer code`);
  return b;
}

function safeRelative(p: string): string {
  const norm = path.posix.normalize(p.replace(/\\/g, "/"));
  if (norm.startsWith("../") || norm === ".." || path.posix.isAbsolute(norm))
    throw new ScriptedTaskError(`file path '${p}' leaves the working directory`);
  return norm;
}

/** Deterministic content for an `artifacts:` entry that the task gives no content for. */
export function placeholderContent(taskId: string, title: string, file: string): string {
  const text = `Produced by the Forge scripted agent for task ${taskId}: ${title}`;
  const ext = path.extname(file).toLowerCase();
  if ([".ts", ".tsx", ".js", ".jsx", ".mjs"].includes(ext)) return `// ${text}\nexport {};\n`;
  if ([".cjs", ".java", ".c", ".go", ".rs", ".css"].includes(ext)) return `// ${text}\n`;
  if ([".py", ".sh", ".yml", ".yaml", ".toml", ".rb"].includes(ext)) return `# ${text}\n`;
  if (ext === ".json") return `${JSON.stringify({ producedBy: "forge-scripted-agent", task: taskId }, null, 2)}\n`;
  if (ext === ".md") return `# ${title}\n\n${text}.\n`;
  return `${text}\n`;
}

/**
 * Read a task: a Forge task file (YAML frontmatter + Markdown) or any prompt text that contains the
 * task's body. Files come from `artifacts:`, from fenced blocks whose info string names a file
 * (```` ```ts file=src/a.ts ````), and from the directives' `files:`; later sources win.
 */
export function parseScriptedTask(text: string): ScriptedTask {
  // Forge's one front-matter reader (YAML only, never evaluated), as for every Markdown file Forge reads.
  const parsed = readFrontMatter("task", text);
  if (parsed.problem) throw new ScriptedTaskError(describeFrontMatterProblem(parsed.problem));
  const fm = (parsed.data ?? {}) as { id?: unknown; title?: unknown; artifacts?: unknown };
  const body = parsed.body;
  const id = typeof fm.id === "string" ? fm.id : "task";
  const title = typeof fm.title === "string" ? fm.title : id;

  let raw: Record<string, unknown> = {};
  const fence = DIRECTIVE_FENCE.exec(body);
  if (fence) {
    const doc = parseYaml(fence[2]!) as unknown;
    if (doc !== null && doc !== undefined) {
      if (typeof doc !== "object" || Array.isArray(doc))
        throw new ScriptedTaskError("the forge-scripted-agent block must be a YAML mapping");
      raw = doc as Record<string, unknown>;
    }
  }
  const attempts: Record<string, Behaviour> = {};
  for (const [k, v] of Object.entries((raw.attempts ?? {}) as Record<string, unknown>))
    attempts[String(k)] = asBehaviour(v, `attempts.${k}`);
  const directives: Directives = {
    attempts,
    default: raw.default === undefined ? { outcome: "succeed" } : asBehaviour(raw.default, "default"),
    files: Object.fromEntries(Object.entries((raw.files ?? {}) as Record<string, unknown>).map(([k, v]) => [k, String(v)])),
    progress: Array.isArray(raw.progress) ? raw.progress.map(String) : [`Working on ${id}: ${title}`],
    progress_interval_ms: typeof raw.progress_interval_ms === "number" ? raw.progress_interval_ms : 0,
    followups: Array.isArray(raw.followups) ? raw.followups.map(String) : [],
    risks: Array.isArray(raw.risks) ? raw.risks.map(String) : [],
    sentinel: scriptedSentinel(raw.sentinel),
  };

  const files = new Map<string, string>();
  if (Array.isArray(fm.artifacts))
    for (const a of fm.artifacts) files.set(safeRelative(String(a)), placeholderContent(id, title, String(a)));
  for (const m of body.matchAll(FILE_FENCE)) {
    const file = fileFromInfo(m[2] ?? "");
    if (file) files.set(safeRelative(file), m[3]!);
  }
  for (const [k, v] of Object.entries(directives.files)) files.set(safeRelative(k), v);
  return { id, title, files: [...files.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)), directives };
}

export function behaviourFor(task: ScriptedTask, attempt: number): Behaviour {
  return task.directives.attempts[String(attempt)] ?? task.directives.default;
}

export interface AgentIo {
  cwd: string;
  attempt: number;
  stdout: (line: string) => void;
  stderr: (line: string) => void;
  /** Paths for the agent's reports; each is written only when set. */
  questionFile?: string;
  changeRequestFile?: string;
  walkthroughFile?: string;
  /** Claude Code-like JSON lines instead of plain text. */
  streamJson?: boolean;
  /** Goes into the walkthrough when known (FORGE_RUN_ID). */
  runId?: string;
  /** Where the agent reports its spend (FORGE_SPEND_FILE, docs/runner.md#budgets). */
  spendFile?: string;
  sleep?: (ms: number) => Promise<void>;
  /** A revision of the attempt (the prompt asks to answer a review): what to answer, and where. */
  revision?: ScriptedRevision;
  /** Called when the agent goes silent for good (stall without stall_ms). */
  stallForever?: () => Promise<never>;
}

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export interface ScriptedRevision {
  iteration: number;
  /** Review comment ids the prompt lists. */
  comments: number[];
  /** Where the prompt asks for the answers. */
  answersFile?: string;
}

/** A revision prompt (action/src/task/revision.ts): its number, the comments to answer and the answers file. */
export function revisionOf(prompt: string): ScriptedRevision | undefined {
  const m = /^## Revision (\d+): what the review asks/m.exec(prompt);
  if (!m) return undefined;
  const comments = [...prompt.matchAll(/^#### Comment (\d+) on /gm)].map((c) => Number(c[1]));
  const file = /write `([^`\n]+answers\.json)`/.exec(prompt)?.[1];
  return { iteration: Number(m[1]), comments, ...(file ? { answersFile: file } : {}) };
}

/** Run the scripted agent; resolves with its exit code. */
export async function runScriptedAgent(task: ScriptedTask, io: AgentIo): Promise<number> {
  const sleep = io.sleep ?? defaultSleep;
  const b = behaviourFor(task, io.attempt);
  let turns = 0;
  const say = (text: string) => {
    turns++;
    if (io.streamJson) io.stdout(JSON.stringify({ type: "assistant", message: { role: "assistant", content: [{ type: "text", text }] } }));
    else io.stdout(text);
  };
  const finish = (code: number, result: string): number => {
    if (io.streamJson) {
      io.stdout(
        JSON.stringify({
          type: "result",
          subtype: code === EXIT_CODES.SUCCESS ? "success" : "error_during_execution",
          is_error: code !== EXIT_CODES.SUCCESS,
          result,
          num_turns: turns,
        }),
      );
    }
    return code;
  };
  if (io.streamJson) io.stdout(JSON.stringify({ type: "system", subtype: "init", cwd: io.cwd, model: "forge-scripted", tools: [] }));

  for (const line of task.directives.progress) {
    say(line);
    if (task.directives.progress_interval_ms > 0) await sleep(task.directives.progress_interval_ms);
  }

  const writeFiles = b.write_files ?? ["succeed", "stall", "exit"].includes(b.outcome);
  const written: string[] = [];
  if (writeFiles) {
    for (const [rel, content] of task.files) {
      const abs = path.join(io.cwd, rel);
      await mkdir(path.dirname(abs), { recursive: true });
      // A revision changes what the review asked about: one line per revision, so each has a diff.
      const revised = io.revision
        ? `${content}${Array.from({ length: io.revision.iteration }, (_, k) => `revised ${k + 1}\n`).join("")}`
        : content;
      await writeFile(abs, revised);
      written.push(rel);
      say(`Wrote ${rel}`);
    }
  }

  if (io.revision?.answersFile && b.outcome === "succeed") {
    const answers = io.revision.comments.map((id) => ({ comment: id, answer: `Done in revision ${io.revision!.iteration}.` }));
    await writeReport(io.revision.answersFile, `${JSON.stringify(answers)}\n`);
  }
  if (io.spendFile) {
    const usd = b.spend_usd ?? 0.05 + 0.02 * written.length;
    await writeFile(io.spendFile, JSON.stringify({ cost_usd: Math.round(usd * 100) / 100 }));
    say(`Spent $${usd.toFixed(2)} so far`);
  }

  switch (b.outcome) {
    case "succeed": {
      if (io.walkthroughFile) await writeWalkthrough(io.walkthroughFile, task, io.attempt, written, io.runId);
      say(`Done: ${task.title}`);
      return finish(EXIT_CODES.SUCCESS, `Completed ${task.id}`);
    }
    case "fail": {
      const message = b.message ?? "scripted failure";
      io.stderr(`Error: ${message}`);
      return finish(EXIT_CODES.FAILURE, message);
    }
    case "ask": {
      const question = b.question ?? `What should ${task.id} do?`;
      if (io.questionFile) await writeReport(io.questionFile, `${question}\n`);
      say(`QUESTION: ${question}`);
      return finish(EXIT_CODES.HUMAN_INPUT, question);
    }
    case "escalate": {
      const reason = b.reason ?? "The plan cannot be carried out as written";
      if (io.changeRequestFile) await writeReport(io.changeRequestFile, changeRequestDraft(task, b));
      say(`ESCALATE: ${reason}`);
      return finish(EXIT_CODES.NEEDS_ESCALATION, reason);
    }
    case "rate_limit": {
      // The usage-limit wording Forge parses, see docs/runner.md#rate-limits ("resets at 3pm (America/New_York)"); Claude Code exits 1 on a
      // usage limit, so this does too.
      const message = `Claude AI usage limit reached, resets at ${b.resets ?? "3pm (America/New_York)"}`;
      io.stdout(
        io.streamJson
          ? JSON.stringify({ type: "result", subtype: "success", is_error: true, api_error_status: 429, result: message, num_turns: turns })
          : message,
      );
      io.stderr(message);
      return EXIT_CODES.FAILURE;
    }
    case "stall": {
      say("Thinking…");
      if (b.stall_ms !== undefined) {
        await sleep(b.stall_ms);
        return finish(EXIT_CODES.SUCCESS, "woke up");
      }
      return (io.stallForever ?? (() => new Promise<never>(() => {})))();
    }
    case "exit":
      say(`Exiting with ${b.code!}`);
      return finish(b.code!, `exit ${b.code!}`);
  }
}

export async function writeReport(file: string, content: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, content);
}

/**
 * The Change Request an escalating attempt writes (docs/formats.md#change-request): the behaviour's
 * reason and `change_request` fields, in the format the runner checks. The Claude Code script
 * (src/demo/claude-script.ts) writes the same document through a tool call.
 */
export function changeRequestDraft(task: ScriptedTask, b: Behaviour): string {
  const reason = b.reason ?? "The plan cannot be carried out as written";
  const cr = b.change_request ?? {};
  const front = {
    title: cr.title ?? `Change needed for ${task.id}`,
    reason,
    affected_tasks: cr.affected_tasks ?? [task.id],
    suggested_action: cr.suggested_action ?? "AMEND",
    priority: cr.priority ?? "MEDIUM",
    suggested_changes: cr.suggested_changes ?? reason,
  };
  return `---
${stringifyYaml(front, { lineWidth: 0 })}---

## Description

${reason}

## Impact Assessment

Task ${task.id} cannot complete as planned.

## Proposed Resolution

${cr.suggested_changes ?? "Amend the plan."}
`;
}

/** The walkthrough of a successful run that wrote `written` (the facts the runner measures left for it). */
export async function writeWalkthrough(
  file: string,
  task: ScriptedTask,
  attempt: number,
  written: string[],
  runId?: string,
): Promise<void> {
  // Facts the runner measures (branch, head_sha, time) are left for it to fill in.
  const files = written.map((p) => `  - path: ${JSON.stringify(p)}\n    reason: "Named by the task"`).join("\n");
  const list = (xs: string[]) => (xs.length ? `\n${xs.map((x) => `  - ${JSON.stringify(x)}`).join("\n")}` : " []");
  await writeReport(
    file,
    `---
task_id: ${JSON.stringify(task.id)}${runId ? `\nrun_id: ${JSON.stringify(runId)}` : ""}
attempt: ${attempt}
status: completed
confidence: 0.9
files_changed:${written.length ? `\n${files}` : " []"}
tests: []
risks:${list(task.directives.risks)}
followups:${list(task.directives.followups)}
agent: command
model: forge-scripted
---

## Summary

Wrote ${written.length} file(s) for ${task.title}.

## Approach

Deterministic edits taken from the task.

## Issues Encountered

None.

## Testing

None run by the scripted agent.
`,
  );
}

export interface CliArgs {
  taskFile?: string;
  promptFile?: string;
  prompt?: string;
  attempt?: number;
  cwd?: string;
  streamJson: boolean;
}

export function parseArgs(argv: string[]): CliArgs {
  const out: CliArgs = { streamJson: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const next = () => {
      const v = argv[++i];
      if (v === undefined) throw new ScriptedTaskError(`${a} needs a value`);
      return v;
    };
    if (a === "--task") out.taskFile = next();
    else if (a === "--prompt-file") out.promptFile = next();
    else if (a === "-p" || a === "--prompt") out.prompt = next();
    else if (a === "--attempt") out.attempt = Number(next());
    else if (a === "--cwd") out.cwd = next();
    else if (a === "--output-format") out.streamJson = next() === "stream-json";
    else if (!a.startsWith("-") && out.taskFile === undefined) out.taskFile = a;
    else throw new ScriptedTaskError(`unknown argument ${a}`);
  }
  return out;
}

/** The command-line entry: arguments first, then FORGE_* environment variables. */
export async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  let args: CliArgs;
  try {
    args = parseArgs(argv);
  } catch (err) {
    process.stderr.write(`forge-scripted-agent: ${(err as Error).message}\n`);
    return USAGE_ERROR;
  }
  const cwd = path.resolve(args.cwd ?? process.cwd());
  const taskFile = args.taskFile ?? env.FORGE_TASK_FILE;
  const promptFile = args.promptFile ?? env.FORGE_PROMPT_FILE;
  let text: string | undefined = args.prompt ?? env.FORGE_PROMPT;
  if (taskFile) text = await readFile(path.resolve(cwd, taskFile), "utf8");
  else if (promptFile) text = await readFile(path.resolve(cwd, promptFile), "utf8");
  if (text === undefined) {
    process.stderr.write(
      "forge-scripted-agent: no task given (--task, --prompt-file, -p, FORGE_TASK_FILE, FORGE_PROMPT_FILE or FORGE_PROMPT)\n",
    );
    return USAGE_ERROR;
  }
  let task: ScriptedTask;
  try {
    task = parseScriptedTask(text);
  } catch (err) {
    process.stderr.write(`forge-scripted-agent: ${(err as Error).message}\n`);
    return USAGE_ERROR;
  }
  const attempt = args.attempt ?? Number(env.FORGE_ATTEMPT ?? "1");
  const signalDir = env.FORGE_SIGNAL_DIR;
  const inSignalDir = (name: string) => (signalDir ? path.join(path.resolve(cwd, signalDir), name) : undefined);
  const opt = (v: string | undefined) => (v ? path.resolve(cwd, v) : undefined);
  const io: AgentIo = {
    cwd,
    attempt: Number.isInteger(attempt) && attempt > 0 ? attempt : 1,
    stdout: (l) => process.stdout.write(`${l}\n`),
    stderr: (l) => process.stderr.write(`${l}\n`),
    streamJson: args.streamJson,
    // Silent, but alive until killed.
    stallForever: () => new Promise<never>(() => setInterval(() => {}, 1 << 30)),
  };
  const q = opt(env.FORGE_QUESTION_FILE) ?? inSignalDir("question.md");
  const cr = opt(env.FORGE_CHANGE_REQUEST_FILE) ?? inSignalDir("change-request.md");
  const wt = opt(env.FORGE_WALKTHROUGH_PATH) ?? inSignalDir("walkthrough.md");
  if (q) io.questionFile = q;
  if (cr) io.changeRequestFile = cr;
  if (wt) io.walkthroughFile = wt;
  if (env.FORGE_RUN_ID) io.runId = env.FORGE_RUN_ID;
  // The task may come from its file; a revision's review is in the stage prompt.
  const prompt =
    args.prompt ?? env.FORGE_PROMPT ?? (promptFile ? await readFile(path.resolve(cwd, promptFile), "utf8").catch(() => "") : "");
  const revision = revisionOf(`${prompt}\n${text}`);
  if (revision) io.revision = revision;
  if (env.FORGE_SPEND_FILE) io.spendFile = env.FORGE_SPEND_FILE;
  const sentinel = await runScriptedSentinel(task, env.FORGE_AGENT_TYPE, env.FORGE_SPAWN_NAME, prompt, cwd);
  if (sentinel !== undefined) return sentinel;
  return runScriptedAgent(task, io);
}
