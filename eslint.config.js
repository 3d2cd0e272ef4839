// ESLint flat config: typescript-eslint's recommended rules (syntactic, not type-aware) over src,
// test, bench and scripts, and the architecture's arrows: which part may import which.
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import globals from "globals";
import { createNodeResolver, importX } from "eslint-plugin-import-x";

const GRAY_MATTER = {
  name: "gray-matter",
  message: "Read front matter with readFrontMatter() of src/core/front-matter.ts (YAML only, never evaluated).",
};

const OCTOKIT_MESSAGE =
  "Only src/github (and action/src/github.ts) may use Octokit: call GitHub through a GitHubPort, or add the call to src/github/app-client.ts.";
const OCTOKIT_PATHS = [{ name: "probot", importNames: ["ProbotOctokit"], message: OCTOKIT_MESSAGE }];
const OCTOKIT_PATTERNS = [
  { group: ["@octokit/*", "octokit"], message: OCTOKIT_MESSAGE },
  { group: ["**/github/octokit-port.js", "**/github/octokit-port"], importNames: ["Octokit"], message: OCTOKIT_MESSAGE },
];

/** Imports that would point an arrow the wrong way, per part (see docs/architecture.md). */
const LAYER = (folders, why) => ({ group: folders.flatMap((f) => [`**/${f}/*`, `**/${f}/**`]), message: why });
const ARROWS = {
  // The core is pure: no GitHub, no App, no agent runner, no local GitHub, no CLI.
  "src/core": [
    LAYER(
      ["app", "github", "agent", "local-github", "cli", "telemetry"],
      "The core imports nothing of the App, the GitHub adapter, the agent layer, the local GitHub, the CLI or telemetry: it is pure.",
    ),
    { group: ["probot"], message: "The core is pure: no Probot." },
  ],
  // The App works through the core and the GitHub port; it runs no agent.
  "src/app": [
    LAYER(
      ["agent", "local-github", "cli"],
      "The App reaches the agent runner, the local GitHub and the CLI through nothing: they are other processes.",
    ),
  ],
  "src/github": [LAYER(["app", "agent", "local-github", "cli"], "The GitHub adapter knows only the core's types.")],
  "src/agent": [LAYER(["app", "local-github", "cli"], "The agent runner never reaches into the App, the local GitHub or the CLI.")],
  // Telemetry is shared by the App and the runner: OpenTelemetry and the core's names and trace ids, nothing else.
  "src/telemetry": [
    LAYER(
      ["app", "github", "agent", "local-github", "cli", "demo", "fake-agents"],
      "Telemetry serves the App and the runner alike: it knows only the core (names, trace ids) and OpenTelemetry.",
    ),
  ],
  // The action reaches the App only through the core (formats, names), never its modules.
  "action/src": [
    LAYER(
      ["src/app", "src/local-github"],
      "The action reaches the App only through the core (its formats and names), and never the local GitHub.",
    ),
  ],
};

// The GitHub stand-in and what runs on it (docs/architecture.md#arrows): the local GitHub knows only
// the core's names, so any client may run on it; the fake agents stand in for an agent or its model
// and know only the core's formats; the demo composes the local GitHub, the App and the fake agents.
// No other part imports the demo or a fake agent: only the CLI and tests start them.
const STAND_INS = ["local-github", "fake-agents", "demo"];
ARROWS["src/local-github"] = [
  LAYER(
    ["app", "github", "agent", "cli", "telemetry", "demo", "fake-agents"],
    "The local GitHub is a GitHub stand-in: it imports only the core, nothing of the App, the GitHub adapter, the agent layer, the CLI, the demo or the fake agents.",
  ),
];
ARROWS["src/fake-agents"] = [
  LAYER(
    ["app", "github", "agent", "cli", "telemetry", ...STAND_INS],
    "The fake agents import only the core: nothing of the App, the GitHub adapter, the agent layer, the CLI, the local GitHub or the demo.",
  ),
];
ARROWS["src/demo"] = [
  LAYER(["agent", "cli"], "The demo runs the agent layer and the CLI through nothing: the action and the fake agents are other processes."),
];
for (const part of ["src/core", "src/app", "src/github", "src/agent", "action/src"]) {
  ARROWS[part] = [
    ...ARROWS[part],
    LAYER(["demo", "fake-agents"], "Only the CLI and tests start the demo or a fake agent; no part of Forge imports them."),
  ];
}

/**
 * The App, the GitHub adapter and the local GitHub read the time and set their timers through the
 * clock port (src/core/clock.ts), so that tests can move time instead of waiting for it. A timer
 * that bounds real I/O (a socket's drain, a child process's kill grace) or a time that real-clock
 * clients read (a token's expiry, a JWT) is allowed where it stands, by a disable comment saying
 * why. The demo and the fake agents (src/demo, src/fake-agents) run in real time, as people and
 * agents do, and are not in this rule.
 */
