#!/usr/bin/env node
// Runs the Forge scripted agent (../scripted-agent.ts) as a command: see ../README.md.
// Built (dist/fake-agents/bin/) it imports the compiled module; in a source checkout it
// loads the TypeScript through tsx.
import { existsSync } from "node:fs";

const compiled = new URL("../scripted-agent.js", import.meta.url);
let entry = compiled;
if (!existsSync(compiled)) {
  const { register } = await import("tsx/esm/api");
  register();
  entry = new URL("../scripted-agent.ts", import.meta.url);
}
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2), process.env);
