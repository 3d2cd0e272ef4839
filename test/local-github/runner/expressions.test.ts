// `${{ }}` as GitHub evaluates them: the runner hands its contexts to GitHub's own evaluator
// (@actions/expressions) and reads workflow values through GitHub's own parser, so what the
// hand-written evaluator it replaced got differently — contains() over an object, objects in text,
// comparisons, fromJSON/toJSON, object filters, hashFiles — is GitHub's here.
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import {
  evaluate,
  evaluateCondition,
  evaluateString,
  evaluateStringMap,
  evaluateTemplate,
  ExpressionError,
  type ExpressionContext,
  type JobStatus,
  type Template,
} from "../../../src/local-github/runner/expressions.js";
import { readWorkflow } from "../../../src/local-github/runner/workflow.js";

const ctx: ExpressionContext = {
  contexts: {
    inputs: { task_id: "t1", attempt: 2, dry: false, name: "Forge" },
    github: {
      run_id: "42",
      repository: "acme/app",
      ref: "refs/heads/main",
      event_name: "push",
      token: "ghs_x",
      event: {
        commits: [
          { id: "c1", message: "Fix" },
          { id: "c2", message: "Add" },
        ],
        labels: ["Bug", "ui"],
      },
    },
    secrets: { ANTHROPIC_API_KEY: "sk-test" },
    env: { MODE: "ci" },
    vars: { MODEL: "sonnet" },
    steps: { build: { outputs: { sha: "abc", list: "a,b" }, outcome: "success", conclusion: "success" } },
    runner: { os: "Linux", temp: "/tmp/r" },
  },
};

/** A `run:` value as GitHub's parser reads it (text around `${{ }}` becomes a format() call). */
async function runValue(text: string): Promise<Template> {
  const wf = await readWorkflow(`on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - run: ${JSON.stringify(text)}\n`);
  return wf.jobs.a!.steps[0]!.run!;
}

/** A step's `if:` as GitHub's parser makes it (success() added unless a status function is called). */
async function stepIf(text?: string): Promise<string> {
  const cond = text === undefined ? "" : `        if: ${JSON.stringify(text)}\n`;
  const wf = await readWorkflow(`on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - run: "true"\n${cond}`);
  return wf.jobs.a!.steps[0]!.if;
}

