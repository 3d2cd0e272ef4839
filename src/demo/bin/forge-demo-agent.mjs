#!/usr/bin/env node
// The agent `forge demo` configures: the scripted agent (../../fake-agents/), plus a file for tasks that
// name none (see ../demo-agent.ts).
// Built (dist/demo/bin/) it imports the compiled module; in a source checkout it
// loads the TypeScript through tsx.
import { existsSync } from "node:fs";

const compiled = new URL("../demo-agent.js", import.meta.url);
let entry = compiled;
if (!existsSync(compiled)) {
  const { register } = await import("tsx/esm/api");
  register();
  entry = new URL("../demo-agent.ts", import.meta.url);
}
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2), process.env);
