/**
 * What the scripted model server answers when `forge demo --agent claude` runs the real Claude Code
 * CLI: the same work the scripted agent does, as real tool calls. From the stage prompt Forge sends
 * (src/agent/stages/ `stagePrompt`) it reads the checkout, the report paths, the attempt and the
 * task; the task's fenced files and its `forge-scripted-agent` block decide the turns:
 *   succeed  → Read the files that exist (Claude Code's read-before-write rule), Write every file,
 *              Write the walkthrough, then `FORGE_EXIT=0`;
 *   escalate → Write the Change Request (the scripted agent's `changeRequestDraft`: the task's title,
 *              reason and suggestions), then `FORGE_EXIT=11`;
 *   anything else → the failure in words and `FORGE_EXIT=1`.
 * A task whose `forge-scripted-agent` block names a `wip_marker` also Writes that marker (the demo
 * project's required CI check fails on it), as the demo agent does.
 * A revision (the prompt's `## Revision <n>` section, action/src/task/revision.ts) does what the demo
 * agent's revision does (demo-agent.ts `revisionWork`): Bash `rm` of each marker the failing checks
 * name, Read then Edit of each commented file (a note at the commented line), the answers JSON in the
 * file the prompt names, the walkthrough of what it changed, then `FORGE_EXIT=0`.
 * A follow-up (`_followup-<n>`) writes its source task's `followup_files` (see demo-agent.ts).
 * A Captain (`_captain-<crId>`) writes the overlay its task names (`overlays/overlay-NNN.md`), as the
 * demo's plan folder holds it (`captainFiles`): Read dag.json, Write the overlay, the new task files
 * and dag.json, then `FORGE_EXIT=0`; the Forge action validates, commits and opens the overlay PR.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import path from "node:path";
import { isFollowupId, parseCaptainId } from "../core/layout.js";
import {
  behaviourFor,
  changeRequestDraft,
  parseScriptedTask,
  revisionOf,
  type ScriptedRevision,
  type ScriptedSentinel,
} from "../fake-agents/scripted-agent.js";
import { claudeTools, type ScriptedToolCall, type ScriptedTurn, type TurnRequest } from "../fake-agents/model-server.js";
import { checkoutReader, followupFiles, revisionWork, WIP_MARKER_CONTENT, wipMarker, type RevisedFile } from "./demo-agent.js";

const SECTION_AFTER_TASK =
  /\n## (Goal|Test command|Spec|The plan|Walkthroughs of the tasks|Repository conventions|What the previous attempt|A person's answer|Revision \d+: what the review asks|Steering from people)/;

function firstUserText(req: TurnRequest): string {
  const first = req.body.messages?.find((m) => m.role === "user")?.content;
  if (typeof first === "string") return first;
  return ((first ?? []) as Array<{ type?: string; text?: string }>).map((b) => b.text ?? "").join("\n");
}

function walkthrough(taskId: string, files: string[], followups: string[], risks: string[], summary?: string): string {
  const list = (xs: string[]) => (xs.length ? `\n${xs.map((x) => `  - ${JSON.stringify(x)}`).join("\n")}` : " []");
  return `---
task_id: ${taskId}
status: completed
confidence: 0.85
files_changed:${files.length ? `\n${files.map((f) => `  - path: ${JSON.stringify(f)}\n    reason: "written as the task's instructions give it"`).join("\n")}` : " []"}
tests:
  - name: node --test
    result: pass
risks:${list(risks)}
followups:${list(followups)}
---

## Summary

${summary ?? `Wrote ${files.length} file(s) for ${taskId}.`}

## Approach

Followed the task's instructions and the repository's AGENTS.md.

## Issues Encountered

None.

## Testing

The repository's tests (\`node --test\`).
`;
}

/** The files the Captain writes for the overlay numbered `n` answering `crId` (repository paths), or why there are none. */
export type CaptainAnswer = (n: number, crId: string) => Record<string, string> | string;

