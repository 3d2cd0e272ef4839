// Entry of dist/forge.js: only calls forgeCli().
import { forgeCli } from "./forge-cli.js";

process.exitCode = await forgeCli(process.argv.slice(2));
