// The Codex adapter end to end with a fake `codex` executable on PATH, and its argv. The real CLI,
// offline against a scripted Responses-API server, is in test/agent/real/ (its row).
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { codexArgs, codexSandbox, codexWritableDirs } from "../../src/agent/adapters/codex.js";
import { spawnAgent } from "../../src/agent/spawn/index.js";
import type { ProgressEvent } from "../../src/agent/types.js";
import { cleanupTempDirs, FAKE_CODEX, tempDir } from "./helpers.js";

afterEach(cleanupTempDirs);

function codexOnPath(): string {
  const bin = tempDir("forge-fake-codex-");
  const exe = path.join(bin, "codex");
  writeFileSync(exe, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(FAKE_CODEX)} "$@"\n`);
  chmodSync(exe, 0o755);
  return bin;
}

describe("codex adapter", () => {
  it("runs `codex exec --json`, feeds the prompt on stdin, parses its events and passes only the OpenAI key", async () => {
    const bin = codexOnPath();
    const repo = tempDir();
    const events: ProgressEvent[] = [];
    const r = await spawnAgent({
      adapter: "codex",
      agentType: "1",
      prompt: "Write codex.txt",
      systemPrompt: "You are a Forge agent.",
      model: "gpt-5-codex",
      cwd: repo,
      sessionDir: path.join(repo, ".session"),
      env: {
        PATH: `${bin}:${process.env.PATH}`,
        OPENAI_API_KEY: "sk-openai-test-000000000000000000",
        ANTHROPIC_API_KEY: "sk-ant-x-123456",
        GITHUB_TOKEN: "ghs_x",
      },
      forgeCli: false,
      onProgress: (e) => events.push(e),
    });
    expect(r).toMatchObject({
      exitCode: 0,
      adapter: "codex",
      result: "All done.",
      sessionId: "th_forge_1",
      turns: 1,
      model: "gpt-5-codex",
    });
    expect(readFileSync(path.join(repo, "codex.txt"), "utf8")).toBe("prompt had 15 characters\n");
    const seen = JSON.parse(readFileSync(path.join(r.sessionDir, "codex-argv.json"), "utf8")) as {
      args: string[];
      openai: boolean;
      anthropic: boolean;
      github: boolean;
    };
    expect(seen).toMatchObject({ openai: true, anthropic: false, github: false });
    expect(seen.args.slice(0, 9)).toEqual([
      "exec",
      "--json",
      "--skip-git-repo-check",
      "--cd",
      repo,
      "-c",
      "allow_login_shell=false",
      "--sandbox",
      "workspace-write",
    ]);
    expect(seen.args.slice(9, 13)).toEqual(["-c", 'approval_policy="never"', "-c", "sandbox_workspace_write.network_access=true"]);
    // The session directory is inside the checkout here: nothing to add.
    expect(seen.args).not.toContain("--add-dir");
    expect(events.filter((e) => e.kind === "tool_use").map((e) => e.tool)).toEqual(["Bash", "Edit"]);
  });

  it("reads FORGE_EXIT from codex's last message, and recognises its 429 as a rate limit", async () => {
    const bin = codexOnPath();
    const repo = tempDir();
    const base = { adapter: "codex" as const, prompt: "x", cwd: repo, forgeCli: false as const };
    const partial = await spawnAgent({
      ...base,
      sessionDir: path.join(repo, ".s1"),
      env: { PATH: `${bin}:${process.env.PATH}` },
      extraEnv: { FAKE_CODEX_MODE: "partial" },
    });
    expect(partial.exitCode).toBe(12);
    const limited = await spawnAgent({
      ...base,
      sessionDir: path.join(repo, ".s2"),
      env: { PATH: `${bin}:${process.env.PATH}` },
      extraEnv: { FAKE_CODEX_MODE: "rate_limit" },
      deadline: Date.now() + 60_000,
      random: () => 0,
      sleep: () => Promise.reject(new Error("must not wait: the limit outlasts the deadline")),
    });
    expect(limited).toMatchObject({ exitCode: 1, error: { code: "rate_limited" } });
    // "try again in 2 hours" is past the one-minute budget.
    expect(Date.parse(limited.rateLimitedUntil!) - Date.now()).toBeGreaterThan(7_000_000);
  });
});

describe("codex argv", () => {
  const forgeEnv = {
    FORGE_SESSION_DIR: "/runner/_temp/s",
    FORGE_SIGNAL_DIR: "/runner/_temp/s",
    FORGE_WALKTHROUGH_PATH: "/runner/_temp/s/walkthrough.md",
    FORGE_QUESTION_FILE: "/elsewhere/q/question.md",
  };

  it("writes in the checkout and Forge's session directory, never asks for approval, and may reach the network", () => {
    expect(
      codexArgs({ cwd: "/w", allowedTools: ["Read", "Edit"], model: "gpt-5.5", systemPrompt: 'Be "careful"', forgeEnv, parentEnv: {} }),
    ).toEqual([
      "exec",
      "--json",
      "--skip-git-repo-check",
      "--cd",
      "/w",
      "-c",
      "allow_login_shell=false",
      "--sandbox",
      "workspace-write",
      "-c",
      'approval_policy="never"',
      "-c",
      "sandbox_workspace_write.network_access=true",
      "--add-dir",
      "/runner/_temp/s",
      "--add-dir",
      "/elsewhere/q",
      "--model",
      "gpt-5.5",
      "-c",
      'developer_instructions="Be \\"careful\\""',
      "-",
    ]);
  });

  it("sends the model requests to the job's model proxy (OPENAI_BASE_URL) through a provider of its own", () => {
    const proxied = codexArgs({
      cwd: "/w",
      allowedTools: ["Read", "Edit"],
      forgeEnv,
      parentEnv: { GITHUB_ACTIONS: "true", OPENAI_BASE_URL: "https://elsewhere.example/v1" },
      extraEnv: { OPENAI_BASE_URL: "http://127.0.0.1:4545/v1" },
    });
    expect(proxied.slice(7, 11)).toEqual([
      "-c",
      'model_provider="forge"',
      "-c",
      'model_providers.forge={ name = "Forge model proxy", base_url = "http://127.0.0.1:4545/v1", wire_api = "responses", env_key = "OPENAI_API_KEY" }',
    ]);
    // Without a proxy, the runner's own OPENAI_BASE_URL; without either, Codex's own config decides.
    expect(codexArgs({ cwd: "/w", allowedTools: ["Read"], parentEnv: { OPENAI_BASE_URL: "http://gw/v1" } }).join(" ")).toContain(
      'base_url = "http://gw/v1"',
    );
    expect(codexArgs({ cwd: "/w", allowedTools: ["Read"], parentEnv: {} }).join(" ")).not.toContain("model_provider");
  });

  it("adds only directories outside the checkout, each once", () => {
    expect(codexWritableDirs("/w", { FORGE_SESSION_DIR: "/w/.forge/s", FORGE_WALKTHROUGH_PATH: "/w/.forge/s/walkthrough.md" })).toEqual([]);
    expect(
      codexWritableDirs("/w", {
        FORGE_SESSION_DIR: "/t/s",
        FORGE_WALKTHROUGH_PATH: "/t/s/sub/walkthrough.md",
        FORGE_REFINEMENT_FILE: "notes/refinement.md",
      }),
    ).toEqual(["/t/s"]);
    expect(codexWritableDirs("/w", forgeEnv)).toEqual(["/runner/_temp/s", "/elsewhere/q"]);
    // A kind that may spawn a Codex sub-agent lets it write Codex's state.
    expect(codexWritableDirs("/w", { ...forgeEnv, FORGE_AGENT_TYPE: "2" }, { HOME: "/home/runner" })).toEqual([
      "/runner/_temp/s",
      "/home/runner/.codex",
      "/elsewhere/q",
    ]);
    expect(
      codexWritableDirs("/w", { ...forgeEnv, FORGE_AGENT_TYPE: "refinery" }, { HOME: "/home/runner", CODEX_HOME: "/opt/codex" }),
    ).toEqual(["/runner/_temp/s", "/opt/codex", "/elsewhere/q"]);
    expect(codexWritableDirs("/w", { ...forgeEnv, FORGE_AGENT_TYPE: "1" }, { HOME: "/home/runner" })).toEqual([
      "/runner/_temp/s",
      "/elsewhere/q",
    ]);
  });

  it("bypasses Codex's sandbox inside an Actions job unless FORGE_CODEX_SANDBOX names one; read-only without write tools", () => {
    const edit = ["Read", "Edit", "Bash(npm test)"];
    expect(codexSandbox({ allowedTools: edit, parentEnv: {} })).toBe("workspace-write");
    expect(codexSandbox({ allowedTools: ["Read", "Grep"], parentEnv: {} })).toBe("read-only");
    expect(codexSandbox({ allowedTools: edit, parentEnv: { GITHUB_ACTIONS: "true" } })).toBe("bypass");
    expect(codexSandbox({ allowedTools: edit, parentEnv: { GITHUB_ACTIONS: "true", FORGE_CODEX_SANDBOX: "workspace-write" } })).toBe(
      "workspace-write",
    );
    expect(codexSandbox({ allowedTools: edit, parentEnv: { FORGE_CODEX_SANDBOX: "nonsense" } })).toBe("workspace-write");
    // A sub-agent spawned from a Codex agent's command stays inside its parent's sandbox.
    expect(codexSandbox({ allowedTools: edit, parentEnv: { CODEX_THREAD_ID: "01a2", GITHUB_ACTIONS: "true" } })).toBe("danger-full-access");

    const inActions = codexArgs({ cwd: "/w", allowedTools: edit, forgeEnv, parentEnv: { GITHUB_ACTIONS: "true" } });
    expect(inActions).toEqual([
      "exec",
      "--json",
      "--skip-git-repo-check",
      "--cd",
      "/w",
      "-c",
      "allow_login_shell=false",
      "--dangerously-bypass-approvals-and-sandbox",
      "-",
    ]);
    const readOnly = codexArgs({ cwd: "/w", allowedTools: ["Read"], forgeEnv, parentEnv: {} });
    expect(readOnly).toEqual([
      "exec",
      "--json",
      "--skip-git-repo-check",
      "--cd",
      "/w",
      "-c",
      "allow_login_shell=false",
      "--sandbox",
      "read-only",
      "-c",
      'approval_policy="never"',
      "-",
    ]);
    const full = codexArgs({ cwd: "/w", allowedTools: edit, parentEnv: { FORGE_CODEX_SANDBOX: "danger-full-access" } });
    expect(full).toEqual([
      "exec",
      "--json",
      "--skip-git-repo-check",
      "--cd",
      "/w",
      "-c",
      "allow_login_shell=false",
      "--sandbox",
      "danger-full-access",
      "-c",
      'approval_policy="never"',
      "-",
    ]);
  });
});
