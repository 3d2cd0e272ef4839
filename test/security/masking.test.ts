/**
 * Everything Forge publishes from a job is masked: the job's secrets (its token, the model keys —
 * what the runner's Masker knows) and token shapes nobody registered (`ghs_…`, `ghp_…`,
 * `github_pat_…`, `sk-ant-…`, `sk-…`, the base64 of `x-access-token:<token>`) never reach the
 * record folder, a PR body, the job summary, result.json, the question the App posts, the refinement
 * it carries to the next attempt or a Change Request's document. Each test runs the action as the
 * runner does (`run()`, secrets from its inputs) with a command agent that writes every secret into
 * one channel, and reads back what was published: from the repository, the recording GitHub port,
 * the step summary file, or what the App makes of the result (its decision and rendering).
 */
import { afterEach, describe, expect, it } from "vitest";
import { createCommandRunner } from "../../action/src/agent-runner.js";
import { run } from "../../action/src/runner.js";
import { Masker } from "../../src/agent/secrets.js";
import { finishedInput } from "../../src/app/normalize.js";
import { renderChangeRequestIssue } from "../../src/app/render.js";
import { decide } from "../../src/core/decide/index.js";
import { attemptDir, resultPath } from "../../src/core/layout.js";
import { asData } from "../../src/core/render/as-data.js";
import { agentResultSchema, type AgentResult } from "../../src/core/schemas/agent-result.js";
import { agentWalkthrough, makeWorld, RUN, scriptAgent, sh, testConfig, type World } from "../action/world.js";
import { GIT_USER, runnerProcess, serveOrigin, workflowEnv } from "../action/job.js";

/** The job's token and model key, as the workflow passes them (`github-token`, `anthropic-api-key`). */
const JOB_TOKEN = "job-token-9f2c41d7e0b3a5";
const MODEL_KEY = "model-key-4e8a1b6c2d9f07";
const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64");
/** Shapes of tokens the job never registered: masked because of what they look like. */
const SHAPES = [
  `ghs_${"A1b2C3d4E5".repeat(3)}xyzabc`,
  `ghp_${"Z9y8X7w6V5".repeat(3)}uvwxyz`,
  `gho_${"q1W2e3R4t5".repeat(3)}abcdef`,
  `ghu_${"m1N2b3V4c5".repeat(3)}ghijkl`,
  `ghr_${"p0O9i8U7y6".repeat(3)}mnopqr`,
  `github_pat_11ABCDEFG0${"a1B2c3D4e5".repeat(2)}_${"F6g7H8i9J0".repeat(5)}`,
  `sk-ant-api03-${"Kq3_Lw9-Mx".repeat(4)}AA`,
  `sk-proj-${"Ab3dEf6hIj".repeat(4)}`,
  `sk-${"T3BlbkFJ0x".repeat(4)}`,
  b64(`x-access-token:ghs_${"N0tR3g1st3".repeat(4)}`),
];
/** Everything that must not be published, and how the job's secrets are also spelled. */
const LEAKS = [JOB_TOKEN, MODEL_KEY, b64(JOB_TOKEN), b64(`x-access-token:${JOB_TOKEN}`), ...SHAPES];
/** The line an agent writes into a channel: each secret, between words that stay. */
const LEAKY = `leak-check ${LEAKS.join(" and ")} end-of-leaks`;

function expectMasked(text: string | undefined, where: string): void {
  expect(text, `${where} was not published`).toBeDefined();
  // The channel carried the agent's line (so the test sees what it tests), with every secret masked.
  expect(text, `${where} does not carry the agent's text`).toContain("leak-check ***");
  for (const leak of LEAKS) expect(text!.includes(leak), `${where} publishes ${leak}`).toBe(false);
}

const { summaryFile, summary } = runnerProcess();
let world: World | undefined;
afterEach(() => {
  world?.cleanup();
  world = undefined;
});

interface Ran {
  w: World;
  /** The record commit: the task branch's head. */
  head: string;
  result: AgentResult;
  summary: string;
}

