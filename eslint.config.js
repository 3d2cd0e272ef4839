// ESLint flat config: typescript-eslint's recommended type-aware rules over src, test, bench and scripts.
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import globals from "globals";

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
      "no-restricted-imports": [
        "error",
        { paths: [{ name: "gray-matter", message: "Read front matter with readFrontMatter() of src/core/front-matter.ts (YAML only, never evaluated)." }] },
      ],
    },
  },
);
