// The real Claude Code CLI, run offline against the scripted model server (src/fake-agents/).
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { offlineClaudeEnv } from "../../src/fake-agents/claude-code.js";

/** Path of the `claude` binary installed by `npm ci` (the package's postinstall puts the native binary there). */
export function claudeBinary(): string {
  const require = createRequire(import.meta.url);
  const pkg = require.resolve("@anthropic-ai/claude-code/package.json");
  const bin = path.join(path.dirname(pkg), "bin", "claude.exe");
  if (!existsSync(bin)) throw new Error(`claude binary not found at ${bin}: run npm ci (its install script must be allowed)`);
  return bin;
}

export interface ClaudeRun {
  exitCode: number | null;
  /** Parsed `--output-format stream-json` lines. */
  events: Array<Record<string, unknown>>;
  /** The final `{"type":"result"}` event, if any. */
  result: Record<string, unknown> | undefined;
  stderr: string;
  durationMs: number;
}

export interface RunClaudeOptions {
  cwd: string;
  prompt: string;
  baseUrl: string;
  allowedTools?: string[];
  maxTurns?: number;
  home?: string;
  env?: Record<string, string>;
  extraArgs?: string[];
  timeoutMs?: number;
}

/** `claude -p <prompt> --output-format stream-json --verbose --allowedTools … --max-turns …` */
export function runClaudeCode(opts: RunClaudeOptions): Promise<ClaudeRun> {
  const ownHome = opts.home === undefined;
  const home = opts.home ?? mkdtempSync(path.join(tmpdir(), "forge-claude-home-"));
  const cleanup = () => {
    if (ownHome) rmSync(home, { recursive: true, force: true });
  };
  const args = [
    "-p",
    opts.prompt,
    "--output-format",
    "stream-json",
    "--verbose",
    "--allowedTools",
    (opts.allowedTools ?? ["Write", "Edit", "Bash"]).join(","),
    "--max-turns",
    String(opts.maxTurns ?? 10),
    ...(opts.extraArgs ?? []),
  ];
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(claudeBinary(), args, {
      cwd: opts.cwd,
      env: offlineClaudeEnv(opts.baseUrl, home, opts.env),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString("utf8")));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
    const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 60_000);
    child.on("error", (err) => {
      clearTimeout(timer);
      cleanup();
      reject(err);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      cleanup();
      const events = stdout
        .split("\n")
        .filter((l) => l.trim().startsWith("{"))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      resolve({
        exitCode: code,
        events,
        result: events.find((e) => e.type === "result"),
        stderr,
        durationMs: performance.now() - t0,
      });
    });
  });
}
