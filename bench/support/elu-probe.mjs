// Loaded into the App's process by `npm run bench:app-cpu` (node --import): on SIGUSR2 it writes the
// process's event-loop utilisation and CPU time so far to the file named by FORGE_BENCH_PROBE.
import { writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";

const file = process.env.FORGE_BENCH_PROBE;
if (file)
  process.on("SIGUSR2", () => {
    writeFileSync(file, JSON.stringify({ elu: performance.eventLoopUtilization(), cpu: process.cpuUsage(), at: performance.now() }));
  });
