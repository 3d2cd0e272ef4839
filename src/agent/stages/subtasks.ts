/**
 * Type 3's subtasks: the files its plan stage writes (`NN-<slug>.md`, front matter + body), and the
 * work stage that gives each one to a type 1 or type 2 session — on its own sub-branch
 * `<branch>-<sub>` merged back when `subBranches` is set — and marks it done or failed.
 */
import { readAgentFile } from "../agent-files.js";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { describeFrontMatterProblem, readFrontMatter, writeFrontMatter } from "../../core/front-matter.js";
import { abortMerge, finishSubBranch, startSubBranch } from "../branches.js";
import { writeFileAtomic } from "../signals.js";
import { EXIT_CODES, succeeded, type ExitCode } from "../../core/exit-codes.js";
import type { AgentKind } from "../types.js";
import { isAbort, progress, session, SessionLog, timedOutOnItsOwn, type StageContext, type StageOutcome } from "./context.js";

export function subtaskDir(sessionDir: string): string {
  return path.join(sessionDir, "subtasks");
}

export interface Subtask {
  id: string;
  title: string;
  agentType: "1" | "2";
  status: string;
  body: string;
  file: string;
  /** Set when the file's front matter is not YAML (`---js`, …): `file:1: …`. Such a subtask is never worked. */
  problem?: string;
}

/** A subtask file's front matter (a mapping) and body; unreadable YAML leaves the whole text as the body. */
function readSubtaskFile(file: string, text: string): { data: Record<string, unknown>; body: string; problem?: string } {
  const fm = readFrontMatter(file, text);
  if (fm.problem?.kind === "language") return { data: {}, body: text, problem: describeFrontMatterProblem(fm.problem) };
  if (fm.problem) return { data: {}, body: text };
  const data = fm.data !== null && typeof fm.data === "object" && !Array.isArray(fm.data) ? (fm.data as Record<string, unknown>) : {};
  return { data, body: fm.body };
}

/** Subtask files `NN-<slug>.md` in name order. */
export async function readSubtasks(dir: string): Promise<Subtask[]> {
  const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.endsWith(".md")).sort();
  const out: Subtask[] = [];
  for (const name of names) {
    const file = path.join(dir, name);
    // A subtask without readable frontmatter is still work to do; one whose frontmatter is not YAML is not.
    // The agent's files: never read through a link (a refused one is an error of the plan stage).
    const { data, body, problem } = readSubtaskFile(file, (await readAgentFile(dir, file))?.toString("utf8") ?? "");
    const id = String(data.id ?? name.replace(/\.md$/, ""))
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, "-");
    out.push({
      id,
      title: String(data.title ?? id),
      agentType: String(data.agent_type ?? data.type ?? "1") === "2" ? "2" : "1",
      status: String(data.status ?? "pending"),
      body,
      file,
      ...(problem ? { problem } : {}),
    });
  }
  return out;
}

async function setSubtaskStatus(file: string, status: "done" | "failed", note: string): Promise<void> {
  const { data, body } = readSubtaskFile(file, (await readAgentFile(path.dirname(file), file))?.toString("utf8") ?? "");
  await writeFileAtomic(file, writeFrontMatter(body, { ...data, status, forge_note: note }));
}

/** The plan stage's check: at least one subtask file, and every one readable. */
export async function subtaskFilesProblem(dir: string): Promise<string | undefined> {
  const subtasks = await readSubtasks(dir);
  if (subtasks.length === 0) return `no subtask files were written in ${dir}`;
  const refused = subtasks.flatMap((sub) => (sub.problem ? [sub.problem] : []));
  return refused.length ? `subtask files Forge cannot read: ${refused.join("; ")}` : undefined;
}

/** How one subtask ended: worked (ok or not), or a session that ends the whole stage. */
type SubtaskEnd = { ok: boolean; note: string } | { stop: StageOutcome };

/**
 * The work stage: every subtask not done yet, in order; then the ones that failed, once more each
 * (docs/runner.md#stage-rules: a partial result keeps what succeeded and retries the failed parts;
 * a failure is retried once), told how they failed. Partial (12) when some still fail, 1 when all do.
 * A subtask whose front matter is not YAML is never worked, nor tried again.
 */
