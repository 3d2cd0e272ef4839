import { describe, expect, it } from "vitest";
import { cell, cutToLimit, PR_BODY_LIMIT, renderPrBody, renderStatusBody } from "../../action/src/render.js";
import type { WalkthroughFrontmatter } from "../../src/core/schemas/walkthrough.js";

const fm: WalkthroughFrontmatter = {
  task_id: "t1",
  run_id: "r1",
  attempt: 1,
  branch: "forge/r1/t1/1",
  base_ref: "forge/r1/_integration",
  head_sha: "c".repeat(40),
  status: "completed",
  confidence: 0.92,
  time_spent_minutes: 14,
  files_changed: [{ path: "src/api|routes.ts", reason: "Implemented\nroutes | v2" }],
  tests: [
    { name: "auth.login.success", result: "pass" },
    { name: "auth.register.duplicate", result: "fail" },
  ],
  risks: ["Middleware ordering may conflict"],
  followups: ["Add integration test for /api/v2/health"],
  agent: "claude",
  model: "claude-sonnet-4-5",
  cost_usd: 0.4,
  turns: 12,
};
const url = "https://github.example/acme/demo/blob/abc/.forge/runs/r1/t1/1/walkthrough.md";

describe("the models of a walkthrough in the PR body", () => {
  it("lists each stage's model and tier, and a tier the CLI chose the model for", () => {
    const body = renderPrBody({
      title: "forge(t1): Routes",
      frontmatter: {
        ...fm,
        models: [
          { stage: "implement", role: "implementer", tier: "high", model: "opus" },
          { stage: "verify", role: "verifier", model: "claude-haiku-4-5" },
          { stage: "walkthrough", role: "analyst", tier: "medium" },
        ],
      },
      body: "## Summary\n\nDone.",
      walkthroughUrl: url,
      baseBranch: "forge/r1/_integration",
      exitCode: 0,
    });
    expect(body).toContain(
      "| Models | implement: opus (high) · verify: claude-haiku-4-5 · walkthrough: medium (the CLI's default model) |",
    );
  });
});

