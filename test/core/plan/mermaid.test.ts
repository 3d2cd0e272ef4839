import { describe, expect, it } from "vitest";
import { renderMermaid } from "../../../src/core/render/mermaid.js";

const nodes = [
  { id: "setup", type: "task" as const, dependencies: [] },
  { id: "end", type: "task" as const, dependencies: ["setup"], title: 'Say "bye" <now>' },
  { id: "v1.2_x", type: "task" as const, dependencies: ["setup"] },
  { id: "integrate", type: "refinery" as const, dependencies: ["end", "v1.2_x"] },
];

describe("renderMermaid", () => {
  it("draws tasks as boxes, refineries as hexagons, edges from dependency to dependent", () => {
    expect(renderMermaid(nodes)).toBe(
      [
        "flowchart TD",
        '  n0["setup"]',
        '  n1["end"]',
        '  n2["v1.2_x"]',
        '  n3{{"integrate"}}',
        "  n0 --> n1",
        "  n0 --> n2",
        "  n1 --> n3",
        "  n2 --> n3",
        "",
      ].join("\n"),
    );
  });

  it("escapes titles", () => {
    expect(renderMermaid(nodes, undefined, { titles: true })).toContain('n1["end<br/>Say #quot;bye#quot; #lt;now#gt;"]');
  });

  it("colours nodes by status with one classDef per status present", () => {
    const out = renderMermaid(nodes, { setup: "MERGED", end: "RUNNING", "v1.2_x": "MERGED", integrate: "PENDING" });
    const lines = out.trimEnd().split("\n");
    expect(lines.filter((l) => l.includes("classDef")).map((l) => l.trim().split(" ")[1])).toEqual(["pending", "running", "merged"]);
    expect(lines).toContain("  class n0,n2 merged");
    expect(lines).toContain("  class n1 running");
    expect(lines).toContain("  class n3 pending");
    expect(out).not.toContain("failed");
  });

  it("accepts journal plan nodes (kind) and a Map of statuses, and skips unknown dependencies", () => {
    const out = renderMermaid(
      [
        { id: "a", kind: "task", dependencies: ["ghost"] },
        { id: "r", kind: "refinery", dependencies: ["a"] },
      ],
      new Map([["r", "FAILED" as const]]),
    );
    expect(out).toContain('n1{{"r"}}');
    expect(out).not.toContain("ghost");
    expect(out).toContain("  class n1 failed");
  });
});
