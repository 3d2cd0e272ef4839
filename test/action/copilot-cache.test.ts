// The runner unpacks Copilot CLI once per job into a folder every isolated session reads: a stand-in
// CLI (a shell script) shows what it is run with; the real one, where FORGE_COPILOT_BIN names it,
// shows the folder holds the unpacked CLI.
import { chmodSync, existsSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { warmCopilotCache } from "../../action/src/copilot-cache.js";
import { copilotBinary } from "../../src/fake-agents/copilot.js";
import { cleanupTempDirs, tempDir } from "../agent/helpers.js";

afterEach(() => cleanupTempDirs());

function fakeCli(body: string): string {
  const file = path.join(tempDir("forge-copilot-fake-"), "copilot");
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

describe("the job's Copilot CLI cache", () => {
  it("runs the CLI once with the folder as XDG_CACHE_HOME, readable by others, and removes it at the end", async () => {
    const cli = fakeCli(
      'mkdir -p "$XDG_CACHE_HOME/copilot/pkg" && echo "$@ $COPILOT_OFFLINE ${GITHUB_TOKEN:-none}" > "$XDG_CACHE_HOME/copilot/pkg/ran"',
    );
    const warnings: string[] = [];
    const cache = await warmCopilotCache({ PATH: process.env.PATH, HOME: tempDir(), GITHUB_TOKEN: "ghs_x" }, (m) => warnings.push(m), cli);
    expect(warnings).toEqual([]);
    expect(statSync(cache!.dir).mode & 0o777).toBe(0o755);
    expect(readFileSync(path.join(cache!.dir, "copilot", "pkg", "ran"), "utf8")).toBe("--version true none\n");
    await cache!.close();
    expect(existsSync(cache!.dir)).toBe(false);
  });

  it("warns and leaves nothing behind when the CLI fails or is missing", async () => {
    const warnings: string[] = [];
    expect(await warmCopilotCache({ PATH: process.env.PATH }, (m) => warnings.push(m), fakeCli("exit 3"))).toBeUndefined();
    expect(await warmCopilotCache({ PATH: "/nonexistent" }, (m) => warnings.push(m), "copilot")).toBeUndefined();
    expect(warnings).toHaveLength(2);
    for (const w of warnings) expect(w).toMatch(/^Copilot CLI could not be unpacked once for the job/);
  });

  const bin = copilotBinary();
  it.runIf(bin)(
    "holds the real CLI unpacked",
    async () => {
      const cache = await warmCopilotCache({ PATH: process.env.PATH, HOME: tempDir() }, (m) => expect.fail(m), bin!);
      const versions = readdirSync(path.join(cache!.dir, "copilot", "pkg", `${process.platform}-${process.arch}`));
      expect(versions).toHaveLength(1);
      expect(
        existsSync(path.join(cache!.dir, "copilot", "pkg", `${process.platform}-${process.arch}`, versions[0]!, ".extraction-complete")),
      ).toBe(true);
      await cache!.close();
    },
    120_000,
  );
});