describe("expressions: contexts, operators, functions", () => {
  it("reads contexts and properties, case-insensitively for keys", () => {
    expect(evaluate("inputs.task_id", ctx)).toBe("t1");
    expect(evaluate("GITHUB.Repository", ctx)).toBe("acme/app");
    expect(evaluate("steps['build'].outputs['sha']", ctx)).toBe("abc");
    expect(evaluate("secrets.ANTHROPIC_API_KEY", ctx)).toBe("sk-test");
    expect(evaluate("vars.MODEL", ctx)).toBe("sonnet");
    expect(evaluate("runner.os", ctx)).toBe("Linux");
    expect(evaluate("steps.nope.outputs.x", ctx)).toBeNull();
  });

  it("compares like GitHub: strings case-insensitively, mixed types as numbers, and orders with < >", () => {
    expect(evaluate("inputs.name == 'forge'", ctx)).toBe(true);
    expect(evaluate("inputs.attempt == '2'", ctx)).toBe(true);
    expect(evaluate("inputs.dry == 0", ctx)).toBe(true);
    expect(evaluate("null == 0", ctx)).toBe(true);
    expect(evaluate("'abc' == 1", ctx)).toBe(false);
    expect(evaluate("true == 'true'", ctx)).toBe(false);
    // The old evaluator refused < > <= >=.
    expect(evaluate("inputs.attempt > 1", ctx)).toBe(true);
    expect(evaluate("'2' > 1", ctx)).toBe(true);
    expect(evaluate("'abc' < 'ABD'", ctx)).toBe(true);
    expect(evaluate("inputs.attempt <= '1'", ctx)).toBe(false);
  });

  it("&& and || return operands; ! negates truthiness", () => {
    expect(evaluate("inputs.task_id && 'yes'", ctx)).toBe("yes");
    expect(evaluate("inputs.missing || 'fallback'", ctx)).toBe("fallback");
    expect(evaluate("!(inputs.task_id == 't1' && inputs.attempt == 2)", ctx)).toBe(false);
  });

  it("'' is a quote in a string, every time (the library's lexer unescapes only the first; GitHub all)", () => {
    expect(evaluate("'It''s ''quoted'''", ctx)).toBe("It's 'quoted'");
  });

  it("contains() ignores case, and over an object is false (the old evaluator searched its JSON)", () => {
    expect(evaluate("contains('Hello', 'hELLO')", ctx)).toBe(true);
    expect(evaluate("contains(github.event.labels, 'bug')", ctx)).toBe(true);
    expect(evaluate("contains(steps.build.outputs.list, 'B')", ctx)).toBe(true);
    expect(evaluate("contains(github.event, 'commits')", ctx)).toBe(false);
  });

  it("fromJSON, toJSON, startsWith, join and object filters (refused by the old evaluator)", () => {
    expect(evaluate("fromJSON('{\"a\":[1,2]}').a[1]", ctx)).toBe(2);
    expect(evaluate("fromJSON('true')", ctx)).toBe(true);
    expect(evaluate("toJSON(fromJSON('{\"a\":1}'))", ctx)).toBe('{\n  "a": 1\n}');
    expect(evaluate("startsWith(github.ref, 'REFS/heads')", ctx)).toBe(true);
    expect(evaluate("join(github.event.commits.*.id, '+')", ctx)).toBe("c1+c2");
    expect(() => evaluate("fromJSON('{nope')", ctx)).toThrow(ExpressionError);
  });

  it("format(): {{ and }} escape braces; a missing argument fails", () => {
    expect(evaluate("format('forge/{0}/{1}/{2}', github.run_id, inputs.task_id, inputs.attempt)", ctx)).toBe("forge/42/t1/2");
    expect(evaluate("format('{{literal}} {0}', 'x')", ctx)).toBe("{literal} x");
    expect(evaluate("format('{0}}}', 'x')", ctx)).toBe("x}");
    expect(() => evaluate("format('{0} {1}', 'x')", ctx)).toThrow(/references more arguments than were supplied/);
  });

  it("names the expression GitHub's parser refuses", () => {
    for (const [expr, reason] of [
      ["inputs.task_id ==", /Unexpected end of expression/],
      ["inputs.a | inputs.b", /Unexpected symbol/],
      ["nope.x", /Unrecognized named-value: 'nope'/],
      ["toJSON(1, 2)", /Too many parameters/],
      ["always()", /Unrecognized function: 'always'/],
    ] as const) {
      expect(() => evaluate(expr, ctx), expr).toThrow(ExpressionError);
      expect(() => evaluate(expr, ctx), expr).toThrow(reason);
    }
  });
});

describe("expressions: workflow values as GitHub's parser reads them", () => {
  it("keeps the type of a lone expression and joins text around expressions as format() does", async () => {
    expect(evaluateTemplate(await runValue("${{ inputs.attempt }}"), ctx)).toBe(2);
    expect(evaluateTemplate(await runValue("${{ inputs.dry }}"), ctx)).toBe(false);
    expect(evaluateString(await runValue("attempt-${{ inputs.attempt }}-${{ inputs.dry }}"), ctx)).toBe("attempt-2-false");
    expect(evaluateString(await runValue("[${{ steps.nope.outputs.x }}]"), ctx)).toBe("[]");
    // Braces and quotes of the text survive the format() the parser makes of it.
    expect(evaluateString(await runValue("echo '{0}' {{x}} ${{ 'y' }} }"), ctx)).toBe("echo '{0}' {{x}} y }");
    expect(evaluateString(await runValue("echo 'a' 'b' ${{ inputs.task_id }}"), ctx)).toBe("echo 'a' 'b' t1");
  });

  it("an object in text is 'Object' and an array 'Array' (the old evaluator printed JSON)", async () => {
    expect(evaluateString(await runValue("event: ${{ github.event }}"), ctx)).toBe("event: Object");
    expect(evaluateString(await runValue("${{ github.event.labels }}"), ctx)).toBe("Array");
    expect(evaluateString(await runValue("${{ toJSON(github.event.labels) }}"), ctx)).toBe('[\n  "Bug",\n  "ui"\n]');
  });

  it("numbers read as GitHub writes them", async () => {
    expect(evaluateString(await runValue("${{ 1.50 }}|${{ 0x10 }}|${{ 1e3 }}"), ctx)).toBe("1.5|16|1000");
  });

  it("with: may be one expression, whose keys are the inputs; env: may not (GitHub's parser refuses it)", async () => {
    const step = (key: string) =>
      `on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - uses: ./x\n        ${key}: \${{ fromJSON('{"A":1,"B":"b"}') }}\n`;
    const wf = await readWorkflow(step("with"));
    expect(evaluateStringMap(wf.jobs.a!.steps[0]!.with, () => ctx)).toEqual({ A: "1", B: "b" });
    await expect(readWorkflow(step("env"))).rejects.toThrow(
      "(Line: 7, Col: 14): Unexpected type 'BasicExpressionToken' encountered while reading 'step env'. The type 'MappingToken' was expected.",
    );
  });

  it("if: gets success() && (…) unless it calls a status function, with or without ${{ }}", async () => {
    const c = async (cond: string | undefined, jobStatus: JobStatus) => evaluateCondition(await stepIf(cond), { ...ctx, jobStatus });
    expect(await stepIf()).toBe("success()");
    expect(await stepIf("inputs.task_id == 't1'")).toBe("success() && (inputs.task_id == 't1')");
    expect(await c(undefined, "failure")).toBe(false);
    expect(await c("inputs.task_id == 't1'", "success")).toBe(true);
    expect(await c("inputs.task_id == 't1'", "failure")).toBe(false);
    expect(await c("${{ inputs.task_id == 't1' }}", "success")).toBe(true);
    expect(await c("always()", "cancelled")).toBe(true);
    expect(await c("${{ failure() }}", "failure")).toBe(true);
    expect(await c("failure()", "success")).toBe(false);
    expect(await c("cancelled()", "cancelled")).toBe(true);
    expect(await c("success() || failure()", "failure")).toBe(true);
    expect(await c("always() && inputs.dry", "success")).toBe(false);
    // A status function inside a string literal is not a call: success() is still added.
    expect(await c("contains('failure()', 'x') || true", "failure")).toBe(false);
  });
});