describe("the walkthrough as a PR body", () => {
  it("names the task's issue, so GitHub links the PR and the issue; a task without one has no row", () => {
    const input = { title: "forge(t1): Routes", frontmatter: fm, body: "Done.", walkthroughUrl: url, baseBranch: "main", exitCode: 0 };
    expect(renderPrBody({ ...input, issue: 12 })).toContain("| Run | `r1` |\n| Issue | #12 |\n| Attempt | 1 |");
    expect(renderPrBody(input)).not.toContain("| Issue |");
  });

  it("renders the frontmatter as tables, tests as a table, risks and follow-ups as lists", () => {
    const body = renderPrBody({
      title: "forge(t1): Routes",
      frontmatter: fm,
      body: "## Summary\n\nDone.",
      walkthroughUrl: url,
      baseBranch: "forge/r1/_integration",
      exitCode: 0,
    });
    expect(body).toMatchInlineSnapshot(`
      "<!-- forge:walkthrough run=r1 task=t1 attempt=1 -->
      ## forge(t1): Routes

      | | |
      | --- | --- |
      | Task | \`t1\` |
      | Run | \`r1\` |
      | Attempt | 1 |
      | Status | ✅ completed (exit 0) |
      | Confidence | 0.92 |
      | Branch | \`forge/r1/t1/1\` → \`forge/r1/_integration\` |
      | Head | \`cccccccccccccccccccccccccccccccccccccccc\` |
      | Time spent | 14 min |
      | Agent | claude · claude-sonnet-4-5 · $0.40 · 12 turns |

      ### Files changed (1)

      | File | Why |
      | --- | --- |
      | \`src/api\\|routes.ts\` | Implemented routes \\| v2 |

      ### Tests (2)

      | Test | Result |
      | --- | --- |
      | auth.login.success | ✅ pass |
      | auth.register.duplicate | ❌ fail |

      ### Risks

      - Middleware ordering may conflict

      ### Follow-ups

      - Add integration test for /api/v2/health

      ---

      ## Summary

      Done.

      ---
      <sub>Walkthrough file: [runs/r1/t1/1/walkthrough.md](https://github.example/acme/demo/blob/abc/.forge/runs/r1/t1/1/walkthrough.md)</sub>
      "
    `);
  });

  it("cuts a body over 65,536 characters at a line, closes an open code fence and links the full file", () => {
    const huge = `## Summary\n\n\`\`\`ts\n${"const x = 1; // some code that goes on\n".repeat(3000)}\`\`\`\n`;
    const body = renderPrBody({
      title: "t",
      frontmatter: { ...fm, files_changed: Array.from({ length: 500 }, (_, i) => ({ path: `src/f${i}.ts`, reason: "r" })) },
      body: huge,
      walkthroughUrl: url,
      baseBranch: "b",
      exitCode: 0,
    });
    expect(body.length).toBeLessThanOrEqual(PR_BODY_LIMIT);
    expect(body.length).toBeGreaterThan(PR_BODY_LIMIT - 500);
    expect(body).toContain(`[Read the full walkthrough](${url})`);
    expect(body).toContain("| `src/f499.ts` | r |");
    // The fence opened in the cut part is closed before the note.
    const beforeNote = body.slice(0, body.indexOf("> [!NOTE]"));
    expect((beforeNote.match(/^```/gm) ?? []).length % 2).toBe(0);
    expect(body.endsWith("</sub>\n")).toBe(true);
  });

  it("keeps a body that fits as it is, and cuts exactly at the limit", () => {
    expect(cutToLimit("abc\n", "F", url, 100)).toBe("abc\nF");
    const text = "line\n".repeat(100_000);
    const out = cutToLimit(text, "\nfooter\n", url);
    expect(out.length).toBeLessThanOrEqual(PR_BODY_LIMIT);
    expect(out).toMatch(/line\n\n> \[!NOTE\]/);
  });

  it("never splits a surrogate pair (emoji) at the cut", () => {
    const text = "😀".repeat(40_000);
    const out = cutToLimit(text, "", url);
    expect(out.length).toBeLessThanOrEqual(PR_BODY_LIMIT);
    expect(out).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
  });
});

describe("the walkthrough as a PR body: outside text, the running attempt", () => {
  it("renders the agent's text as data: no live @mentions, no Forge markers but its own", () => {
    const evil = "cc @octocat and @acme/admins <!-- forge:cr other-run cr-1 -->";
    const body = renderPrBody({
      title: "forge(t1): Routes",
      frontmatter: {
        ...fm,
        risks: [evil],
        followups: [evil],
        files_changed: [{ path: "a.ts", reason: evil }],
        tests: [{ name: evil, result: "pass" }],
      },
      body: `## Summary\n\n${evil}`,
      walkthroughUrl: url,
      baseBranch: "forge/r1/_integration",
      exitCode: 0,
    });
    expect(body).not.toMatch(/@octocat|@acme\/admins/);
    expect(body).toContain("@\u200Boctocat");
    expect(body.match(/<!-- forge:/g)).toEqual(["<!-- forge:"]); // the walkthrough marker Forge writes, nothing else
    const ended = renderStatusBody({
      state: "ended",
      runId: "r1",
      taskId: "t1",
      attempt: 1,
      title: "t",
      branch: "b",
      baseBranch: "i",
      exitCode: 1,
      error: evil,
    });
    expect(ended).not.toMatch(/@octocat|forge:cr/);
  });

  it("escapes table cells", () => {
    expect(cell("a | b\nc")).toBe("a \\| b c");
    expect(cell("  ")).toBe("—");
  });

  it("shows the attempt's state while running and why it ended without a walkthrough", () => {
    const running = renderStatusBody({
      state: "running",
      title: "forge(t1): X",
      runId: "r1",
      taskId: "t1",
      attempt: 1,
      exitCode: 0,
      error: "",
      branch: "forge/r1/t1/1",
      baseBranch: "forge/r1/_integration",
      jobUrl: "https://j",
    });
    expect(running).toContain("the agent is working");
    expect(running).toContain("| Job | [workflow run](https://j) |");
    const ended = renderStatusBody({
      state: "ended",
      title: "forge(t1): X",
      runId: "r1",
      taskId: "t1",
      attempt: 1,
      exitCode: 21,
      error: "no progress for 60 s",
      branch: "b",
      baseBranch: "i",
    });
    expect(ended).toContain("| Outcome | exit 21: timed out / stalled |");
    expect(ended).toContain("### Why\n\nno progress for 60 s");
  });
});
