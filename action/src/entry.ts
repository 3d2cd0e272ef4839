// The Action's entry point (action.yml `runs.main` → dist/index.js): everything else is in runner.ts.
import { run } from "./runner.js";

await run();