function captainPlan(workdir: string, crId: string, section: string, answer: CaptainAnswer | undefined): ScriptedTurn[] {
  const n = Number(/overlays\/overlay-(\d{3,})\.md/.exec(section)?.[1] ?? 0);
  const files = !answer
    ? "the demo gave the Captain no overlays to answer with"
    : n > 0
      ? answer(n, crId)
      : "the Captain's task names no overlay file";
  if (typeof files === "string") return [{ text: `Error: ${files}\nFORGE_EXIT=1` }];
  const abs = (rel: string) => path.join(workdir, rel);
  const entries = Object.entries(files);
  const existing = entries.filter(([rel]) => existsSync(abs(rel)));
  const turns: ScriptedTurn[] = [];
  if (existing.length)
    turns.push({
      text: "Reading the plan files I will amend.",
      toolCalls: existing.map(([rel]) => ({ name: "Read", input: { file_path: abs(rel) } })),
    });
  turns.push({
    text: `Writing overlay ${String(n).padStart(3, "0")} for Change Request ${crId}: ${entries.length} file(s).`,
    toolCalls: entries.map(([rel, content]) => ({ name: "Write", input: { file_path: abs(rel), content } })),
  });
  turns.push({ text: `The plan is amended (append-only) for ${crId}.\nFORGE_EXIT=0` });
  return turns;
}

/** A shell word: the path as one argument, whatever it holds. */
const shellWord = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/**
 * The tool call that inserts a file's revision note: an Edit anchored on the commented line (and as
 * many lines after it as make the anchor unique), else a Write of the whole file (read just before).
 */
function noteEdit(abs: string, f: RevisedFile): ScriptedToolCall {
  if (f.notes.length === 1) {
    const lines = f.before.split("\n");
    const at = f.notes[0]!.line - 1;
    for (let k = at + 1; k <= lines.length; k++) {
      const anchor = lines.slice(at, k).join("\n");
      if (anchor.trim() && f.before.split(anchor).length === 2) return claudeTools.edit(abs, anchor, `${f.notes[0]!.text}\n${anchor}`);
    }
  }
  return claudeTools.write(abs, f.after);
}

/**
 * A revision (the prompt's `## Revision <n>` section): the work demo-agent.ts's revision does, as
 * Claude Code tool calls — Bash `rm` of the markers the failing checks name, Read then Edit of each
 * commented file (the note at the commented line), the revision's own note when nothing else
 * changes, the answers file, the walkthrough of what changed — then `FORGE_EXIT=0`.
 */
function revisionPlan(text: string, r: ScriptedRevision, taskId: string, workdir: string, wtPath: string): ScriptedTurn[] {
  const abs = (rel: string) => path.join(workdir, rel);
  const work = revisionWork(text, r.iteration, taskId, checkoutReader(workdir));
  const turns: ScriptedTurn[] = [];
  if (work.deleted.length)
    turns.push({
      text: `The failing check names ${work.deleted.join(", ")} as unfinished work: deleting it.`,
      toolCalls: work.deleted.map((m) => claudeTools.bash(`rm -- ${shellWord(abs(m))}`, `Delete ${m}`)),
    });
  if (work.files.length)
    turns.push({
      text: "Reading the files the review comments are on.",
      toolCalls: work.files.map((f) => claudeTools.read(abs(f.path))),
    });
  const writes = [
    ...work.files.map((f) => noteEdit(abs(f.path), f)),
    ...(work.record ? [claudeTools.write(abs(work.record[0]), work.record[1])] : []),
  ];
  if (writes.length) turns.push({ text: `Answering the review in revision ${r.iteration}.`, toolCalls: writes });
  const summary = `Revision ${r.iteration} of ${taskId}: changed ${work.changed.join(", ")}.`;
  turns.push({
    text: "Writing the answers and the walkthrough.",
    toolCalls: [
      ...(r.answersFile ? [claudeTools.write(r.answersFile, `${JSON.stringify(work.answers)}\n`)] : []),
      // A revision spawns no follow-up and names no new risk: its walkthrough is what it changed.
      claudeTools.write(wtPath, walkthrough(taskId, work.changed, [], [], summary)),
    ],
  });
  turns.push({ text: `Done: ${summary}\nFORGE_EXIT=0` });
  return turns;
}

