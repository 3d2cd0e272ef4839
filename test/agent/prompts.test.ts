import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { builtinPromptDir, loadSystemPrompt, PromptNotFoundError } from "../../src/agent/prompts.js";
import { AGENT_KINDS } from "../../src/agent/types.js";
import { WALKTHROUGH_BODY_SECTIONS } from "../../src/core/schemas/walkthrough.js";
import { cleanupTempDirs, tempDir } from "../helpers/temp-dirs.js";

afterEach(cleanupTempDirs);

describe("system prompts", () => {
  it("has a built-in prompt for every kind, stating the exit protocol and the protected paths", async () => {
    for (const kind of AGENT_KINDS) {
      const p = await loadSystemPrompt(kind);
      expect(p.source, kind).toBe("builtin");
      for (const code of [0, 1, 3, 10, 11, 12]) expect(p.text, `${kind} exit ${code}`).toContain(`FORGE_EXIT=${code}`);
      expect(p.text, kind).toContain(".github/workflows/");
      expect(p.text, kind).toContain("<untrusted-text>");
      // WHO/HOW only (see docs/runner.md#system-prompts): no run, task or file of a particular job.
      expect(p.text, kind).not.toMatch(/\/tmp\/|\/home\/runner|forge\/r\d/);
    }
  });

  it("asks the task agents for the walkthrough in the format of docs/formats.md#walkthrough", async () => {
    for (const kind of ["1", "2", "3", "refinery", "captain"] as const) {
      const { text } = await loadSystemPrompt(kind);
      for (const section of WALKTHROUGH_BODY_SECTIONS) expect(text, `${kind} ${section}`).toContain(`## ${section}`);
      for (const field of ["status:", "confidence:", "files_changed:", "tests:", "risks:", "followups:"])
        expect(text, `${kind} ${field}`).toContain(field);
      expect(text).toMatch(/Never change anything under `\.forge\/plans\/`|only agent that writes under `\.forge\/plans\/`/);
    }
  });

  it("lets only 2, 3 and the refinery spawn, each naming the types it may", async () => {
    expect((await loadSystemPrompt("1")).text).toMatch(/may not start sub-agents/);
    expect((await loadSystemPrompt("2")).text).toMatch(/sub-agent of type 1 — never any other type/);
    expect((await loadSystemPrompt("3")).text).toMatch(/type 1 or 2 — never/);
    expect((await loadSystemPrompt("refinery")).text).toMatch(/type 1, 2 or 3 — never/);
    expect((await loadSystemPrompt("sentinel-auditor")).text).toMatch(/Grade: FAIL/);
  });

  it("tells the captain the plan formats and to run forge validate", async () => {
    const { text } = await loadSystemPrompt("captain");
    for (const s of [
      "dag.json",
      "overlays/overlay-NNN.md",
      "added_edges",
      "acceptance_criteria",
      "estimated_complexity",
      "forge validate",
      "only **adds**",
    ])
      expect(text).toContain(s);
  });

  it("takes the repository's override from .forge/prompts/<kind>.md", async () => {
    const repo = tempDir();
    mkdirSync(path.join(repo, ".forge", "prompts"), { recursive: true });
    writeFileSync(path.join(repo, ".forge", "prompts", "2.md"), "# Our type 2\nBe brief.\n");
    writeFileSync(path.join(repo, ".forge", "prompts", "1.md"), "   \n");
    expect(await loadSystemPrompt("2", { repoDir: repo })).toEqual({
      kind: "2",
      text: "# Our type 2\nBe brief.\n",
      source: "repository",
      path: path.join(repo, ".forge", "prompts", "2.md"),
    });
    // An empty override does not blank the prompt.
    expect((await loadSystemPrompt("1", { repoDir: repo })).source).toBe("builtin");
    await expect(loadSystemPrompt("2", { repoDir: repo, builtinDir: path.join(repo, "nowhere") })).resolves.toMatchObject({
      source: "repository",
    });
    await expect(loadSystemPrompt("3", { repoDir: repo, builtinDir: path.join(repo, "nowhere") })).rejects.toBeInstanceOf(
      PromptNotFoundError,
    );
    expect(builtinPromptDir({ FORGE_PROMPTS_DIR: path.join(repo, "nowhere") })).toMatch(/src\/agent\/prompts\/?$/);
  });
});
