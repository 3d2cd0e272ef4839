// How a command starts one of Forge's programs (`forge sim`, `forge demo`) as a process of its own:
// the compiled JavaScript when Forge is built (dist/, or the installed package), the TypeScript
// through tsx when Forge runs from its sources (tests).
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(import.meta.url);
const fromSources = here.endsWith(".ts");
/** src/ (or dist/): this file is src/cli/programs.ts or dist/cli/programs.js. */
const sourceRoot = path.dirname(path.dirname(here));

/** A program, by its module under src/: the local GitHub (`forge sim`) or the demo (`forge demo`). */
export type Program = "local-github/main" | "cli/sim-main" | "demo/main";

/** The file of a program. */
export function programFile(name: Program): string {
  return path.join(sourceRoot, `${name}${fromSources ? ".ts" : ".js"}`);
}

/** Node's arguments that run `program` (tsx is a development dependency, needed from sources only). */
export function nodeArgsFor(program: string): string[] {
  return fromSources ? ["--import", "tsx", program] : [program];
}
