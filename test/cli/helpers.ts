import { main } from "../../src/cli/main.js";

/** Runs `forge <argv>` in-process with `cwd`, capturing what it prints. */
export async function runForge(argv: string[], cwd: string): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await main(argv, { out: (t) => void (out += t), err: (t) => void (err += t), cwd });
  return { code, out, err };
}