/** Runs the action as the workflow does, with `script` as the agent; what it published. */
async function runAction(script: string): Promise<Ran> {
  const w = (world = makeWorld());
  const agent = scriptAgent(w, "agent", script);
  const inputs = { "github-token": JOB_TOKEN, "anthropic-api-key": MODEL_KEY, "run-id": RUN, "task-id": "t1", attempt: "1", ...GIT_USER };
  workflowEnv(w, inputs, summaryFile, { GITHUB_SERVER_URL: serveOrigin(w) });
  await run({ github: w.github, agent: createCommandRunner({ command: agent, env: { PATH: process.env.PATH ?? "" }, killGraceMs: 200 }) });
  const head = sh(w.origin, ["rev-parse", `refs/heads/${w.branch}`]);
  const resultText = w.show(head, resultPath(RUN, "t1", 1));
  expect(resultText, "no result.json in the record").toBeDefined();
  return { w, head, result: agentResultSchema.parse(JSON.parse(resultText!)), summary: summary() };
}

/** What the App decides on the attempt's result, as it would after reading the record commit. */
function appDecision(r: Ran) {
  const parent = sh(r.w.origin, ["rev-parse", `${r.head}^`]);
  const input = finishedInput({ runId: RUN, taskId: "t1", attempt: 1 }, { ok: true, result: r.result }, r.head, parent);
  return decide(r.w.journal, input, Date.parse("2026-11-22T09:00:00Z"), testConfig());
}

const WORK = `mkdir -p src && printf 'hello\\n' > src/out.txt`;
const heredoc = (file: string, text: string) => `cat > "${file}" <<'FORGE_EOF'\n${text}\nFORGE_EOF`;
const walkthrough = (fm: Record<string, unknown> = {}, body?: string) => heredoc("$FORGE_WALKTHROUGH_PATH", agentWalkthrough(fm, body));
const WT_BODY = `## Summary\n\n${LEAKY}\n\n## Approach\n\nDirect.\n\n## Issues Encountered\n\nNone.\n\n## Testing\n\nRan it.\n`;

