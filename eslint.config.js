// ESLint flat config: typescript-eslint's recommended type-aware rules over src, test, bench and scripts.
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import globals from "globals";

const GRAY_MATTER = { name: "gray-matter", message: "Read front matter with readFrontMatter() of src/core/front-matter.ts (YAML only, never evaluated)." };

/** Source that must reach GitHub through a port, never through Octokit itself. */
const OCTOKIT_FREE = ["src/app/**/*.ts", "src/core/**/*.ts", "src/agent/**/*.ts", "src/cli/**/*.ts", "action/src/**/*.ts"];
const OCTOKIT_MESSAGE = "Only src/github (and action/src/github.ts) may use Octokit: call GitHub through a GitHubPort, or add the call to src/github/app-client.ts.";
const OCTOKIT_PATHS = [{ name: "probot", importNames: ["ProbotOctokit"], message: OCTOKIT_MESSAGE }];
const OCTOKIT_PATTERNS = [
  { group: ["@octokit/*", "octokit"], message: OCTOKIT_MESSAGE },
  { group: ["**/github/octokit-port.js", "**/github/octokit-port"], importNames: ["Octokit"], message: OCTOKIT_MESSAGE },
];

export default tseslint.config(
  { ignores: ["dist/**", "action/dist/**", "node_modules/**", "coverage/**", "schemas/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
      "no-console": "off",
    },
  },
  {
    // One front-matter reader: gray-matter would eval a `---js` block, so only the core's
    // YAML-only reader may call it.
    files: ["src/**/*.ts", "action/src/**/*.ts"],
    ignores: ["src/core/front-matter.ts"],
    rules: {
      "no-restricted-imports": ["error", { paths: [GRAY_MATTER] }],
    },
  },
  {
    // (A file matched here takes this rule's options instead of the ones above: gray-matter is repeated.)
    // Only the GitHub adapters talk to Octokit: src/github for the App, action/src/github.ts for the
    // Action. Everything else goes through a GitHubPort, so it runs the same against any GitHub.
    files: OCTOKIT_FREE,
    ignores: ["action/src/github.ts", "src/core/front-matter.ts"],
    rules: {
      "no-restricted-imports": ["error", { paths: [GRAY_MATTER, ...OCTOKIT_PATHS], patterns: OCTOKIT_PATTERNS }],
    },
  },
  {
    // The core's front-matter reader is the one gray-matter caller; Octokit stays out of it all the same.
    files: ["src/core/front-matter.ts"],
    rules: {
      "no-restricted-imports": ["error", { paths: OCTOKIT_PATHS, patterns: OCTOKIT_PATTERNS }],
    },
  },
);
