// schemas/*.schema.json are generated from the zod schemas by `npm run schemas` and committed.
import { readFile, readdir } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { buildSchemas, SCHEMA_DIR } from "../../scripts/generate-schemas.js";

/** Paths of object properties without a description, anywhere in a JSON Schema. */
function undescribed(node: unknown, at = "#"): string[] {
  if (Array.isArray(node)) return node.flatMap((item, i) => undescribed(item, `${at}/${i}`));
  if (node === null || typeof node !== "object") return [];
  const out: string[] = [];
  const record = node as Record<string, unknown>;
  const props = record.properties;
  if (props && typeof props === "object") {
    for (const [key, value] of Object.entries(props as Record<string, unknown>)) {
      const description = (value as { description?: unknown }).description;
      if (typeof description !== "string" || description.trim() === "") out.push(`${at}/properties/${key}`);
    }
  }
  for (const [key, value] of Object.entries(record)) out.push(...undescribed(value, `${at}/${key}`));
  return out;
}

describe("JSON Schemas", () => {
  const built = buildSchemas();

  it("are up to date (run `npm run schemas` and commit schemas/)", async () => {
    const onDisk = (await readdir(SCHEMA_DIR)).filter((f) => f.endsWith(".schema.json")).sort();
    expect(onDisk).toEqual([...built.keys()].sort());
    for (const [file, text] of built)
      expect(await readFile(path.join(SCHEMA_DIR, file), "utf8"), `schemas/${file} is stale: run npm run schemas`).toBe(text);
  });

  it("cover config, task, dag, overlay, walkthrough, change request, agent result, event and journal", () => {
    expect([...built.keys()].sort()).toEqual(
      ["agent-result", "change-request", "dag", "event", "forge-config", "journal", "overlay", "task", "walkthrough"].map(
        (n) => `${n}.schema.json`,
      ),
    );
  });

  it("describe every object property", () => {
    for (const [file, text] of built) expect(undescribed(JSON.parse(text)), file).toEqual([]);
  });

  it("the check finds a property without a description", () => {
    expect(undescribed({ properties: { a: { description: "x", properties: { b: { type: "string" } } } } })).toEqual([
      "#/properties/a/properties/b",
    ]);
  });

  it("accept YAML's numeric agent types for task `type`", () => {
    const task = JSON.parse(built.get("task.schema.json")!) as { properties: { type: { anyOf: { enum: unknown[] }[] } } };
    expect(task.properties.type.anyOf.map((s) => s.enum)).toEqual([
      ["1", "2", "3", "refinery"],
      [1, 2, 3],
    ]);
  });
});
