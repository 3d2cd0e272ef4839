import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    // Hooks start servers and build repositories; on two shared cores under load that can pass 10 s.
    hookTimeout: 60_000,
    pool: "forks",
  },
});
