/**
 * A commented `.github/forge.yml` generated from the config schema (src/core/schemas/config.ts):
 * every field at its default, commented out, under its own description — the same walk over the
 * schema as the README's reference table (test/demo/config-reference.ts), so neither can drift from
 * the code. With every line commented out the file is `{}` to the config loader, i.e. the defaults.
 */
import type { z } from "zod";
import { CONFIG_PATH } from "./config.js";
import { defaultConfig, forgeConfigSchema } from "./schemas/config.js";

interface Def {
  type: string;
  innerType?: z.ZodType;
  entries?: Record<string, string>;
  shape?: Record<string, z.ZodType>;
}

const defOf = (s: z.ZodType) => (s as unknown as { _zod: { def: Def } })._zod.def;

/** Unwraps default / optional / prefault / nullable to the value's own schema. */
function core(s: z.ZodType): z.ZodType {
  let cur = s;
  while (["default", "optional", "prefault", "nullable"].includes(defOf(cur).type)) cur = defOf(cur).innerType!;
  return cur;
}

const describe = (s: z.ZodType) => ((s as { description?: string }).description ?? "").replace(/\s*\n\s*/g, " ");

/** One line of YAML per value: JSON is YAML's flow style, and quotes every string that needs it. */
const yamlValue = (v: unknown): string => (Array.isArray(v) ? `[${v.map((e) => JSON.stringify(e)).join(", ")}]` : JSON.stringify(v));

/** The text of a `.github/forge.yml` documenting every field at its default, all commented out. */
export function commentedConfig(): string {
  const defaults = defaultConfig() as Record<string, unknown>;
  const lines: string[] = [
    `# ${CONFIG_PATH} — ${describe(forgeConfigSchema)}`,
    "# Every field has a default; each is shown below at its default, commented out.",
    "# Uncomment a line (and its section's line, for nested fields) to change it.",
    "# Reference: README.md, section `.github/forge.yml` reference.",
  ];
  const walk = (shape: Record<string, z.ZodType>, indent: string, values: Record<string, unknown> | undefined) => {
    for (const [key, schema] of Object.entries(shape)) {
      const inner = defOf(core(schema));
      let description = describe(schema);
      if (inner.type === "enum") description += ` One of: ${Object.values(inner.entries ?? {}).join(", ")}.`;
      if (indent === "") lines.push("");
      lines.push(`#${indent} # ${description}`.replace(/^# # /, "# "));
      if (inner.type === "object" && inner.shape) {
        const section = values?.[key] as Record<string, unknown> | undefined;
        // A section whose fields are all unset is `{}` by default (a bare `key:` would be null).
        const empty = !section || Object.values(section).every((v) => v === undefined);
        lines.push(`#${indent} ${key}:${empty ? " {}" : ""}`);
        walk(inner.shape, `${indent}  `, values?.[key] as Record<string, unknown> | undefined);
        continue;
      }
      const value = values?.[key];
      const shown = value === undefined ? "  # not set by default" : ` ${yamlValue(value)}`;
      lines.push(`#${indent} ${key}:${shown}`);
    }
  };
  walk(defOf(forgeConfigSchema).shape!, "", defaults);
  return `${lines.join("\n")}\n`;
}
