import { defineConfig } from "vitest/config";
import { workflowParserInVite, workflowParserWithoutSourceMaps } from "./test/helpers/workflow-parser-in-vite.js";
import { LANES } from "./test/lanes.js";

/**
 * One Vitest project per lane (test/lanes.ts), run one lane after another, cheapest first
 * (`sequence.groupOrder`; Vitest requires distinct orders for projects with different worker
 * counts). Workers per lane are measured figures on the 2-core machine, not guesses: BENCHMARKS.md,
 * "Test lanes". `npm test` runs unit and in-process; `npm run test:all` every lane.
 */
export default defineConfig({
  plugins: [workflowParserWithoutSourceMaps],
  test: {
    testTimeout: 30_000,
    // Hooks start servers and build repositories; on two shared cores under load that can pass 10 s.
    hookTimeout: 60_000,
    pool: "forks",
    // GitHub's workflow parser is read by Vite, not by Node (test/helpers/workflow-parser-in-vite.ts).
    ...workflowParserInVite,
    projects: [
      {
        extends: true,
        // Worker threads: no process to start per file, and nothing here needs one (a chdir would).
        test: { name: "unit", include: LANES.unit, sequence: { groupOrder: 1 }, pool: "threads", maxWorkers: 2 },
      },
      {
        extends: true,
        test: { name: "in-process", include: LANES["in-process"], sequence: { groupOrder: 2 }, maxWorkers: 2 },
      },
      {
        extends: true,
        test: { name: "processes", include: LANES.processes, sequence: { groupOrder: 3 }, maxWorkers: 2 },
      },
      {
        extends: true,
        test: {
          name: "release",
          include: LANES.release,
          sequence: { groupOrder: 4 },
          maxWorkers: 1,
          // The chaos scenarios (test/chaos/chaos.test.ts) run here as under `npm run test:chaos`.
          testTimeout: 420_000,
          env: { FORGE_CHAOS: "1" },
        },
      },
    ],
  },
});