export async function workSubtasks(c: StageContext): Promise<StageOutcome> {
  const dir = subtaskDir(c.sessionDir);
  const subtasks = await readSubtasks(dir);
  const log = new SessionLog();
  if (subtasks.length === 0)
    return { exitCode: EXIT_CODES.FAILURE, attempts: log.attempts, sessionDirs: log.dirs, error: "no subtasks to work" };
  let done = subtasks.filter((sub) => sub.status === "done").length;
  const refused: string[] = [];
  const failed: Array<{ sub: Subtask; note: string }> = [];
  for (const sub of subtasks) {
    if (sub.status === "done") continue;
    if (sub.problem) {
      // Never worked, never rewritten: its front matter is not YAML.
      progress(c, `subtask ${sub.id} refused: ${sub.problem}`);
      refused.push(sub.problem);
      continue;
    }
    const end = await workSubtask(c, sub, log);
    if ("stop" in end) return end.stop;
    if (end.ok) done++;
    else failed.push({ sub, note: end.note });
    await setSubtaskStatus(sub.file, end.ok ? "done" : "failed", end.note);
  }
  if (failed.length) progress(c, `${failed.length} subtask${failed.length > 1 ? "s" : ""} failed; trying each once more`);
  let stillFailed = 0;
  for (const { sub, note } of failed) {
    const end = await workSubtask(c, sub, log, note);
    if ("stop" in end) return end.stop;
    if (end.ok) done++;
    else stillFailed++;
    await setSubtaskStatus(sub.file, end.ok ? "done" : "failed", end.ok ? `${end.note} (on its second try)` : end.note);
  }
  const failures = stillFailed + refused.length;
  const exitCode: ExitCode = failures === 0 ? EXIT_CODES.SUCCESS : done === 0 ? EXIT_CODES.FAILURE : EXIT_CODES.PARTIAL_SUCCESS;
  return {
    exitCode,
    attempts: log.attempts,
    sessionDirs: log.dirs,
    artifact: dir,
    ...(failures > 0
      ? { error: `${failures} of ${subtasks.length} subtasks failed${refused.length ? ` (${refused.join("; ")})` : ""}` }
      : {}),
  };
}

/**
 * One subtask: a session of its type on behalf of type 3, on its sub-branch when there is one
 * (`<branch>-<sub>`, `<branch>-<sub>-retry` for its second try, so the first try's branch stays).
 * `previous` is how its first try failed. A session that ran out of its own time was killed: the
 * subtask failed (and gets its second try); any other abort ends the stage.
 */
async function workSubtask(c: StageContext, sub: Subtask, log: SessionLog, previous?: string): Promise<SubtaskEnd> {
  const { task } = c;
  const kind: AgentKind = sub.agentType === "2" ? "2" : "1";
  const name = previous === undefined ? sub.id : `${sub.id}-retry`;
  let subBranch: string | undefined;
  if (c.options.subBranches && task.branch) subBranch = await startSubBranch(c.workdir, task.branch, name, c.options.git);
  const prompt = [
    `# Subtask ${sub.id}: ${sub.title}`,
    `Part of task ${task.taskId} (run ${task.runId}, attempt ${task.attempt}). Do this subtask only, verify it, and end with the exit line. Do not write the task's walkthrough.`,
    `## The subtask\n\n${sub.body.trim()}`,
    `## The whole task, for context\n\n${task.task.trim()}`,
    ...(previous !== undefined
      ? [
          `## Previous attempt failed\n\nThe previous attempt at this subtask ${previous}. What it changed is in the working tree. Fix the cause and complete the subtask.`,
        ]
      : []),
  ].join("\n\n");
  progress(c, `subtask ${sub.id} (type ${kind})${previous !== undefined ? ", second try" : ""}`);
  const r = log.add(await session(c, `work-${name}`, kind, prompt, "3", true));
  const killed = timedOutOnItsOwn(c, r);
  if (isAbort(r) && !killed) {
    if (subBranch && task.branch)
      await finishSubBranch(c.workdir, task.branch, subBranch, `forge(${task.taskId}): subtask ${sub.id} (partial)`, c.options.git).catch(
        () => undefined,
      );
    return { stop: log.endWith(r, r.error ? `subtask ${sub.id}: ${r.error.message}` : undefined) };
  }
  let ok = succeeded(r.exitCode);
  let note = ok ? "done" : `failed: ${r.error?.message ?? `exit ${r.exitCode}`}`;
  if (subBranch && task.branch) {
    const merged = await finishSubBranch(c.workdir, task.branch, subBranch, `forge(${task.taskId}): subtask ${sub.id}`, c.options.git);
    if (!merged.merged) {
      await abortMerge(c.workdir, c.options.git);
      ok = false;
      note = `failed: merging ${subBranch} conflicted in ${merged.conflicts.join(", ")}`;
    }
  }
  return { ok, note };
}
