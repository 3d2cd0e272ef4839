// Qwen Code's vendored ripgrep: its npm package ships `vendor/ripgrep/<arch>-<platform>/rg` without
// the exec bit, and the session's set-up gives it one (src/agent/adapters/qwen.ts). A package laid
// out as the real one in a temporary folder; the real CLI's search is in test/agent/real/qwen.test.ts.
import { chmodSync, mkdirSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { qwenAdapter, qwenRipgrep } from "../../src/agent/adapters/qwen.js";
import { allowedToolsFor } from "../../src/agent/hierarchy.js";
import { cleanupTempDirs, tempDir } from "../helpers/temp-dirs.js";

afterEach(cleanupTempDirs);

/** `<dir>/node_modules/@qwen-code/qwen-code` with its entry script and a 0644 rg for linux-x64, and `.bin/qwen` linking to the entry. */
function fakeInstall(rgMode = 0o644): { dir: string; bin: string; rg: string } {
  const dir = tempDir("forge-qwen-install-");
  const pkg = path.join(dir, "node_modules", "@qwen-code", "qwen-code");
  const rg = path.join(pkg, "vendor", "ripgrep", "x64-linux", "rg");
  mkdirSync(path.dirname(rg), { recursive: true });
  writeFileSync(path.join(pkg, "cli-entry.js"), "#!/usr/bin/env node\n");
  chmodSync(path.join(pkg, "cli-entry.js"), 0o755);
  writeFileSync(rg, "#!/bin/sh\necho ripgrep 15.0.0\n");
  chmodSync(rg, rgMode);
  const bin = path.join(dir, "node_modules", ".bin", "qwen");
  mkdirSync(path.dirname(bin), { recursive: true });
  symlinkSync("../@qwen-code/qwen-code/cli-entry.js", bin);
  return { dir, bin, rg };
}

const modeOf = (file: string) => statSync(file).mode & 0o777;

describe("Qwen Code's vendored ripgrep", () => {
  it("gets the exec bit of each class that may read it, through the binary's link", () => {
    const { bin, rg } = fakeInstall();
    expect(qwenRipgrep(bin, {}, "linux", "x64")).toBe(rg);
    expect(modeOf(rg)).toBe(0o755);
    // A mode without read for others gets no exec for them either.
    chmodSync(rg, 0o640);
    qwenRipgrep(bin, {}, "linux", "x64");
    expect(modeOf(rg)).toBe(0o750);
  });

  it("is found through PATH when the adapter is given no binary, and left alone when it is not there", () => {
    const { dir, rg } = fakeInstall();
    expect(qwenRipgrep(undefined, { PATH: `/nonexistent:${path.join(dir, "node_modules", ".bin")}` }, "linux", "x64")).toBe(rg);
    expect(modeOf(rg)).toBe(0o755);
    expect(qwenRipgrep(undefined, { PATH: "/nonexistent" }, "linux", "x64")).toBeUndefined();
    expect(qwenRipgrep(path.join(dir, "missing"), {}, "linux", "x64")).toBeUndefined();
    // Another machine's ripgrep is not in the package: nothing to do.
    expect(qwenRipgrep(path.join(dir, "node_modules", ".bin", "qwen"), {}, "freebsd", "x64")).toBeUndefined();
  });

  it("is made executable when a session's invocation is built", () => {
    const { dir, bin, rg } = fakeInstall();
    const session = path.join(dir, "session");
    qwenAdapter.invocation({
      prompt: "p",
      cwd: dir,
      allowedTools: allowedToolsFor("1"),
      parentEnv: {},
      forgeEnv: { FORGE_SESSION_DIR: session },
      passEnv: [],
      extraEnv: {},
      binary: bin,
    });
    // The machine's own platform: the fake package holds linux-x64's only.
    if (process.platform === "linux" && process.arch === "x64") expect(modeOf(rg)).toBe(0o755);
    else expect(modeOf(rg)).toBe(0o644);
  });
});
