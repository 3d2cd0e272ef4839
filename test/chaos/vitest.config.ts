import { defineConfig } from "vitest/config";

/** `npm run test:chaos`: the chaos scenarios, apart from `npm test` (they take minutes). */
export default defineConfig({
  test: {
    include: ["test/chaos/chaos.test.ts"],
    testTimeout: 420_000,
    hookTimeout: 60_000,
    pool: "forks",
    env: { FORGE_CHAOS: "1" },
  },
});