describe("hashFiles(), as GitHub's runner computes it", () => {
  const ws = mkdtempSync(path.join(tmpdir(), "forge-hashfiles-"));
  afterAll(() => rmSync(ws, { recursive: true, force: true }));
  mkdirSync(path.join(ws, "a", "b"), { recursive: true });
  writeFileSync(path.join(ws, "package-lock.json"), "root lock");
  writeFileSync(path.join(ws, "a", "b", "package-lock.json"), "nested lock");
  writeFileSync(path.join(ws, "a", "readme.md"), "docs");
  const sha = (s: string | Buffer) => createHash("sha256").update(s).digest();
  /** SHA-256 over the SHA-256 digests of the files, in order (the runner's hashFiles script). */
  const expected = (...contents: string[]) => contents.reduce((h, c) => h.update(sha(c)), createHash("sha256")).digest("hex");
  const withWs = { ...ctx, workspace: ws };

  it("hashes the files a pattern matches, depth first in the order the folders list them", () => {
    const listed = readdirSync(ws);
    const folderFirst = listed.indexOf("a") < listed.indexOf("package-lock.json");
    const [first, second] = folderFirst ? ["nested lock", "root lock"] : ["root lock", "nested lock"];
    expect(evaluate("hashFiles('**/package-lock.json')", withWs)).toBe(expected(first, second));
    expect(expected(first, second)).not.toBe(expected(second, first));
    expect(evaluate("hashFiles('a/b/package-lock.json')", withWs)).toBe(expected("nested lock"));
  });

  it("excludes with !, matches the files below a folder, and is '' when nothing matches", () => {
    expect(evaluate("hashFiles('**/package-lock.json', '!a/**')", withWs)).toBe(expected("root lock"));
    expect(evaluate("hashFiles('a/b')", withWs)).toBe(expected("nested lock"));
    expect(evaluate("hashFiles('**/*.lock')", withWs)).toBe("");
  });
});

describe("expressions: properties", () => {
  it("leaves text without ${{ untouched", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string().filter((t) => !t.includes("${{")),
        async (t) => evaluateString(await runValue(t), ctx) === t,
      ),
      { numRuns: 50 },
    );
  });

  it("round-trips any string through a quoted literal and format()", () => {
    fc.assert(
      fc.property(fc.string(), (t) => {
        const literal = `'${t.replace(/'/g, "''")}'`;
        expect(evaluate(literal, ctx)).toBe(t);
        expect(evaluate(`format('<{0}>', ${literal})`, ctx)).toBe(`<${t}>`);
      }),
    );
  });
});
