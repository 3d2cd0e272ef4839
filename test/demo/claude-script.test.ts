/**
 * The Claude Code script of `forge demo --agent claude` (src/demo/claude-script.ts) does
 * what the demo agent does, as tool calls: a `wip_marker` task's first attempt also Writes the marker;
 * a revision prompt, built as the Forge action builds it, gets Bash `rm` of the marker the failing
 * check names, Read then Edit of the commented file with the note at the commented line, the answers
 * JSON in the file the prompt names, the walkthrough of what changed, and `FORGE_EXIT=0`.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { ScriptedToolCall, ScriptedTurn } from "../../src/fake-agents/model-server.js";
import { parseScriptedTask } from "../../src/fake-agents/scripted-agent.js";
import { completeChangeRequest } from "../../src/agent/change-request.js";
import { demoClaudeScript } from "../../src/demo/claude-script.js";
import { revisionNote, revisionRecord, WIP_MARKER_CONTENT } from "../../src/demo/demo-agent.js";
import { REVIEW } from "../../src/demo/review.js";
import { releaseCrTitle } from "./release-cr.js";
import { demoTask, removeTempDirs, revisionContext, singleStagePrompt, tmp, writeFiles, type RevisionAsk } from "./revision-prompt.js";

afterAll(removeTempDirs);

/** A checkout holding the task's files as its first head wrote them, and any extra files. */
function checkout(taskId: string, extra: Record<string, string> = {}): string {
  const dir = tmp("forge-claude-script-");
  writeFiles(dir, { ...Object.fromEntries(parseScriptedTask(demoTask(taskId)).files), ...extra });
  return dir;
}

const reports = (session: string) => ({
  walkthrough: path.join(session, "walkthrough.md"),
  question: path.join(session, "question.md"),
  refinement: path.join(session, "refinement.md"),
  changeRequest: path.join(session, "change-request.md"),
});

/** Every turn of the conversation the script answers for this prompt, up to its `FORGE_EXIT`. */
function conversation(prompt: string): ScriptedTurn[] {
  const script = demoClaudeScript(12);
  const turns: ScriptedTurn[] = [];
  for (let turn = 0; turn < 12; turn++) {
    const t = script[turn]!({ turn, body: { messages: [{ role: "user", content: prompt }] }, toolResults: [] });
    turns.push(t);
    if (/FORGE_EXIT=\d+/.test(t.text ?? "")) break;
  }
  return turns;
}

const calls = (turns: ScriptedTurn[]): ScriptedToolCall[] => turns.flatMap((t) => t.toolCalls ?? []);
const input = (c: ScriptedToolCall) =>
  c.input as { file_path?: string; content?: string; old_string?: string; new_string?: string; command?: string };

async function revisionPrompt(ask: RevisionAsk, workdir: string) {
  const session = tmp("forge-claude-script-session-");
  const { task, answersFile } = await revisionContext(ask, session);
  return { prompt: singleStagePrompt(task, workdir, reports(session)), answersFile, walkthrough: reports(session).walkthrough };
}

