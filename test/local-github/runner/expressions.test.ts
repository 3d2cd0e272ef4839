import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  evaluate,
  evaluateCondition,
  ExpressionError,
  interpolate,
  interpolateString,
  splitTemplate,
  type ExpressionContext,
} from "../../../src/local-github/runner/expressions/index.js";

const ctx: ExpressionContext = {
  contexts: {
    inputs: { task_id: "t1", attempt: 2, dry: false, name: "Forge" },
    github: { run_id: "42", repository: "acme/app", ref: "refs/heads/main", event_name: "workflow_dispatch", token: "ghs_x" },
    secrets: { ANTHROPIC_API_KEY: "sk-test" },
    env: { MODE: "ci" },
    vars: { MODEL: "sonnet" },
    steps: { build: { outputs: { sha: "abc", list: "a,b" }, outcome: "success", conclusion: "success" } },
    runner: { os: "Linux", temp: "/tmp/r" },
  },
};

describe("expressions: the supported subset", () => {
  it("reads contexts and properties, case-insensitively for keys", () => {
    expect(evaluate("inputs.task_id", ctx)).toBe("t1");
    expect(evaluate("github.run_id", ctx)).toBe("42");
    expect(evaluate("GITHUB.Repository", ctx)).toBe("acme/app");
    expect(evaluate("steps.build.outputs.sha", ctx)).toBe("abc");
    expect(evaluate("steps['build'].outputs['sha']", ctx)).toBe("abc");
    expect(evaluate("secrets.ANTHROPIC_API_KEY", ctx)).toBe("sk-test");
    expect(evaluate("vars.MODEL", ctx)).toBe("sonnet");
    expect(evaluate("runner.os", ctx)).toBe("Linux");
    expect(evaluate("env.MODE", ctx)).toBe("ci");
  });

  it("dereferences missing properties to null", () => {
    expect(evaluate("steps.nope.outputs.x", ctx)).toBeNull();
    expect(evaluate("inputs.missing", ctx)).toBeNull();
    expect(interpolateString("[${{ steps.nope.outputs.x }}]", ctx)).toBe("[]");
  });

  it("compares like GitHub: strings case-insensitively, mixed types as numbers", () => {
    expect(evaluate("inputs.name == 'forge'", ctx)).toBe(true);
    expect(evaluate("inputs.name != 'forge'", ctx)).toBe(false);
    expect(evaluate("inputs.attempt == '2'", ctx)).toBe(true);
    expect(evaluate("inputs.dry == 0", ctx)).toBe(true);
    expect(evaluate("null == 0", ctx)).toBe(true);
    expect(evaluate("'abc' == 1", ctx)).toBe(false);
  });

  it("&& and || return operands; ! negates truthiness", () => {
    expect(evaluate("inputs.task_id && 'yes'", ctx)).toBe("yes");
    expect(evaluate("inputs.missing || 'fallback'", ctx)).toBe("fallback");
    expect(evaluate("inputs.dry || inputs.task_id", ctx)).toBe("t1");
    expect(evaluate("!inputs.dry", ctx)).toBe(true);
    expect(evaluate("!(inputs.task_id == 't1' && inputs.attempt == 2)", ctx)).toBe(false);
    expect(evaluate("''''", ctx)).toBe("'");
  });

  it("format() and contains()", () => {
    expect(evaluate("format('forge/{0}/{1}/{2}', github.run_id, inputs.task_id, inputs.attempt)", ctx)).toBe("forge/42/t1/2");
    expect(evaluate("format('{{literal}} {0}', 'x')", ctx)).toBe("{literal} x");
    expect(evaluate("contains(steps.build.outputs.list, 'B')", ctx)).toBe(true);
    expect(evaluate("contains('hello', 'xyz')", ctx)).toBe(false);
  });

  it("interpolates templates, keeping the type of a lone expression", () => {
    expect(interpolate("${{ inputs.attempt }}", ctx)).toBe(2);
    expect(interpolate("${{ inputs.dry }}", ctx)).toBe(false);
    expect(interpolate("attempt-${{ inputs.attempt }}-${{ inputs.dry }}", ctx)).toBe("attempt-2-false");
    expect(interpolate("a '}}' b ${{ format('{0}}}', 'x') }}", ctx)).toBe("a '}}' b x}");
    expect(splitTemplate("x ${{ '}}' }} y")).toEqual([{ text: "x " }, { expr: " '}}' " }, { text: " y" }]);
  });

  it("if: conditions get an implicit success() unless they use a status function", () => {
    const c = (cond: unknown, jobStatus: "success" | "failure" | "cancelled") => evaluateCondition(cond, { ...ctx, jobStatus });
    expect(c(undefined, "success")).toBe(true);
    expect(c(undefined, "failure")).toBe(false);
    expect(c("inputs.task_id == 't1'", "success")).toBe(true);
    expect(c("inputs.task_id == 't1'", "failure")).toBe(false);
    expect(c("${{ inputs.task_id == 't1' }}", "success")).toBe(true);
    expect(c("always()", "cancelled")).toBe(true);
    expect(c("failure()", "failure")).toBe(true);
    expect(c("failure()", "success")).toBe(false);
    expect(c("cancelled()", "cancelled")).toBe(true);
    expect(c("success() || failure()", "failure")).toBe(true);
    expect(c("always() && inputs.dry", "success")).toBe(false);
  });
});

