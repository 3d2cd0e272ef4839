// Qwen Code's search runs its own ripgrep: the npm package ships the vendored `rg` without the exec
// bit, the adapter's session set-up gives it one (src/agent/adapters/qwen.ts, qwenRipgrep), and the
// real CLI's `grep_search` answers in ripgrep's `path:line:text` — its fallback search would answer
// `File: path` / `L1: text` instead. (test/agent/qwen.test.ts checks the mode on a package laid out
// in a temporary folder.)
import { statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { qwenRipgrep } from "../../../src/agent/adapters/qwen.js";
import { spawnAgent } from "../../../src/agent/spawn/index.js";
import type { Req, Turn } from "./apis.js";
import { baseSpawn, runnerEnv, skipReason, tempDir, transcriptOf, useWorld } from "./harness.js";
import { ROWS } from "./rows.js";

const world = useWorld();
const row = ROWS.find((r) => r.adapter === "qwen")!;

describe("Qwen Code with the real CLI: its search", () => {
  it.skipIf(skipReason(row, "type1") !== undefined)(
    "searches with its vendored ripgrep, made executable by the session's set-up",
    async () => {
      writeFileSync(path.join(world.repo, "a.txt"), "needle one\nhay\n");
      let found = "";
      const server = (world.server = await row.api.serve([
        { toolCalls: [{ name: "grep_search", args: { pattern: "needle one", path: world.repo } }] },
        (req: Req): Turn => {
          found = req.toolOutput;
          return { text: "Found.\nFORGE_EXIT=0" };
        },
      ]));
      const r = await spawnAgent({
        ...baseSpawn(row, world, runnerEnv(row, server.url)),
        agentType: "1",
        prompt: "Find the needle",
        sessionDir: path.join(tempDir(), "s"),
        forgeCli: false,
      });
      expect(r.exitCode, transcriptOf(r).slice(-3000)).toBe(0);
      expect(found).toContain(`${path.join(world.repo, "a.txt")}:1:needle one`);
      const rg = qwenRipgrep(row.binary(), process.env)!;
      expect(statSync(rg).mode & 0o111).toBe(0o111);
    },
    120_000,
  );
});
