/**
 * The house keeps itself (eslint.config.js, `HOUSE`): sizes, import cycles and the product's
 * distance from its tests are lint rules, so `npm run lint`, hence CI, fails on them. Each case lints
 * a text placed at a path of the tree with ESLint's own API.
 */
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

const eslint = new ESLint({ cwd: process.cwd() });

async function messages(filePath: string, code: string, rule: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return result!.messages.filter((m) => m.ruleId === rule).map((m) => m.message);
}

const lines = (n: number, make: (i: number) => string) => Array.from({ length: n }, (_, i) => make(i)).join("\n");

describe("sizes, counted as fnlen.mjs counts them", () => {
  // fnlen counts `text.split("\n").length`: a file of 499 lines and its final newline is its 500.
  it("allows a file of 499 lines and refuses one of 500, blank and comment lines included", async () => {
    const file = (n: number) =>
      `${lines(n - 2, (i) => (i % 3 === 0 ? "" : i % 3 === 1 ? "// note" : `export const v${i} = ${i};`))}\nexport {};\n\n`;
    expect(file(499).split("\n").length).toBe(500);
    expect(await messages("src/core/probe.ts", file(499), "max-lines")).toEqual([]);
    expect(await messages("src/core/probe.ts", file(500), "max-lines")).toEqual(["File has too many lines (500). Maximum allowed is 499."]);
  });

  it("allows a function of 150 lines and refuses one of 151, in tests and IIFEs too", async () => {
    // A function from its first line to its last: the header, n - 2 body lines (blank ones too), the brace.
    const fn = (n: number, head: string, tail: string) => `${head}\n${lines(n - 2, (i) => (i % 2 ? "" : `  void ${i};`))}\n${tail}\n`;
    for (const [file, head, tail] of [
      ["src/core/probe.ts", "export function f(): void {", "}"],
      ["test/core/probe.test.ts", 'describe("x", () => {', "});"],
      ["scripts/probe.ts", "(() => {", "})();"],
    ] as const) {
      expect(await messages(file, `${fn(150, head, tail)}export {};\n`, "max-lines-per-function"), file).toEqual([]);
      const found = await messages(file, `${fn(151, head, tail)}export {};\n`, "max-lines-per-function");
      expect(found.join("\n"), file).toMatch(/has too many lines \(151\)\. Maximum allowed is 150/);
    }
  });
});

describe("imports", () => {
  it("refuses a runtime import cycle, and not a type-only one", async () => {
    // merge-request.ts is imported by iterations.ts: importing iterations back would close a cycle.
    const cycle = await messages(
      "src/core/decide/merge-request.ts",
      `import { revise } from "./iterations.js";\nexport const r = revise;\n`,
      "import-x/no-cycle",
    );
    expect(cycle.join("\n")).toMatch(/Dependency cycle/);
    const typeOnly = await messages(
      "src/core/decide/merge-request.ts",
      `import type { revise } from "./iterations.js";\nexport type R = typeof revise;\n`,
      "import-x/no-cycle",
    );
    expect(typeOnly).toEqual([]);
  });

  it("keeps the tests out of the product: src/ and action/src/ never import test/", async () => {
    for (const [file, path] of [
      ["src/core/probe.ts", "../../test/helpers/temp-dirs.js"],
      ["src/local-github/probe.ts", "../../test/helpers/temp-dirs.js"],
      ["action/src/probe.ts", "../../test/helpers/temp-dirs.js"],
    ]) {
      const found = await messages(
        file!,
        `import { tempDir } from "${path}";\nexport const t = tempDir;\n`,
        "import-x/no-restricted-paths",
      );
      expect(found.join("\n"), file).toMatch(/The product never imports the tests/);
    }
    expect(
      await messages(
        "test/core/probe.ts",
        `import { decide } from "../../src/core/decide.js";\nexport const d = decide;\n`,
        "import-x/no-restricted-paths",
      ),
    ).toEqual([]);
  });

  it("gives telemetry its arrows: the core and OpenTelemetry only; and the core no telemetry", async () => {
    const fromTelemetry = await messages(
      "src/telemetry/probe.ts",
      `import { Engine } from "../app/engine.js";\nexport const e = Engine;\n`,
      "no-restricted-imports",
    );
    expect(fromTelemetry.join("\n")).toMatch(/Telemetry serves the App and the runner alike/);
    const octokit = await messages(
      "src/telemetry/probe.ts",
      `import { Octokit } from "@octokit/rest";\nexport const o = Octokit;\n`,
      "no-restricted-imports",
    );
    expect(octokit.join("\n")).toMatch(/Only src\/github/);
    expect(
      await messages(
        "src/telemetry/probe.ts",
        `import { runTraceId } from "../core/trace.js";\nexport const t = runTraceId;\n`,
        "no-restricted-imports",
      ),
    ).toEqual([]);
    const intoCore = await messages(
      "src/core/probe.ts",
      `import { Telemetry } from "../telemetry/otlp.js";\nexport const s = Telemetry;\n`,
      "no-restricted-imports",
    );
    expect(intoCore.join("\n")).toMatch(/The core imports nothing/);
  });
});
