// Temporary folders a test makes and removes afterwards (`afterEach(cleanupTempDirs)`).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const cleanups: string[] = [];

export function tempDir(prefix = "forge-agent-test-"): string {
  const d = mkdtempSync(path.join(tmpdir(), prefix));
  cleanups.push(d);
  return d;
}

export function cleanupTempDirs(): void {
  while (cleanups.length) rmSync(cleanups.pop()!, { recursive: true, force: true });
}
