// The task sentinel's switch: on by default for every task, off for a plan (the config pinned with
// it) or for one task, never for a refinery; a bad value is refused with its rule.
import { describe, expect, it } from "vitest";
import { parseConfigText } from "../../src/core/config.js";
import { forgeConfigSchema } from "../../src/core/schemas/config.js";
import { sentinelSetting } from "../../src/core/sentinel.js";

const config = (sentinel?: unknown) => forgeConfigSchema.parse(sentinel === undefined ? {} : { sentinel });

describe("sentinelSetting", () => {
  it("is on by default for tasks of every type but the refinery, with two fix cycles", () => {
    for (const type of ["1", "2", "3"] as const) expect(sentinelSetting(config(), { type })).toEqual({ enabled: true, maxCycles: 2 });
    expect(sentinelSetting(config(), { type: "refinery" }).enabled).toBe(false);
    expect(sentinelSetting(config(), { type: "refinery", sentinel: true }).enabled).toBe(false);
  });

  it("is off for a plan whose config turns it off, unless a task turns it back on; a task may turn it off alone", () => {
    const off = config({ enabled: false, max_cycles: 1 });
    expect(sentinelSetting(off, { type: "2" })).toEqual({ enabled: false, maxCycles: 1 });
    expect(sentinelSetting(off, { type: "2", sentinel: true })).toEqual({ enabled: true, maxCycles: 1 });
    expect(sentinelSetting(config(), { type: "1", sentinel: false }).enabled).toBe(false);
  });

  it("refuses a bad value in .github/forge.yml with its rule and field", () => {
    for (const [yaml, field] of [
      ["sentinel:\n  enabled: sometimes\n", "sentinel.enabled"],
      ["sentinel:\n  max_cycles: 9\n", "sentinel.max_cycles"],
      ["sentinel:\n  cycles: 2\n", "sentinel.cycles"],
    ] as const) {
      const read = parseConfigText(yaml);
      expect(read.ok, yaml).toBe(false);
      if (read.ok) continue;
      expect(read.problems.map((p) => [p.rule, p.field])).toEqual([["invalid-frontmatter", field]]);
    }
  });
});
