// `npx forge sim` / `npx tsx src/local-github/main.ts` starts the local GitHub and prints its URLs.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

describe("forge sim", () => {
  it("starts the server, seeds a repository and prints URLs that answer", async () => {
    const main = fileURLToPath(new URL("../../src/local-github/main.ts", import.meta.url));
    const child = spawn(process.execPath, ["--import", "tsx", main, "--executor", "noop", "--repo", "acme/demo"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      let out = "";
      const api = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no URLs printed: ${out}`)), 20_000);
        child.stdout.on("data", (d: Buffer) => {
          out += d.toString();
          const m = /repo:\s+acme\/demo/.test(out) ? /api:\s+(\S+)/.exec(out) : null;
          if (m) {
            clearTimeout(timer);
            resolve(m[1]!);
          }
        });
      });
      const res = await fetch(`${api}/repos/acme/demo`);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { full_name: string }).full_name).toBe("acme/demo");
      expect(out).toMatch(/git:\s+http:\/\/127\.0\.0\.1:\d+\/<owner>\/<repo>\.git/);
    } finally {
      child.kill("SIGTERM");
    }
    const code = await new Promise<number | null>((r) => child.on("close", (c) => r(c)));
    expect(code).toBe(0);
  });
});