/**
 * The task sentinel's session (stage `sentinel`): the audit report with the grade the task's
 * `sentinel.grades` give this check (PASS when none), and a fix list on FAIL; the implementer's fix
 * (stage `sentinel-fix`): Read then Write of `sentinel.fix_files`. As the scripted agent's sentinel.
 */
function sentinelPlan(text: string, section: string, workdir: string): ScriptedTurn[] {
  let s: ScriptedSentinel;
  try {
    s = parseScriptedTask(section).directives.sentinel;
  } catch {
    s = parseScriptedTask("").directives.sentinel;
  }
  if (/Stage: \*\*sentinel-fix\*\*/.test(text)) {
    const files = Object.entries(s.fix_files).map(([rel, content]) => [path.join(workdir, rel), content] as const);
    const existing = files.filter(([abs]) => existsSync(abs));
    return [
      ...(existing.length
        ? [{ text: "Reading what the sentinel found.", toolCalls: existing.map(([abs]) => ({ name: "Read", input: { file_path: abs } })) }]
        : []),
      ...(files.length ? [{ text: "Fixing it.", toolCalls: files.map(([abs, content]) => claudeTools.write(abs, content)) }] : []),
      { text: "Fixed what the sentinel found.\nFORGE_EXIT=0" },
    ];
  }
  const audit = /- Write the audit report to: (\S+)/.exec(text)?.[1];
  const fixList = /- Write the fix list to: (\S+)/.exec(text)?.[1];
  if (!audit) return [{ text: "I cannot find where to write the audit report.\nFORGE_EXIT=1" }];
  const n = Number(/- Check: (\d+)/.exec(text)?.[1] ?? Number.MAX_SAFE_INTEGER);
  const grade = s.grades.length ? s.grades[Math.min(n, s.grades.length) - 1]! : "PASS";
  const writes = [
    claudeTools.write(audit, `Grade: ${grade}\n\n${grade === "PASS" ? "Every acceptance criterion holds." : `- ${s.finding}`}\n`),
  ];
  if (grade === "FAIL" && fixList)
    writes.push(
      claudeTools.write(
        fixList,
        `${JSON.stringify({ fixes: [{ id: 1, severity: "blocking", file: Object.keys(s.fix_files)[0] ?? "", issue: s.finding, suggested_fix: "fix it" }] })}\n`,
      ),
    );
  return [{ text: "Checking the work against the acceptance criteria.", toolCalls: writes }, { text: `Sentinel: ${grade}\nFORGE_EXIT=0` }];
}