describe("expressions: anything else fails loudly, naming the expression", () => {
  const cases: Array<[string, RegExp]> = [
    ["matrix.os", /context 'matrix' is not supported/],
    ["needs.build.outputs.x", /context 'needs' is not supported/],
    ["toJSON(github)", /function 'toJSON\(\)' is not supported/],
    ["hashFiles('**/package-lock.json')", /function 'hashFiles\(\)' is not supported/],
    ["fromJSON(inputs.x)", /function 'fromJSON\(\)' is not supported/],
    ["inputs.attempt > 1", /operator '>' is not supported/],
    ["inputs.attempt <= 1", /operator '<=' is not supported/],
    ["github.event.commits.*.message", /object filters/],
    ["inputs.task_id ==", /unexpected end of expression/],
    ["'unterminated", /unterminated string/],
    ["inputs.a | inputs.b", /unexpected character '\|'/],
  ];
  for (const [expr, reason] of cases) {
    it(`refuses ${expr}`, () => {
      let error: unknown;
      try {
        evaluate(expr, ctx);
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(ExpressionError);
      expect((error as ExpressionError).message).toContain(`\${{ ${expr} }}`);
      expect((error as ExpressionError).message).toMatch(reason);
    });
  }

  it("refuses status functions outside if:", () => {
    expect(() => interpolate("${{ always() }}", ctx)).toThrow(/only allowed in 'if:'/);
  });

  it("refuses an if: that mixes text and an expression (always truthy on GitHub)", () => {
    expect(() => evaluateCondition("x ${{ inputs.dry }}", { ...ctx, jobStatus: "success" })).toThrow(ExpressionError);
  });

  it("refuses an unclosed ${{", () => {
    expect(() => interpolate("a ${{ inputs.x", ctx)).toThrow(/missing closing/);
  });
});

describe("expressions: properties", () => {
  it("leaves text without ${{ untouched", () => {
    fc.assert(
      fc.property(
        fc.string().filter((t) => !t.includes("${{")),
        (t) => interpolate(t, ctx) === t,
      ),
    );
  });

  it("round-trips any string through a quoted literal and format()", () => {
    fc.assert(
      fc.property(fc.string(), (t) => {
        const literal = `'${t.replace(/'/g, "''")}'`;
        expect(evaluate(literal, ctx)).toBe(t);
        expect(interpolate(`<\${{ format('{0}', ${literal}) }}>`, ctx)).toBe(`<${t}>`);
        // == ignores case: a string equals its upper-cased self unless upper-casing changed more than case.
        expect(evaluate(`${literal} == ${literal.toUpperCase()}`, ctx)).toBe(t.toLowerCase() === t.toUpperCase().toLowerCase());
      }),
    );
  });
});
