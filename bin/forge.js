#!/usr/bin/env node
// Entry point of the `forge` command. The TypeScript sources are compiled to dist/ by `npm run build`
// (run automatically by `npm ci` through the `prepare` script).
import { main } from "../dist/cli/main.js";

process.exitCode = await main(process.argv.slice(2));
