import { defineConfig } from "vitest/config";
import { workflowParserInVite, workflowParserWithoutSourceMaps } from "../helpers/workflow-parser-in-vite.js";

/** `npm run test:chaos`: the chaos scenarios alone (they take minutes; the release lane runs them too). */
export default defineConfig({
  plugins: [workflowParserWithoutSourceMaps],
  test: {
    include: ["test/chaos/chaos.test.ts"],
    testTimeout: 420_000,
    hookTimeout: 60_000,
    pool: "forks",
    // As in vitest.config.ts: GitHub's workflow parser is read by Vite, not by Node.
    ...workflowParserInVite,
    env: { FORGE_CHAOS: "1" },
  },
});
