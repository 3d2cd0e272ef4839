// The local GitHub alone, as a program: `npx tsx src/local-github/main.ts [options]` (built:
// dist/local-github/main.js). Its options are ./program.ts's; `forge sim` runs Forge's own
// program (src/cli/sim-main.ts), which adds Forge's App and action to them (`forge sim --help`).
import { runLocalGitHub } from "./program.js";

runLocalGitHub(process.argv.slice(2), process.env.FORGE_SIM_CWD ?? process.cwd()).catch((e: unknown) => {
  console.error(`forge sim: ${(e as Error).message}`);
  process.exit(2);
});