/** The turns of one demo session, in Claude Code's tool calls, from its stage prompt `text`. */
export function demoPlan(text: string, captain?: CaptainAnswer): ScriptedTurn[] {
  const workdir = /- Repository checkout: (\S+)/.exec(text)?.[1];
  const wtPath = /- Walkthrough: (\S+)/.exec(text)?.[1];
  const crPath = /- Change Request \(exit 11\): (\S+)/.exec(text)?.[1];
  const attempt = Number(/`, attempt (\d+)\./.exec(text)?.[1] ?? 1);
  const start = text.indexOf("## The task\n\n");
  if (!workdir || !wtPath || start < 0) return [{ text: "I cannot find the task in this prompt.\nFORGE_EXIT=1" }];
  const rest = text.slice(start + "## The task\n\n".length);
  const end = SECTION_AFTER_TASK.exec(rest);
  const section = end ? rest.slice(0, end.index) : rest;
  const taskId = /`, task `([^`]+)`, attempt/.exec(text)?.[1] ?? "task";
  const crId = parseCaptainId(taskId);
  if (crId) return captainPlan(workdir, crId, section, captain);
  if (/Stage: \*\*sentinel(-fix)?\*\*/.test(text)) return sentinelPlan(text, section, workdir);
  const revision = isFollowupId(taskId) ? undefined : revisionOf(text);
  if (revision) return revisionPlan(text, revision, taskId, workdir, wtPath);
  // A follow-up's task quotes its source task: write the source's followup_files, not its files again.
  const task = isFollowupId(taskId)
    ? {
        ...parseScriptedTask("follow-up"),
        id: taskId,
        title: `Follow-up ${taskId}`,
        files: Object.entries(followupFiles(section) ?? { [`forge-demo/${taskId}.md`]: `# ${taskId}\n\nDone by the follow-up agent.\n` }),
      }
    : parseScriptedTask(section);
  const b = behaviourFor(task, attempt);
  if (b.outcome === "escalate" && crPath) {
    const reason = b.reason ?? "The plan cannot be carried out as written";
    // The scripted agent's document (its title, reason and suggestions in the agent's words).
    const draft = changeRequestDraft(task, b);
    return [
      { text: "This needs a change to the plan.", toolCalls: [{ name: "Write", input: { file_path: crPath, content: draft } }] },
      { text: `ESCALATE: ${reason}\nFORGE_EXIT=11` },
    ];
  }
  if (b.outcome !== "succeed")
    return [{ text: `Error: ${b.message ?? `attempt ${attempt} of ${task.id} fails (${b.outcome})`}\nFORGE_EXIT=1` }];
  const abs = (rel: string) => path.join(workdir, rel);
  // A `wip_marker` task's first head also leaves the marker: the project's CI fails on it.
  const marker = isFollowupId(taskId) ? undefined : wipMarker(section);
  const writes: Array<[string, string]> = [
    ...task.files,
    ...(marker && !task.files.some(([rel]) => rel === marker) ? [[marker, WIP_MARKER_CONTENT] as [string, string]] : []),
  ];
  const existing = writes.filter(([rel]) => existsSync(abs(rel)));
  const turns: ScriptedTurn[] = [];
  if (existing.length)
    turns.push({
      text: "Reading the files I will change.",
      toolCalls: existing.map(([rel]) => ({ name: "Read", input: { file_path: abs(rel) } })),
    });
  turns.push({
    text: `Writing ${task.files.length} file(s) for ${task.id}.`,
    toolCalls: writes.map(([rel, content]) => claudeTools.write(abs(rel), content)),
  });
  turns.push({
    text: "Writing the walkthrough.",
    toolCalls: [
      {
        name: "Write",
        input: {
          file_path: wtPath,
          content: walkthrough(
            task.id,
            task.files.map(([rel]) => rel),
            task.directives.followups,
            task.directives.risks,
          ),
        },
      },
    ],
  });
  turns.push({ text: `Done: ${task.title}\nFORGE_EXIT=0` });
  return turns;
}

/** The task and the attempt a stage prompt is for (src/agent/stages/ `stagePrompt`: "…, task `<id>`, attempt <n>."). */
export function promptTask(text: string): { taskId: string; attempt: number } | undefined {
  const m = /`, task `([^`]+)`, attempt (\d+)\./.exec(text);
  return m ? { taskId: m[1]!, attempt: Number(m[2]) } : undefined;
}

/**
 * A model-server script for any number of concurrent Claude Code sessions of the demo; `captain`
 * gives the Captain's overlay files (the demo's plan folder, plan-stages.ts). `before`, given a
 * conversation's stage prompt, may answer in place of the script (`forge demo --agent mixed`: a
 * usage limit for one task's attempt).
 */
export function demoClaudeScript(
  maxTurns = 12,
  captain?: CaptainAnswer,
  before?: (prompt: string) => ScriptedTurn | undefined,
): Array<(req: TurnRequest) => ScriptedTurn> {
  // Planned once per conversation (keyed by its first message), so later turns do not see the
  // files earlier turns wrote as "existing".
  const plans = new Map<string, ScriptedTurn[]>();
  const turn = (req: TurnRequest): ScriptedTurn => {
    const text = firstUserText(req);
    const instead = before?.(text);
    if (instead) return instead;
    const key = createHash("sha256").update(text).digest("hex");
    let p = plans.get(key);
    if (!p) plans.set(key, (p = demoPlan(text, captain)));
    return p[req.turn] ?? { text: "Done.\nFORGE_EXIT=0" };
  };
  return Array.from({ length: maxTurns }, () => turn);
}
