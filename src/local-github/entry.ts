// How a command starts one of the local GitHub's programs (`forge sim`, `forge demo`) as a
// process of its own: the compiled JavaScript beside this file when Forge is built (dist/, or the
// installed package), the TypeScript through tsx when Forge runs from its sources (tests).
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(import.meta.url);
const fromSources = here.endsWith(".ts");

/** The file of a program of the local GitHub: "main" (`forge sim`) or "demo/main" (`forge demo`). */
export function localGithubProgram(name: "main" | "demo/main"): string {
  return path.join(path.dirname(here), `${name}${fromSources ? ".ts" : ".js"}`);
}

/** Node's arguments that run `program` (tsx is a development dependency, needed from sources only). */
export function nodeArgsFor(program: string): string[] {
  return fromSources ? ["--import", "tsx", program] : [program];
}
