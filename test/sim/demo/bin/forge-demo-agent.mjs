#!/usr/bin/env node
// The agent `forge demo` configures: the scripted agent (../../agents/), plus a file for tasks that
// name none (see ../demo-agent.ts).
import { register } from "tsx/esm/api";

register();
const { main } = await import("../demo-agent.ts");
process.exitCode = await main(process.argv.slice(2), process.env);
