// A resumed attempt's session with every agent CLI that can resume (rows.ts), offline against the
// scripted server of its API (docs/executor.md#resuming): the first session's conversation is carried
// out of its home, masked (src/agent/agent-sessions.ts); the second session, in another home as on
// another machine, is started with the first one's id and the carried file put back: the model sees
// the first conversation in the second one's request — so the flag reached the CLI and the CLI
// resumed — and the token of the first prompt is not in it.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { AGENT_SESSION_DIR } from "../../../src/agent/agent-sessions.js";
import { Masker } from "../../../src/agent/secrets.js";
import { spawnAgent } from "../../../src/agent/spawn/index.js";
import type { Req, Turn } from "./apis.js";
import {
  baseSpawn,
  PLUM_PROMPT,
  runnerEnv,
  skipReason,
  skipTitle,
  tempDir,
  timed,
  TOKEN,
  transcriptOf,
  useWorld,
  type Row,
} from "./harness.js";
import { ROWS } from "./rows.js";

const world = useWorld();

/** The conversation the session left in its folder's agent-session/: one file, masked, JSON lines — nothing else of the CLI's home. */
function carriedOf(row: Row, sessionDir: string, id: string): string {
  const files = readdirSync(path.join(sessionDir, AGENT_SESSION_DIR));
  expect(files).toHaveLength(1);
  if (row.resume.carried) expect(files[0]).toBe(row.resume.carried(id));
  else expect(files[0]).toMatch(new RegExp(`^${row.adapter}-.*${id}\\.jsonl$`));
  const file = path.join(sessionDir, AGENT_SESSION_DIR, files[0]!);
  const text = readFileSync(file, "utf8");
  expect(text).toContain("Remember the word PLUM.");
  expect(text).not.toContain(TOKEN);
  for (const line of text.trim().split("\n")) expect(() => JSON.parse(line) as unknown).not.toThrow();
  return file;
}

describe.each(ROWS)("$adapter with the real CLI: a resumed attempt", (row) => {
  it.skipIf(skipReason(row, "resume") !== undefined)(
    skipTitle(row, "resume", "continues the first session's conversation in another home, its carried file masked"),
    async () => {
      const seen: string[] = [];
      const reply = (req: Req): Turn => {
        seen.push(req.conversation);
        return { text: req.conversation.includes("Go on") ? "Resumed.\nFORGE_EXIT=0" : "Noted: PLUM.\nFORGE_EXIT=0" };
      };
      const server = (world.server = await row.api.serve([reply, reply]));
      const t0 = performance.now();
      const firstDir = path.join(tempDir("forge-real-session-"), "first");
      // Two jobs, two machines: each session's runner has a home of its own.
      const first = await spawnAgent({
        ...baseSpawn(row, world, runnerEnv(row, server.url)),
        prompt: PLUM_PROMPT,
        sessionDir: firstDir,
        masker: new Masker(),
        timeoutMs: 90_000,
        forgeCli: false,
      });
      expect(first.exitCode, transcriptOf(first).slice(-3000)).toBe(0);
      expect(first.sessionId).toBeTruthy();
      if (row.resume.idPattern) expect(first.sessionId).toMatch(row.resume.idPattern);
      const carried = carriedOf(row, firstDir, first.sessionId!);
      const second = await spawnAgent({
        ...baseSpawn(row, world, runnerEnv(row, server.url)),
        prompt: "Go on with the verify stage.",
        sessionDir: path.join(tempDir("forge-real-session-"), "second"),
        resumeSession: first.sessionId!,
        resumeFile: { path: carried, root: firstDir },
        timeoutMs: 90_000,
        forgeCli: false,
      });
      timed(row, "resume", performance.now() - t0);
      expect(second.exitCode, transcriptOf(second).slice(-3000)).toBe(0);
      expect(second.result).toContain("Resumed.");
      if (row.resume.sameId) expect(second.sessionId).toBe(first.sessionId);
      // The second session's request carries the first one's conversation, then the new prompt…
      const last = seen.at(-1)!;
      expect(last).toContain("Remember the word PLUM.");
      if (row.resume.assistantSeen) expect(last).toContain("Noted: PLUM.");
      expect(last).toContain("Go on with the verify stage.");
      expect(last.indexOf("Remember the word PLUM.")).toBeLessThan(last.indexOf("Go on with the verify stage."));
      // …masked on its way: the token in the first prompt never left the first job.
      expect(last).not.toContain(TOKEN);
      expect(last).toContain("(The job's token is ***.)");
      // A fresh session (no resume) starts from nothing.
      expect(seen[0]).not.toContain("Go on with the verify stage.");
    },
    180_000,
  );
});
