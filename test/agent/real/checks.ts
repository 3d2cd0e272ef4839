// What the type-1 case checks of one CLI beyond what it checks of all (stages.test.ts): what reached
// the model in its API's own fields (the model, the key's header, the tools declared) and what its
// own output reports (cost, tokens, reasoning, its sandbox).
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { expect } from "vitest";
import { copilotTools as copilotToolNames } from "../../../src/agent/adapters/copilot.js";
import { geminiTools as geminiToolNames } from "../../../src/agent/adapters/gemini.js";
import { opencodeTools as opencodeToolNames } from "../../../src/agent/adapters/opencode.js";
import { qwenTools as qwenToolNames } from "../../../src/agent/adapters/qwen.js";
import { allowedToolsFor } from "../../../src/agent/hierarchy.js";
import type { Type1Seen } from "./harness.js";
import { codexSandboxWorks } from "../../../src/fake-agents/responses/index.js";
import { tempDir } from "../helpers.js";

let sandbox: { ok: boolean; output: string } | undefined;
/** Whether Codex's own sandbox starts here (else its sessions run bypassing it, as inside an Actions job; see codexSandbox in src/agent/adapters/codex.ts). */
export function codexSandboxed(): boolean {
  if (!sandbox) {
    sandbox = codexSandboxWorks(tempDir("forge-codex-probe-"));
    if (!sandbox.ok) console.log(`Codex's sandbox cannot start here, sessions run bypassing it: ${sandbox.output}`);
  }
  return sandbox.ok;
}

/** Claude Code: its own cost, liveness from partial messages kept out of the transcript. */
export function claudeType1({ out, events, sessionDir }: Type1Seen): void {
  expect(out.costUsd).toBeGreaterThan(0);
  expect(out.model).toBeTruthy();
  // Partial-message chunks prove liveness while the model streams, and stay out of the transcript.
  expect(events.some((e) => e.summary === "(the model is writing)")).toBe(true);
  const implementDir = path.join(sessionDir, out.manifest.stages[0]!.session_dirs[0]!);
  expect(readFileSync(path.join(implementDir, "transcript.log"), "utf8")).not.toContain('"type":"stream_event"');
}

/** Codex: its sandbox (when it starts) keeps writes to the checkout and the session folder; --model, the key, apply_patch's summaries, reasoning. */
export function codexType1({ out, events, server, sessionDir, file, elsewhere }: Type1Seen): void {
  const sandboxed = codexSandboxed();
  expect(existsSync(path.join(elsewhere, "escaped.txt"))).toBe(!sandboxed);
  const verifyOutput = server.turns().find((t) => t.turn === 1 && JSON.stringify(t.body).includes("Stage: **verify**"));
  expect(JSON.stringify(verifyOutput?.body?.input ?? [])).toContain(sandboxed ? "refused" : "escaped");
  const main = server.turns();
  expect(main.every((t) => t.body?.model === "gpt-5.5" && t.body.stream === true)).toBe(true);
  expect(main[0]!.headers.authorization).toBe("Bearer sk-forge-sim-dummy");
  expect(events.filter((e) => e.kind === "tool_use" && e.tool === "Edit").map((e) => e.summary)).toEqual([
    `Edit add ${file}`,
    `Edit update ${file}`,
    `Edit add ${path.join(sessionDir, "walkthrough.md")}`,
  ]);
  expect(events.some((e) => e.kind === "tool_result" && e.summary.startsWith("exit 0:"))).toBe(true);
  expect(events.some((e) => e.kind === "text" && e.summary === "thinking")).toBe(true);
  expect(out.model).toBe("gpt-5.5");
}

/** Gemini CLI: -m in the path, the key in x-goog-api-key, a type-1 agent's tools and no sub-agents, its settings in the session's home. */
export function geminiType1({ out, server, sessionDir }: Type1Seen): void {
  const main = server.turns();
  expect(main.every((t) => t.path === "/v1beta/models/gemini-2.5-flash:streamGenerateContent")).toBe(true);
  expect(main[0]!.headers["x-goog-api-key"]).toBe("forge-sim-dummy-key");
  expect(server.requests.filter((r) => r.kind === "main" || r.kind === "side").map((r) => r.kind)).not.toContain("side");
  const declared = (main[0]!.body!.tools as Array<{ functionDeclarations?: Array<{ name: string }> }>).flatMap((t) =>
    (t.functionDeclarations ?? []).map((f) => f.name),
  );
  for (const name of geminiToolNames(allowedToolsFor("1"))) if (name !== "read_many_files") expect(declared).toContain(name);
  expect(declared).not.toContain("invoke_agent");
  expect(declared).not.toContain("google_web_search");
  // The CLI's home is the session's: its settings were written there.
  const home = path.join(sessionDir, out.manifest.stages[0]!.session_dirs[0]!, "home", ".gemini");
  expect(JSON.parse(readFileSync(path.join(home, "settings.json"), "utf8"))).toMatchObject({
    security: { auth: { selectedType: "gemini-api-key" } },
    general: { maxAttempts: 1 },
  });
}

/** opencode, Qwen Code: Chat Completions with usage, the key as a bearer token, a type-1 agent's tools and none of `never` (their own sub-agents). */
export function chatType1(never: string[]) {
  return ({ row, events, server }: Type1Seen): void => {
    const main = server.turns();
    expect(main.every((t) => t.path === "/v1/chat/completions" && t.body?.model === row.model)).toBe(true);
    expect(main[0]!.headers.authorization).toBe("Bearer forge-sim-dummy-key");
    expect(main[0]!.body?.stream_options?.include_usage).toBe(true);
    const declared = ((main[0]!.body!.tools ?? []) as Array<{ function?: { name: string } }>).map((t) => t.function?.name ?? "");
    const { tools } = row;
    expect(declared).toEqual(expect.arrayContaining([tools.write("x", "").name, tools.edit("x", "", "").name, tools.shell("").name]));
    for (const name of never) expect(declared).not.toContain(name);
    const names = row.adapter === "opencode" ? opencodeToolNames : qwenToolNames;
    for (const name of declared)
      if (!["skill", "tool_search", "tool_call", "get_goal", "update_goal"].includes(name))
        expect(names(allowedToolsFor("1"))).toContain(name);
    const results = events.filter((e) => e.kind === "result");
    expect(results).toHaveLength(3);
    expect(results.every((r) => r.tokens !== undefined && r.tokens.input > 0)).toBe(true);
  };
}

/** Copilot CLI: the model, the key in x-api-key, exactly a type-1 agent's tools, tokens from its usage file equal to what the model billed. */
export function copilotType1({ events, server }: Type1Seen): void {
  const main = server.turns();
  expect(main.every((t) => t.body?.model === "claude-sonnet-4-5")).toBe(true);
  expect(main[0]!.headers["x-api-key"]).toBe("sk-ant-forge-sim-dummy");
  const declared = ((main[0]!.body!.tools ?? []) as Array<{ name: string }>).map((t) => t.name).sort();
  expect(declared).toEqual(
    copilotToolNames(allowedToolsFor("1"))
      .filter((t) => t !== "web_fetch")
      .sort(),
  );
  expect(declared).not.toContain("task");
  const usage = events.filter((e) => e.tokens);
  expect(usage).toHaveLength(3);
  const billed = main.reduce((n, t) => n + (t.tokens?.output ?? 0), 0);
  expect(usage.reduce((n, e) => n + e.tokens!.output, 0)).toBe(billed);
}
