/**
 * Writes JSON Schemas of Forge's file formats into schemas/, from the zod schemas that are the single
 * source of each format (`npm run schemas`). Editors use them to check and complete
 * `.github/forge.yml`, task frontmatter and the other files; a test fails when they are stale.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { z } from "zod";
import { journalSchema } from "../src/core/journal.js";
import { agentResultSchema } from "../src/core/schemas/agent-result.js";
import { changeRequestFrontmatterSchema } from "../src/core/schemas/change-request.js";
import { forgeConfigSchema } from "../src/core/schemas/config.js";
import { dagSchema } from "../src/core/schemas/dag.js";
import { forgeEventSchema } from "../src/core/schemas/events.js";
import { overlayFrontmatterSchema } from "../src/core/schemas/overlay.js";
import { taskFrontmatterSchema } from "../src/core/schemas/task.js";
import { walkthroughFrontmatterSchema } from "../src/core/schemas/walkthrough.js";

export const SCHEMA_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "schemas");

/** File name (without `.schema.json`), title, and zod schema of every generated schema. */
export const SCHEMAS: readonly { name: string; title: string; schema: z.ZodType }[] = [
  { name: "forge-config", title: "Forge configuration (.github/forge.yml)", schema: forgeConfigSchema },
  { name: "task", title: "Forge task frontmatter (.forge/plans/<planId>/tasks/<taskId>.md)", schema: taskFrontmatterSchema },
  { name: "dag", title: "Forge plan DAG (.forge/plans/<planId>/dag.json)", schema: dagSchema },
  { name: "overlay", title: "Forge overlay frontmatter (.forge/plans/<planId>/overlays/overlay-NNN.md)", schema: overlayFrontmatterSchema },
  { name: "walkthrough", title: "Forge walkthrough frontmatter (walkthrough.md)", schema: walkthroughFrontmatterSchema },
  { name: "change-request", title: "Forge Change Request frontmatter", schema: changeRequestFrontmatterSchema },
  { name: "agent-result", title: "Forge agent result (result.json)", schema: agentResultSchema },
  { name: "event", title: "Forge run event (events.ndjson line)", schema: forgeEventSchema },
  { name: "journal", title: "Forge run journal", schema: journalSchema },
];

const AGENT_TYPES = ["1", "2", "3", "refinery"];

/**
 * The agent type is read with a preprocess that turns YAML's `type: 2` into "2"; the input JSON
 * Schema of a preprocess only sees the output enum, so the numbers YAML users write are added back.
 */
function override(ctx: { zodSchema: unknown; jsonSchema: Record<string, unknown> }): void {
  const def = (
    ctx.zodSchema as { _zod?: { def?: { type?: string; in?: { _zod: { def: { type: string } } }; out?: { options?: unknown[] } } } }
  )._zod?.def;
  if (def?.type !== "pipe" || def.in?._zod.def.type !== "transform") return;
  const values = def.out?.options;
  if (!Array.isArray(values) || values.join() !== AGENT_TYPES.join()) return;
  const { description } = ctx.jsonSchema;
  for (const key of Object.keys(ctx.jsonSchema)) delete ctx.jsonSchema[key];
  Object.assign(ctx.jsonSchema, {
    ...(description !== undefined && { description }),
    anyOf: [
      { type: "string", enum: AGENT_TYPES },
      { type: "integer", enum: [1, 2, 3] },
    ],
  });
}

/** The text of every schema file, keyed by file name. */
export function buildSchemas(): Map<string, string> {
  const files = new Map<string, string>();
  for (const { name, title, schema } of SCHEMAS) {
    const json = z.toJSONSchema(schema, { io: "input", override }) as Record<string, unknown>;
    const { $schema, ...rest } = json;
    files.set(`${name}.schema.json`, `${JSON.stringify({ $schema, title, ...rest }, null, 2)}\n`);
  }
  return files;
}

export async function writeSchemas(dir = SCHEMA_DIR): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const written: string[] = [];
  for (const [file, text] of buildSchemas()) {
    await writeFile(path.join(dir, file), text);
    written.push(path.join(dir, file));
  }
  return written;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  for (const file of await writeSchemas()) console.log(`wrote ${path.relative(process.cwd(), file)}`);
}
