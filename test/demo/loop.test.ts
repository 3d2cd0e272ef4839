/**
 * The rest of the loop `forge demo` shows, in its parts: what the plan scripts (a question, a stall
 * in one stage of one attempt), how the demo agent reads its stage, its stall and a person's answer
 * from the prompt, how the person's answer is chosen, and how the demo reads a resumed attempt's
 * `## Resumed` section and the loop's problems. The run itself is test/demo/demo.test.ts.
 */
import { describe, expect, it } from "vitest";
import { DEFAULT_ANSWER, scriptedAnswer } from "../../src/demo/answer.js";
import { personAnswer, stageOf, stallAt } from "../../src/demo/demo-agent.js";
import { loopExpected, loopInWords, loopProblems, resumedFacts, section, type DemoLoop } from "../../src/demo/loop.js";
import { loadPlanStages } from "../../src/demo/plan-stages.js";
import { DEFAULT_PLAN } from "../../src/demo/run.js";

const block = (yaml: string) => `---\nid: t\n---\n\n\`\`\`forge-scripted-agent\n${yaml}\n\`\`\`\n`;

describe("the demo agent's part of the loop", () => {
  it("reads the stage from the stage prompt, its stall from the task's block, and a person's answer from the prompt", () => {
    expect(stageOf("Run `r`, task `t`, attempt 2. Stage: **verify**.\n\n## This stage")).toBe("verify");
    expect(stageOf("no stage here")).toBeUndefined();
    expect(stallAt(block("stall_at: { attempt: 1, stage: verify }"))).toEqual({ attempt: 1, stage: "verify" });
    expect(stallAt(block("stall_at: { attempt: one, stage: verify }"))).toBeUndefined();
    expect(stallAt(block("progress: [a]"))).toBeUndefined();
    const prompt =
      "## Spec\n\nx\n\n## A person's answer to the previous attempt's question\n\n<untrusted-text source=\"answer\">\nKeep digits: top-10-tips.\n</untrusted-text>\n\n## Next";
    expect(personAnswer(prompt)).toBe("Keep digits: top-10-tips.");
    expect(personAnswer("## Spec\n\nno answer")).toBeUndefined();
  });

  it("answers with the task's scripted answer, else a default", () => {
    expect(scriptedAnswer(block('person_answer: "Keep digits."'))).toBe("Keep digits.");
    expect(scriptedAnswer(block("progress: [a]"))).toBeUndefined();
    expect(DEFAULT_ANSWER).toBe("Go ahead as the task says.");
  });

  it("textkit scripts a question (slugify), a stall in template's verify stage and a gap template's sentinel catches", async () => {
    const stages = await loadPlanStages(DEFAULT_PLAN);
    expect(loopExpected(stages)).toEqual({ asks: "slugify", stalls: "template", catches: "template" });
    expect(scriptedAnswer(stages.taskText("slugify"))).toBe("Keep digits: top-10-tips.");
    expect(stallAt(stages.taskText("template"))).toEqual({ attempt: 1, stage: "verify" });
  });
});

