// GitHub's workflow parser (@actions/workflow-parser) under Vitest: its published code imports its
// JSON schemas without an import attribute, which Node refuses, so Vite reads the package instead
// of Node (`server.deps.inline`; src/local-github/runner/workflow-parser.ts says what the build
// does). Its files point at source maps of sources the package does not ship: they are read without
// them, or Vite warns about each file of it in every test run.
import { readFileSync } from "node:fs";
import type { Plugin } from "vitest/config";

const PACKAGE = "@actions/workflow-parser";

export const workflowParserInVite = {
  server: { deps: { inline: [PACKAGE] } },
};

export const workflowParserWithoutSourceMaps: Plugin = {
  name: "forge:workflow-parser-without-source-maps",
  load(id) {
    if (!id.includes(`/node_modules/${PACKAGE}/`) || !id.endsWith(".js")) return null;
    return readFileSync(id, "utf8").replace(/\n\/\/# sourceMappingURL=\S*\s*$/, "\n");
  },
};
