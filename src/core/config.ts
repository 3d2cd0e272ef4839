/**
 * Reading a YAML config file from its text: `.github/forge.yml` (docs/formats.md#config), and the
 * same way `.forge/stages.yml`. The callers only get the text — the App through the GitHub port at a
 * commit, the action from its checkout, the agent layer from the repository — and judge it here, so
 * the file means the same everywhere and its problems read the same (`file:line` for YAML that does
 * not parse, the field for what the schema refuses).
 */
import { parse as parseYaml } from "yaml";
import type { z } from "zod";
import { problem, type Problem } from "./plan/problem.js";
import { zodProblems } from "./problems.js";
import { agentRuleOf } from "./agents.js";
import { forgeConfigSchema, type ForgeConfig } from "./schemas/config.js";

export const CONFIG_PATH = ".github/forge.yml";

/** A config file read: its data with every default applied, or what is wrong with it. */
export type YamlConfigRead<T> = { ok: true; config: T } | { ok: false; problems: Problem[] };

export type ConfigRead = YamlConfigRead<ForgeConfig>;

/**
 * `text` (the content of `file`; undefined when there is no such file) checked against `schema`. A
 * missing or empty file is `{}` to the schema. Problems have the plan files' shape: `unreadable-yaml`
 * with the line, `invalid-frontmatter` with the field.
 */
export function parseYamlConfig<S extends z.ZodType>(file: string, text: string | undefined, schema: S): YamlConfigRead<z.output<S>> {
  let raw: unknown = {};
  if (text !== undefined) {
    try {
      raw = parseYaml(text) ?? {};
    } catch (e) {
      const line = (e as { linePos?: { line: number }[] }).linePos?.[0]?.line;
      return {
        ok: false,
        problems: [problem({ file, line }, "unreadable-yaml", `not valid YAML: ${(e as Error).message.split("\n")[0]}`)],
      };
    }
  }
  const parsed = schema.safeParse(raw);
  if (parsed.success) return { ok: true, config: parsed.data };
  return {
    ok: false,
    problems: zodProblems(parsed.error, file).map((p) => problem(p, agentRuleOf(p.message) ?? "invalid-frontmatter", p.message)),
  };
}

/** `.github/forge.yml` from its text (undefined: there is no such file, so every default). */
export function parseConfigText(text: string | undefined): ConfigRead {
  return parseYamlConfig(CONFIG_PATH, text, forgeConfigSchema);
}