describe("the demo's reading of a resumed attempt", () => {
  const walkthrough = [
    "## Summary",
    "",
    "Wrote 2 file(s).",
    "",
    "## Resumed",
    "",
    "Attempt 2 continued the work of attempt 1, which stalled or ran out of time, on the same branch (`forge/r/template/1`) and pull request, from its head `0123456789ab`.",
    "",
    "It started at stage `verify`; `implement` was done by attempt 1 and not run again.",
    "",
    "The agent's session `demo-template-1-verify-x1` was resumed.",
    "",
    "---",
    "<sub>Walkthrough file: [runs/r/template/2/walkthrough.md](http://127.0.0.1:1/acme/textkit/blob/0/x.md)</sub>",
  ].join("\n");

  it("takes the `## Resumed` section and what it says: the stage, the stages not run again, the session", () => {
    const text = section(walkthrough, "## Resumed")!;
    expect(text.startsWith("## Resumed\n\nAttempt 2 continued")).toBe(true);
    expect(text.endsWith("`demo-template-1-verify-x1` was resumed.")).toBe(true);
    expect(section("## Resumed\n\nA.\n\n## Testing\n\nB.", "## Resumed")).toBe("## Resumed\n\nA.");
    expect(resumedFacts(text)).toEqual({ stage: "verify", skipped: ["implement"], session: "demo-template-1-verify-x1" });
    expect(resumedFacts("It started at stage `walkthrough`; `implement`, `verify` were done by attempt 1 and not run again.")).toEqual({
      stage: "walkthrough",
      skipped: ["implement", "verify"],
    });
    expect(section("## Summary\n\nx", "## Resumed")).toBeUndefined();
  });

  it("says what the loop failed to show, and the loop in words", () => {
    const loop: DemoLoop = {
      retryByComment: {
        task: "slugify",
        pr: 4,
        attempt: 1,
        question: "Digits?",
        questionCommentId: 10,
        body: "/forge retry slugify Keep digits.",
        commentId: 11,
        answer: "Keep digits.",
        retriedAttempt: 2,
        attempts: 2,
        status: "MERGED",
        finalPr: 9,
        answerInPr: true,
      },
      staleResumed: {
        task: "template",
        staleAttempt: 1,
        error: "stalled",
        stalePr: 20,
        resumedAttempt: 2,
        pr: 20,
        samePr: true,
        reason: "stale",
        stage: "verify",
        skipped: ["implement"],
        session: "s1",
        walkthrough: "## Resumed\n\n…",
        trackerSaysResumed: true,
        status: "MERGED",
      },
      sentinel: { checked: 9, passed: 9, caught: { task: "template", grade: "PASS", cycles: 2, fixes: 1, status: "MERGED" } },
      isolation: { configured: "auto", mode: "user", jobs: 20, isolated: 20, users: 20 },
    };
    const expects = { asks: "slugify", stalls: "template", catches: "template" };
    expect(loopProblems(loop, expects, true)).toEqual([]);
    expect(loopInWords(loop)).toEqual([
      "Question: slugify's attempt 1 asked on #4; octocat answered there with `/forge retry slugify Keep digits.`; attempt 2 took the answer; MERGED",
      "Stalled: template's attempt 1 went silent in verify and was stopped (STALE); attempt 2 resumed it on the same PR #20, implement not run again, its agent's session resumed; MERGED",
      "Sentinel: checked 9 task(s) after their own stages, 9 passed; on template it found a problem, the fix went back to the agent, and it ended PASS (2 cycle(s), 1 fix(es)); MERGED",
      "Isolation: agent.isolation auto — each of the 20 Forge jobs ran its agent as an OS user of its own (20 users, each removed with its job).",
    ]);
    const none = { ...loop.isolation, mode: "none" as const, isolated: 0, users: 0, why: "the agent cannot run as its own user here" };
    const broken: DemoLoop = {
      retryByComment: { ...loop.retryByComment!, answerInPr: false, retriedAttempt: undefined },
      staleResumed: { ...loop.staleResumed!, samePr: false, pr: 21, walkthrough: "", trackerSaysResumed: false },
      sentinel: { checked: 9, passed: 8, caught: { task: "template", grade: "FAIL", cycles: 3, fixes: 2, status: "FAILED" } },
      isolation: none,
    };
    expect(loopProblems(broken, expects, true)).toEqual([
      "the person's `/forge retry slugify Keep digits.` on #4 started no attempt",
      "slugify's last PR (#9) does not give the person's answer",
      "template's resumed attempt is on #21, not the stalled attempt's #20",
      "template's PR #21 says nothing of the resumed attempt (no ## Resumed section)",
      "the tracker's row for template does not say it resumed",
      "template's sentinel still fails it after 2 fix(es)",
      "this machine allows the agent its own OS user, but 20 of 20 jobs ran it as the runner's user (the agent cannot run as its own user here)",
    ]);
    // A machine that does not allow it: the fallback is said, not a problem.
    expect(loopProblems({ isolation: none }, {}, false)).toEqual([]);
    expect(loopInWords({ isolation: none })).toEqual([
      "Isolation: agent.isolation auto — this machine does not allow an OS user per job, so the agents ran as the runner's user (the agent cannot run as its own user here).",
    ]);
    expect(loopProblems({ isolation: loop.isolation }, expects, true)).toEqual([
      "slugify's question was never answered with /forge retry on its PR",
      "template never went STALE",
      "template's sentinel never sent a problem back to be fixed",
    ]);
  });
});