describe("the Claude Code script of forge demo --agent claude", () => {
  it("writes truncate's wip_marker with its files on the first attempt, and not for a task without one", () => {
    const dir = tmp("forge-claude-script-first-");
    const session = tmp("forge-claude-script-session-");
    const first = calls(
      conversation(
        singleStagePrompt({ runId: "textkit-1", taskId: "truncate", attempt: 1, task: demoTask("truncate") }, dir, reports(session)),
      ),
    );
    const writes = first.filter((c) => c.name === "Write").map((c) => [path.relative(dir, input(c).file_path!), input(c).content]);
    expect(writes).toContainEqual(["src/truncate.wip", WIP_MARKER_CONTENT]);
    expect(writes.map(([p]) => p).filter((p) => !p!.startsWith(".."))).toEqual([
      "src/truncate.js",
      "test/truncate.test.js",
      "src/truncate.wip",
    ]);
    const pad = calls(
      conversation(singleStagePrompt({ runId: "textkit-1", taskId: "pad", attempt: 1, task: demoTask("pad") }, dir, reports(session))),
    );
    expect(pad.some((c) => input(c).file_path?.endsWith(".wip"))).toBe(false);
  });

  it("release's first attempt Writes a Change Request the runner accepts, titled in the agent's words, then FORGE_EXIT=11", () => {
    const dir = tmp("forge-claude-script-cr-");
    const session = tmp("forge-claude-script-session-");
    const turns = conversation(
      singleStagePrompt({ runId: "textkit-1", taskId: "release", attempt: 1, task: demoTask("release") }, dir, reports(session)),
    );
    expect(turns.at(-1)!.text).toMatch(/FORGE_EXIT=11$/);
    const write = calls(turns).find((c) => c.name === "Write" && input(c).file_path === reports(session).changeRequest);
    expect(write).toBeDefined();
    const completed = completeChangeRequest(input(write!).content, {
      id: "cr-release-1",
      run_id: "textkit-1",
      emitted_by: "release",
      emitted_at: "2026-11-22T09:00:00.000Z",
    });
    expect(completed.ok ? completed.frontmatter : completed.problems).toMatchObject({
      title: releaseCrTitle(),
      affected_tasks: ["release"],
      suggested_action: "AMEND",
      priority: "HIGH",
    });
  });

  it("answers a fix revision: Bash rm of the marker the failing check names, the walkthrough, FORGE_EXIT=0", async () => {
    const dir = checkout("truncate", { "src/truncate.wip": WIP_MARKER_CONTENT });
    const { prompt, walkthrough } = await revisionPrompt({ taskId: "truncate", iteration: 1, markers: ["src/truncate.wip"] }, dir);
    expect(prompt).toContain("## Revision 1: what the review asks");
    const turns = conversation(prompt);
    const all = calls(turns);
    expect(all[0]).toEqual({
      name: "Bash",
      input: { command: `rm -- '${path.join(dir, "src/truncate.wip")}'`, description: "Delete src/truncate.wip" },
    });
    // No review comment: no answers file is asked for, and none is written; the task's files are not written again.
    expect(prompt).not.toContain("answers.json");
    expect(all.map((c) => [c.name, input(c).file_path])).toEqual([
      ["Bash", undefined],
      ["Write", walkthrough],
    ]);
    expect(input(all[1]!).content).toMatch(/^files_changed:\n {2}- path: "src\/truncate\.wip"$/m);
    expect(turns.at(-1)!.text).toMatch(/FORGE_EXIT=0$/);
  });

  it("answers a review: Read then Edit of the commented file with the note at the commented line, the answers JSON, the walkthrough", async () => {
    const dir = checkout("pad");
    const comment = { reviewId: 41, id: 77, path: REVIEW.path, line: REVIEW.line, body: REVIEW.comment };
    const { prompt, answersFile, walkthrough } = await revisionPrompt({ taskId: "pad", iteration: 1, comment }, dir);
    const turns = conversation(prompt);
    const all = calls(turns);
    const file = path.join(dir, REVIEW.path);
    expect(all.map((c) => [c.name, input(c).file_path])).toEqual([
      ["Read", file],
      ["Edit", file],
      ["Write", answersFile],
      ["Write", walkthrough],
    ]);
    // Applying the Edit as Claude Code does (one unique occurrence) puts the note at the commented line.
    const before = Object.fromEntries(parseScriptedTask(demoTask("pad")).files)[REVIEW.path]!;
    const edit = input(all[1]!);
    expect(before.split(edit.old_string!).length).toBe(2);
    const after = before.replace(edit.old_string!, edit.new_string!).split("\n");
    expect(after[REVIEW.line - 1]).toBe(revisionNote(REVIEW.path, 1, 77));
    expect(after[REVIEW.line - 1]).toBe("// Revision 1: reviewed (comment 77).");
    expect(after[REVIEW.line]).toBe(before.split("\n")[REVIEW.line - 1]);
    expect(after.length).toBe(before.split("\n").length + 1);
    expect(JSON.parse(input(all[2]!).content!)).toEqual([
      { comment: 77, answer: `Done in revision 1: a note at \`${REVIEW.path}:${REVIEW.line}\`.` },
    ]);
    expect(input(all[3]!).content).toMatch(/^files_changed:\n {2}- path: "src\/pad\.js"$/m);
    expect(turns.at(-1)!.text).toMatch(/FORGE_EXIT=0$/);
  });

  it("a review of a file the branch no longer has: an answer saying so, and the revision's own note as its change", async () => {
    const dir = checkout("pad");
    const comment = { reviewId: 41, id: 78, path: "src/gone.js", line: 3, body: "Why?" };
    const { prompt, answersFile } = await revisionPrompt({ taskId: "pad", iteration: 2, comment }, dir);
    const all = calls(conversation(prompt));
    const [record, content] = revisionRecord("pad", 2);
    expect(record).toBe("forge-demo/pad-revision-2.md");
    expect(all.map((c) => [c.name, input(c).file_path])).toEqual([
      ["Write", path.join(dir, record)],
      ["Write", answersFile],
      ["Write", expect.stringMatching(/walkthrough\.md$/)],
    ]);
    expect(input(all[0]!).content).toBe(content);
    expect(JSON.parse(input(all[1]!).content!)).toEqual([
      { comment: 78, answer: "`src/gone.js` is not in the branch any more; nothing to change there." },
    ]);
  });

  it("the scripted demo agent, given the same revision prompt, leaves the checkout as the script's tool calls describe", async () => {
    const dir = checkout("pad", { "src/pad.wip": WIP_MARKER_CONTENT });
    const comment = { reviewId: 41, id: 77, path: REVIEW.path, line: REVIEW.line, body: REVIEW.comment };
    const { prompt, answersFile, walkthrough } = await revisionPrompt(
      { taskId: "pad", iteration: 1, markers: ["src/pad.wip"], comment },
      dir,
    );
    const script = calls(conversation(prompt));
    expect(script.map((c) => c.name)).toEqual(["Bash", "Read", "Edit", "Write", "Write"]);
    const before = readFileSync(path.join(dir, REVIEW.path), "utf8");
    const edit = input(script[2]!);
    const scriptAnswers = input(script[3]!).content;

    execFileSync(process.execPath, [path.join(import.meta.dirname, "../../src/demo/bin/forge-demo-agent.mjs")], {
      cwd: dir,
      env: { ...process.env, FORGE_PROMPT: prompt, FORGE_TASK_ID: "pad", FORGE_ATTEMPT: "1", FORGE_WALKTHROUGH_PATH: walkthrough },
    });
    expect(existsSync(path.join(dir, "src/pad.wip"))).toBe(false);
    expect(readFileSync(path.join(dir, REVIEW.path), "utf8")).toBe(before.replace(edit.old_string!, edit.new_string!));
    expect(readFileSync(answersFile, "utf8")).toBe(scriptAnswers);
    expect(readFileSync(walkthrough, "utf8")).toMatch(/^files_changed:\n {2}- path: "src\/pad\.wip"\n.*\n {2}- path: "src\/pad\.js"$/m);
  }, 30_000);
});
