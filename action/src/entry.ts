// The Action's entry point (action.yml `runs.main` → dist/index.js). Input `mode` picks the job:
// `task` (the default) runs one dispatched attempt (runner.ts); `tick` runs one reconciler pass as the
// Forge App (src/app/tick-entry.ts, bundled beside this file as dist/tick.js by action/build.mjs).
// The tick bundle is loaded only in tick mode, so a task job never loads the App — and the action's
// sources never import it (the architecture's arrows): only the bundles sit side by side.
import * as core from "@actions/core";
import { run } from "./runner.js";

const mode = core.getInput("mode") || "task";
if (mode === "tick") {
  const tick = (await import(new URL("./tick.js", import.meta.url).href)) as { runTick(): Promise<void> };
  await tick.runTick();
} else if (mode === "task") {
  await run();
} else {
  core.setFailed(
    `The Forge action's input 'mode' is '${mode}': use 'task' (the default, one dispatched attempt) or 'tick' (the reconciler)`,
  );
}
