#!/usr/bin/env node
// Runs the Forge scripted agent (../scripted-agent.ts) as a command: see ../README.md.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../scripted-agent.ts");
process.exitCode = await main(process.argv.slice(2), process.env);
