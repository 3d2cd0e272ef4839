/**
 * The agent of `forge demo`: the scripted agent (../fake-agents/), which writes the files a task's
 * fenced blocks and `artifacts:` name, with two additions:
 * - a follow-up (`FORGE_TASK_ID` = `_followup-<n>`) writes the `followup_files:` of its source task's
 *   `forge-scripted-agent` block (the follow-up's task text quotes the source task file), or else one
 *   note — never the source task's own files again, which would be an empty diff;
 * - a task that names no files gets one file saying what it was, since Forge never accepts an empty
 *   diff as success: enough for any valid plan (`forge demo --plan`) to run to the end;
 * - a Captain (`FORGE_TASK_ID` = `_captain-<crId>`) answers the Change Request with the overlay the
 *   demo's plan folder holds (`--plan <dir>`, the worked answer, as the fenced blocks are a task's):
 *   the overlay the Captain's task names (`overlays/overlay-NNN.md`) with the run's CR id, its new
 *   task files and dag.json with it applied, written in the checkout's plan folder. The Forge
 *   action then validates them, commits them on the Captain's branch and opens the overlay PR;
 * - a task whose `forge-scripted-agent` block names a `wip_marker` leaves that file in its first
 *   head (as an agent might leave unfinished work): the demo project's CI (`scripts/check.js`)
 *   fails on it, and the fix revision deletes it;
 * - a revision (the prompt's `## Revision <n>` section, action/src/task/revision.ts) answers what it
 *   is given instead of writing the task's files again: failing checks → it deletes the files the
 *   checks' annotations name as work-in-progress markers; review comments → a line in the commented
 *   file at the commented line, and an answer per comment in the answers file the prompt names;
 * - every session names itself as a Claude Code session does (a stream-json `system` line with a
 *   `session_id`), and a resumed attempt's session continues the one Forge hands it
 *   (`FORGE_RESUME_SESSION`, docs/runner.md#resuming);
 * - a task whose block names `stall_at: { attempt, stage }` goes silent in that stage of that attempt
 *   (the runner stops it as stalled, exit 21, and the App retries it STALE);
 * - a person's answer to the previous attempt's question (`/forge retry <task> <answer>`) goes into
 *   the walkthrough's approach, so the PR says what the person answered.
 */
import { readFileSync } from "node:fs";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { parse as parseYaml } from "yaml";
import { isFollowupId, parseCaptainId } from "../core/layout.js";
import {
  main as scripted,
  parseScriptedTask,
  revisionOf,
  runScriptedSentinel,
  writeReport,
  writeWalkthrough,
  type ScriptedRevision,
  type ScriptedTask,
} from "../fake-agents/scripted-agent.js";
import { loadPlanStages } from "./plan-stages.js";