const CLOCK_MESSAGE =
  "Use the Clock (src/core/clock.ts) for the time and timers, so tests can move time; a timer bounding real I/O says why in a disable comment.";
const CLOCK_RULES = {
  "no-restricted-globals": ["error", ...["setTimeout", "setInterval"].map((name) => ({ name, message: CLOCK_MESSAGE }))],
  "no-restricted-properties": [
    "error",
    { object: "Date", property: "now", message: CLOCK_MESSAGE },
    ...["setTimeout", "setInterval"].map((property) => ({ object: "globalThis", property, message: CLOCK_MESSAGE })),
  ],
  "no-restricted-syntax": [
    "error",
    { selector: "ImportDeclaration[source.value=/^(node:)?timers(\\/promises)?$/]", message: CLOCK_MESSAGE },
  ],
};

/** The restricted imports of one part: the arrows, Octokit (but in the adapters) and gray-matter (but in the one reader). */
function restrictions(part, { octokit = true, grayMatter = true } = {}) {
  const paths = [...(grayMatter ? [GRAY_MATTER] : []), ...(octokit ? OCTOKIT_PATHS : [])];
  const patterns = [...(ARROWS[part] ?? []), ...(octokit ? OCTOKIT_PATTERNS : [])];
  return { "no-restricted-imports": ["error", { paths, patterns }] };
}

/**
 * The house keeps itself: rules of their own (not `no-restricted-imports`, whose options the blocks
 * above give per part), so they hold for every file whatever block matches it.
 *
 * - Sizes: a function of at most 150 lines, a file of at most 500 — as /work/shared/tools/fnlen.mjs
 *   counts them: every line, blank or comment, a function from its first line to its last (an IIFE
 *   too), and a file as `text.split("\n").length`, which counts the empty string after the final
 *   newline every file ends with (Prettier) as a line: fnlen's 500 is 499 lines here.
 * - No import cycles: a module's imports never lead back to it (type-only imports are erased and do
 *   not count). Modules resolve as TypeScript's NodeNext does: `./x.js` is `./x.ts`.
 * - The product never imports the tests: nothing under src/ or action/src/ reaches test/.
 */
const HOUSE = [
  {
    files: ["**/*.{ts,mts,js,mjs}"],
    plugins: { "import-x": importX },
    settings: {
      "import-x/extensions": [".ts", ".mts", ".js", ".mjs"],
      "import-x/parsers": { "@typescript-eslint/parser": [".ts", ".mts"] },
      "import-x/resolver-next": [createNodeResolver({ extensionAlias: { ".js": [".ts", ".js"], ".mjs": [".mts", ".mjs"] } })],
    },
    rules: {
      "max-lines": ["error", { max: 499, skipBlankLines: false, skipComments: false }],
      "max-lines-per-function": ["error", { max: 150, skipBlankLines: false, skipComments: false, IIFEs: true }],
      "import-x/no-cycle": ["error", { ignoreExternal: true }],
      "import-x/no-restricted-paths": [
        "error",
        {
          zones: [
            {
              target: ["./src", "./action/src"],
              from: "./test",
              message: "The product never imports the tests: move what both need into src/ (or keep it in test/).",
            },
          ],
        },
      ],
    },
  },
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
  // ESLint gives a file the options of the last block that matches it, so each block below lists
  // everything its files may not import. gray-matter would eval a `---js` block: only the core's
  // YAML-only reader calls it. Only the GitHub adapters talk to Octokit (src/github for the App,
  // action/src/github.ts for the action); everything else goes through a GitHubPort.
  { files: ["src/local-github/**/*.ts"], rules: restrictions("src/local-github", { octokit: false }) },
  // The demo plays a person on the local GitHub with a REST client of their own; the local GitHub signs webhooks.
  { files: ["src/demo/**/*.ts"], rules: restrictions("src/demo", { octokit: false }) },
  { files: ["src/fake-agents/**/*.ts"], rules: restrictions("src/fake-agents") },
  { files: ["src/cli/**/*.ts"], rules: restrictions("src/cli") },
  { files: ["src/app/**/*.ts"], rules: restrictions("src/app") },
  { files: ["src/github/**/*.ts"], rules: restrictions("src/github", { octokit: false }) },
  { files: ["src/agent/**/*.ts"], rules: restrictions("src/agent") },
  { files: ["src/core/**/*.ts"], ignores: ["src/core/front-matter.ts"], rules: restrictions("src/core") },
  { files: ["src/core/front-matter.ts"], rules: restrictions("src/core", { grayMatter: false }) },
  { files: ["src/telemetry/**/*.ts"], rules: restrictions("src/telemetry") },
  { files: ["action/src/**/*.ts"], ignores: ["action/src/github.ts"], rules: restrictions("action/src") },
  { files: ["action/src/github.ts"], rules: restrictions("action/src", { octokit: false }) },
  ...HOUSE,
  {
    files: ["src/app/**/*.ts", "src/github/**/*.ts", "src/local-github/**/*.ts"],
    rules: CLOCK_RULES,
  },
);