describe("everything a job publishes is masked", () => {
  it("the record folder: every file the record commit adds (transcript, walkthrough, reports, events)", { timeout: 60_000 }, async () => {
    const r = await runAction(
      [
        WORK,
        `echo "${LEAKY}"`,
        `echo "${LEAKY}" >&2`,
        heredoc("$FORGE_SESSION_DIR/notes.md", LEAKY),
        `mkdir -p "$FORGE_SESSION_DIR/reports"`,
        heredoc("$FORGE_SESSION_DIR/reports/report.json", JSON.stringify({ note: LEAKY })),
        walkthrough({}, WT_BODY),
      ].join("\n"),
    );
    const rec = attemptDir(RUN, "t1", 1);
    const files = sh(r.w.origin, ["ls-tree", "-r", "--name-only", r.head, `${rec}/`])
      .split("\n")
      .filter(Boolean);
    expect(files).toEqual(
      expect.arrayContaining([`${rec}/transcript.log`, `${rec}/notes.md`, `${rec}/reports/report.json`, `${rec}/walkthrough.md`]),
    );
    for (const f of [`${rec}/transcript.log`, `${rec}/notes.md`, `${rec}/reports/report.json`, `${rec}/walkthrough.md`])
      expectMasked(r.w.show(r.head, f), f);
    for (const f of files) {
      const text = r.w.show(r.head, f) ?? "";
      for (const leak of LEAKS) expect(text.includes(leak), `${f} publishes ${leak}`).toBe(false);
    }
    // The commit messages of the branch too.
    const log = sh(r.w.origin, ["log", "--format=%B", r.head]);
    for (const leak of LEAKS) expect(log.includes(leak), `a commit message publishes ${leak}`).toBe(false);
  });

  it("the PR body: the rendered walkthrough, and every body written before it", { timeout: 60_000 }, async () => {
    const r = await runAction(
      [WORK, walkthrough({ risks: [LEAKY], followups: [LEAKY], tests: [{ name: LEAKY, result: "pass" }] }, WT_BODY)].join("\n"),
    );
    expect(r.result.exit_code, r.result.error).toBe(0);
    const pr = r.w.github.pulls[0]!;
    expect(pr.bodies.length).toBeGreaterThanOrEqual(2);
    expectMasked(pr.body, "the PR body");
    for (const body of [...pr.bodies, pr.title])
      for (const leak of LEAKS) expect(body.includes(leak), `a PR text publishes ${leak}`).toBe(false);
  });

  it("the job summary: the agent's claims quoted in its warnings", { timeout: 60_000 }, async () => {
    const r = await runAction(
      [
        WORK,
        walkthrough({
          branch: LEAKY,
          files_changed: [
            { path: "src/out.txt", reason: "the output" },
            { path: LEAKY, reason: "x" },
          ],
        }),
      ].join("\n"),
    );
    expect(r.summary).toContain("**Warnings**");
    expectMasked(r.summary, "the job summary");
  });

  it("result.json: the walkthrough's strings the App reads", { timeout: 60_000 }, async () => {
    const r = await runAction([WORK, walkthrough({ risks: [LEAKY], followups: [LEAKY] })].join("\n"));
    expect(r.result.exit_code, r.result.error).toBe(0);
    const text = r.w.show(r.head, resultPath(RUN, "t1", 1));
    expectMasked(text, "result.json");
    expect(r.result.walkthrough?.risks[0]).toContain("leak-check ***");
  });

  it("the question (exit 3): result.json's and the comment the App posts on the PR", { timeout: 60_000 }, async () => {
    const r = await runAction([heredoc("$FORGE_QUESTION_FILE", `Which database? ${LEAKY}`), "exit 3"].join("\n"));
    expect(r.result.exit_code).toBe(3);
    expectMasked(r.result.question, "result.json's question");
    const d = appDecision(r);
    const comment = d.effects.find((e) => e.kind === "PostComment");
    expect(comment, JSON.stringify(d.effects.map((e) => e.kind))).toBeDefined();
    // What src/app/effects/issues-and-comments.ts posts.
    expectMasked(asData((comment as { body: string }).body), "the question comment");
    expectMasked(JSON.stringify(d.journal), "the journal");
  });

  it("the refinement (exit 10): result.json's, the journal's and the next dispatch's", { timeout: 60_000 }, async () => {
    const r = await runAction(
      [WORK, heredoc("$FORGE_REFINEMENT_FILE", `# Refinement Request\n\nFix the tests. ${LEAKY}`), "exit 10"].join("\n"),
    );
    expect(r.result.exit_code).toBe(10);
    expectMasked(r.result.refinement, "result.json's refinement");
    expectMasked(r.w.show(r.head, `${attemptDir(RUN, "t1", 1)}/refinement.md`), "refinement.md");
    const d = appDecision(r);
    const t1 = d.journal.tasks.find((t) => t.id === "t1")!;
    expectMasked(JSON.stringify(t1), "the journal's task");
    expectMasked(JSON.stringify(d), "the App's decision (journal, events, effects)");
  });

  it("the Change Request document (exit 11): the record's and the issue the App opens", { timeout: 60_000 }, async () => {
    const r = await runAction(
      [
        heredoc(
          "$FORGE_CHANGE_REQUEST_FILE",
          [
            "---",
            "title: Missing task",
            `reason: A task is missing. ${LEAKY}`,
            "suggested_action: AMEND",
            `suggested_changes: Add it. ${LEAKY}`,
            "---",
            "## Description",
            "",
            `A task is missing. ${LEAKY}`,
            "",
            "## Impact Assessment",
            "",
            "t1 waits.",
            "",
            "## Proposed Resolution",
            "",
            "Add it.",
            "",
          ].join("\n"),
        ),
        "exit 11",
      ].join("\n"),
    );
    expect(r.result.exit_code).toBe(11);
    expect(r.result.change_request_path).toBe(`${attemptDir(RUN, "t1", 1)}/change-request.md`);
    expectMasked(JSON.stringify(r.result.change_request), "result.json's change_request");
    const doc = r.w.show(r.w.branch, r.result.change_request_path!);
    expectMasked(doc, "change-request.md");
    const d = appDecision(r);
    const open = d.effects.find((e) => e.kind === "OpenChangeRequest") as { crId: string; path?: string } | undefined;
    expect(open, JSON.stringify(d.effects.map((e) => e.kind))).toBeDefined();
    expect(open!.path).toBe(r.result.change_request_path);
    // What src/app/effects/issues-and-comments.ts opens: the document read from the emitting task's branch.
    expectMasked(
      renderChangeRequestIssue(d.journal, open!.crId, r.w.show(r.w.branch, open!.path!), testConfig()),
      "the Change Request issue",
    );
  });
});

describe("the Masker's token shapes", () => {
  it("masks each shape, and the base64 basic auth of a token nobody registered", () => {
    const m = new Masker();
    for (const shape of SHAPES) expect(m.mask(`a ${shape} b`), shape).toBe("a *** b");
    expect(m.maskDeep({ k: [SHAPES[0], 3, { x: SHAPES[1] }] })).toEqual({ k: ["***", 3, { x: "***" }] });
  });
});