/** The `followup_files:` of the first `forge-scripted-agent` block in a text. */
export function followupFiles(text: string | undefined): Record<string, string> | undefined {
  const m = /^(`{3,})forge-scripted-agent[^\n]*\n([\s\S]*?)^\1[ \t]*$/m.exec(text ?? "");
  if (!m) return undefined;
  const doc = parseYaml(m[2]!) as { followup_files?: Record<string, string> } | null;
  return doc?.followup_files && Object.keys(doc.followup_files).length ? doc.followup_files : undefined;
}

const fence = (file: string, content: string) => `\`\`\`\`txt file=${file}\n${content.endsWith("\n") ? content : `${content}\n`}\`\`\`\`\n`;

/**
 * The overlay number the Captain must write: the one its task names, else the next free one in the
 * checkout's plan folder.
 */
async function overlayNumber(text: string, cwd: string, planId: string): Promise<number> {
  const named = /overlays\/overlay-(\d{3,})\.md/.exec(text)?.[1];
  if (named) return Number(named);
  const existing = await readdir(path.join(cwd, ".forge", "plans", planId, "overlays")).catch(() => [] as string[]);
  return existing.filter((f) => /^overlay-\d{3,}\.md$/.test(f)).length + 1;
}

/** The Captain: writes the demo plan's overlay for this Change Request; 1 when the plan has none left. */
export async function captain(
  crId: string,
  planDir: string | undefined,
  text: string,
  cwd: string,
  say: (line: string) => void = (l) => void process.stdout.write(`${l}\n`),
): Promise<number> {
  if (!planDir) {
    say(`Error: the Captain of ${crId} needs the demo's plan folder (--plan <dir>) to answer from`);
    return 1;
  }
  const stages = await loadPlanStages(planDir);
  const n = await overlayNumber(text, cwd, stages.planId);
  if (n <= stages.committed || n > stages.overlays.length) {
    say(`Error: Change Request ${crId} needs a person: the plan folder has no overlay-${String(n).padStart(3, "0")} to answer it with`);
    return 1;
  }
  say(`Answering Change Request ${crId} with ${stages.overlays[n - 1]!.id} of plan ${stages.planId}`);
  for (const [rel, content] of Object.entries(stages.captainFiles(n, crId))) {
    const abs = path.join(cwd, rel);
    await mkdir(path.dirname(abs), { recursive: true });
    await writeFile(abs, content);
    say(`Wrote ${rel}`);
  }
  say(`Done: overlay ${String(n).padStart(3, "0")} written`);
  return 0;
}

/** The `wip_marker:` of the first `forge-scripted-agent` block in a text: a relative path, or undefined. */
export function wipMarker(text: string | undefined): string | undefined {
  const m = /^(`{3,})forge-scripted-agent[^\n]*\n([\s\S]*?)^\1[ \t]*$/m.exec(text ?? "");
  if (!m) return undefined;
  const marker = (parseYaml(m[2]!) as { wip_marker?: unknown } | null)?.wip_marker;
  return typeof marker === "string" ? inCheckout(marker) : undefined;
}

/** A path the agent may touch: relative, inside the checkout, not under .git; else undefined. */
function inCheckout(p: string): string | undefined {
  const norm = path.posix.normalize(p.replace(/\\/g, "/"));
  if (!norm || norm === "." || norm.startsWith("../") || norm === ".." || path.posix.isAbsolute(norm) || /(^|\/)\.git(\/|$)/.test(norm))
    return undefined;
  return norm;
}

/**
 * What a revision's prompt asks, as the demo agent reads it: the markers the failing checks name
 * (annotations `- <path>:<line> <level>: …` of a `.wip` file) and the review comments (id, path, line).
 */
export function revisionAsks(prompt: string): { markers: string[]; comments: { id: number; path: string; line?: number }[] } {
  const ci = prompt.includes("### Failing required checks");
  const markers = ci
    ? [...new Set([...prompt.matchAll(/^- ([^\s:]+\.wip):\d+ \w+:/gm)].map((m) => inCheckout(m[1]!)).filter((p): p is string => !!p))]
    : [];
  const comments = [...prompt.matchAll(/^#### Comment (\d+) on `([^`\n]+)`(?: line (\d+))?/gm)].flatMap((m) => {
    const p = inCheckout(m[2]!);
    return p ? [{ id: Number(m[1]), path: p, ...(m[3] ? { line: Number(m[3]) } : {}) }] : [];
  });
  return { markers, comments };
}

/** What a task's first head leaves in its `wip_marker` file. */
export const WIP_MARKER_CONTENT = "Work in progress: delete this file once the task is done.\n";

/** The line a revision inserts in a commented file, in the file's comment syntax. */
export function revisionNote(file: string, iteration: number, comment: number): string {
  const text = `Revision ${iteration}: reviewed (comment ${comment}).`;
  return /\.(m?js|ts)$/.test(file) ? `// ${text}` : text;
}

/** The file a revision writes when nothing else changes (Forge never accepts an empty diff): its path and content. */
export function revisionRecord(taskId: string, iteration: number): [string, string] {
  return [
    `forge-demo/${taskId}-revision-${iteration}.md`,
    `# Revision ${iteration}\n\nThe review asked for changes; this revision records it.\n`,
  ];
}

/** A file a revision changes: its content before and after, and the notes it inserted (1-based lines of `after`). */
export interface RevisedFile {
  path: string;
  before: string;
  after: string;
  notes: { line: number; text: string }[];
}

/** What a revision does, decided from its prompt and the checkout: the demo agent and the Claude Code script both carry it out. */
export interface RevisionWork {
  /** Markers the failing checks name that are in the checkout: deleted. */
  deleted: string[];
  /** Commented files, with a note per comment at the commented line. */
  files: RevisedFile[];
  /** Written when nothing else changes: path and content. */
  record?: [string, string];
  /** One answer per review comment, for the answers file. */
  answers: { comment: number; answer: string }[];
  /** Every path the revision changes, in order. */
  changed: string[];
}

/** A checkout file's text by its relative path; undefined when it is not there (or not a file). */
export function checkoutReader(cwd: string): (rel: string) => string | undefined {
  return (rel) => {
    try {
      return readFileSync(path.join(cwd, rel), "utf8");
    } catch {
      return undefined;
    }
  };
}

/** What a revision of `taskId` does; `read` gives a checkout file's text (undefined when it is not there). */
export function revisionWork(prompt: string, iteration: number, taskId: string, read: (rel: string) => string | undefined): RevisionWork {
  const asks = revisionAsks(prompt);
  const deleted = asks.markers.filter((m) => read(m) !== undefined);
  const changed = [...deleted];
  const files = new Map<string, RevisedFile>();
  const answers: RevisionWork["answers"] = [];
  for (const c of asks.comments) {
    const text0 = files.has(c.path) ? undefined : read(c.path);
    const f = files.get(c.path) ?? (text0 !== undefined ? { path: c.path, before: text0, after: text0, notes: [] } : undefined);
    if (!f) {
      answers.push({ comment: c.id, answer: `\`${c.path}\` is not in the branch any more; nothing to change there.` });
      continue;
    }
    const lines = f.after.split("\n");
    const text = revisionNote(c.path, iteration, c.id);
    const at = Math.min(Math.max((c.line ?? lines.length) - 1, 0), lines.length);
    lines.splice(at, 0, text);
    f.after = lines.join("\n");
    f.notes = [...f.notes.map((n) => (n.line > at ? { ...n, line: n.line + 1 } : n)), { line: at + 1, text }];
    files.set(c.path, f);
    if (!changed.includes(c.path)) changed.push(c.path);
    answers.push({ comment: c.id, answer: `Done in revision ${iteration}: a note at \`${c.path}:${at + 1}\`.` });
  }
  const record = changed.length === 0 ? revisionRecord(taskId, iteration) : undefined;
  if (record) changed.push(record[0]);
  return { deleted, files: [...files.values()], ...(record ? { record } : {}), answers, changed };
}

/** A revision: answer the failing checks and the review comments, then the walkthrough and the answers. */
async function revise(
  r: ScriptedRevision,
  prompt: string,
  taskText: string | undefined,
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<number> {
  const say = (l: string) => void process.stdout.write(`${l}\n`);
  const work = revisionWork(prompt, r.iteration, env.FORGE_TASK_ID ?? "task", checkoutReader(cwd));
  for (const marker of work.deleted) {
    await rm(path.join(cwd, marker));
    say(`Deleted ${marker}: the failing check names it as unfinished work`);
  }
  for (const f of work.files) {
    await writeFile(path.join(cwd, f.path), f.after);
    say(`Answered ${f.notes.length} comment(s) in ${f.path}`);
  }
  if (work.record) {
    await mkdir(path.dirname(path.join(cwd, work.record[0])), { recursive: true });
    await writeFile(path.join(cwd, work.record[0]), work.record[1]);
  }
  if (r.answersFile) await writeReport(r.answersFile, `${JSON.stringify(work.answers)}\n`);
  if (env.FORGE_SPEND_FILE) await writeFile(env.FORGE_SPEND_FILE, JSON.stringify({ cost_usd: 0.03 }));
  const walkthroughFile =
    env.FORGE_WALKTHROUGH_PATH ?? (env.FORGE_SIGNAL_DIR ? path.join(env.FORGE_SIGNAL_DIR, "walkthrough.md") : undefined);
  if (walkthroughFile) {
    const task = parseScriptedTask(taskText ?? `---\nid: ${JSON.stringify(env.FORGE_TASK_ID ?? "task")}\n---\n`);
    // A revision spawns no follow-up and names no new risk: its walkthrough is what it changed.
    task.directives.followups = [];
    task.directives.risks = [];
    await writeWalkthrough(path.resolve(cwd, walkthroughFile), task, Number(env.FORGE_ATTEMPT ?? "1"), work.changed, env.FORGE_RUN_ID);
  }
  say(`Done: revision ${r.iteration} changed ${work.changed.join(", ")}`);
  return 0;
}

/** The task as the scripted sentinel reads its directives; a text that is no scripted task has none. */
function sentinelTask(text: string | undefined): ScriptedTask {
  try {
    return parseScriptedTask(text ?? "");
  } catch {
    return parseScriptedTask("");
  }
}

/** The `stall_at:` of the first `forge-scripted-agent` block in a text: the attempt and the stage in which the agent goes silent. */
export function stallAt(text: string | undefined): { attempt: number; stage: string } | undefined {
  const m = /^(`{3,})forge-scripted-agent[^\n]*\n([\s\S]*?)^\1[ \t]*$/m.exec(text ?? "");
  if (!m) return undefined;
  const at = (parseYaml(m[2]!) as { stall_at?: { attempt?: unknown; stage?: unknown } } | null)?.stall_at;
  return at && Number.isInteger(at.attempt) && typeof at.stage === "string"
    ? { attempt: at.attempt as number, stage: at.stage }
    : undefined;
}

/** The stage a stage prompt names (src/agent/stages/prompt.ts: "Stage: **verify**."). */
export function stageOf(prompt: string): string | undefined {
  return /\bStage: \*\*([a-z-]+)\*\*/.exec(prompt)?.[1];
}

/** A person's answer to the previous attempt's question, as the stage prompt quotes it. */
export function personAnswer(prompt: string): string | undefined {
  const m =
    /^## A person's answer to the previous attempt's question\n\n<untrusted-text source="answer">\n([\s\S]*?)\n<\/untrusted-text>/m.exec(
      prompt,
    );
  return m?.[1]?.trim() || undefined;
}

/** The session this agent names itself by: the one a resumed attempt continues, else a new one. */
function announceSession(env: NodeJS.ProcessEnv, stage: string | undefined): void {
  const resumed = env.FORGE_RESUME_SESSION;
  const id = resumed ?? `demo-${env.FORGE_TASK_ID ?? "task"}-${env.FORGE_ATTEMPT ?? "1"}-${stage ?? "session"}-${Date.now().toString(36)}`;
  process.stdout.write(`${JSON.stringify({ type: "system", subtype: "init", session_id: id, model: "forge-scripted" })}\n`);
  if (resumed) process.stdout.write(`Resuming session ${resumed} of an earlier attempt\n`);
}

/** The walkthrough's approach says what the person answered. */
async function noteAnswer(env: NodeJS.ProcessEnv, cwd: string, answer: string): Promise<void> {
  const file = env.FORGE_WALKTHROUGH_PATH ?? (env.FORGE_SIGNAL_DIR ? path.join(env.FORGE_SIGNAL_DIR, "walkthrough.md") : undefined);
  const text = file ? await readFile(path.resolve(cwd, file), "utf8").catch(() => undefined) : undefined;
  if (!file || text === undefined || !text.includes("## Approach\n\n")) return;
  const line = `The previous attempt asked a question; a person answered on the PR: ${answer.replace(/\s+/g, " ")}\n\n`;
  await writeFile(path.resolve(cwd, file), text.replace("## Approach\n\n", `## Approach\n\n${line}`));
}

export async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  // `--plan <dir>`: the demo's plan folder, whose overlays are the Captain's answers.
  const at = argv.indexOf("--plan");
  const planDir = at >= 0 ? argv[at + 1] : undefined;
  if (at >= 0) argv = [...argv.slice(0, at), ...argv.slice(at + 2)];
  // What the scripted agent would read: the task file Forge points at, else the prompt (the file
  // alone when it is long).
  const from = env.FORGE_TASK_FILE ?? env.FORGE_PROMPT_FILE;
  const text = from ? await readFile(from, "utf8").catch(() => env.FORGE_PROMPT) : env.FORGE_PROMPT;
  const id = env.FORGE_TASK_ID ?? "task";
  // `_captain-<crId>`: a Captain answering a Change Request (action/src/captain/overlay.ts).
  const cr = parseCaptainId(id);
  if (cr) {
    const prompt = env.FORGE_PROMPT_FILE ? await readFile(env.FORGE_PROMPT_FILE, "utf8").catch(() => env.FORGE_PROMPT) : env.FORGE_PROMPT;
    return captain(cr, planDir && path.resolve(planDir), prompt ?? text ?? "", process.cwd());
  }
  const followup = isFollowupId(id);
  // A revision's review or failing checks are in the stage prompt, not in the task file.
  const stagePrompt = env.FORGE_PROMPT ?? (env.FORGE_PROMPT_FILE ? await readFile(env.FORGE_PROMPT_FILE, "utf8").catch(() => "") : "");
  const stage = stageOf(stagePrompt);
  announceSession(env, stage);
  // The task sentinel and the fix it asks for do what the task's `sentinel:` directives say, nothing else.
  const sentinel = await runScriptedSentinel(sentinelTask(text), env.FORGE_AGENT_TYPE, env.FORGE_SPAWN_NAME, stagePrompt, process.cwd());
  if (sentinel !== undefined) return sentinel;
  const stall = followup ? undefined : stallAt(text);
  if (stall && stall.attempt === Number(env.FORGE_ATTEMPT ?? "1") && stall.stage === stage) {
    process.stdout.write(`Thinking about ${stage}…\n`);
    // Silent, but alive until the runner stops it.
    return new Promise<number>(() => setInterval(() => {}, 1 << 30));
  }
  const answer = personAnswer(stagePrompt);
  if (answer) {
    const code = await agentWork(argv, env, id, followup, text, stagePrompt);
    if (code === 0) await noteAnswer(env, process.cwd(), answer);
    return code;
  }
  return agentWork(argv, env, id, followup, text, stagePrompt);
}

/** The task's work (or a revision's, or a follow-up's), once the session is named. */
async function agentWork(
  argv: string[],
  env: NodeJS.ProcessEnv,
  id: string,
  followup: boolean,
  text: string | undefined,
  stagePrompt: string,
): Promise<number> {
  const revision = revisionOf(stagePrompt);
  if (revision && !followup) return revise(revision, stagePrompt, text, env, process.cwd());
  const marker = followup ? undefined : wipMarker(text);
  if (marker) {
    await mkdir(path.dirname(path.join(process.cwd(), marker)), { recursive: true });
    await writeFile(path.join(process.cwd(), marker), WIP_MARKER_CONTENT);
  }
  if (text === undefined || (!followup && parseScriptedTask(text).files.length > 0)) return scripted(argv, env);
  const files = (followup && followupFiles(text)) || {
    [`forge-demo/${id}.md`]: `# ${id}\n\nWritten by Forge's demo agent for attempt ${env.FORGE_ATTEMPT ?? "1"}: the task names no files to write.\n`,
  };
  const { FORGE_TASK_FILE: _task, FORGE_PROMPT_FILE: _prompt, ...rest } = env;
  const title = followup ? `Follow-up ${id}` : id;
  const prompt = `---\nid: ${JSON.stringify(id)}\ntitle: ${JSON.stringify(title)}\n---\n\n${Object.entries(files)
    .map(([f, c]) => fence(f, c))
    .join("\n")}`;
  return scripted(argv, {
    ...rest,
    FORGE_PROMPT: followup ? prompt : `${text}\n\n${fence(Object.keys(files)[0]!, Object.values(files)[0]!)}`,
  });
}
