// The Copilot CLI script of `forge demo --agent copilot` (src/demo/copilot-script.ts): the Claude Code
// script's tool calls in Copilot CLI's tools, and the shell command that stands in for a Write where
// the CLI's `create` cannot (a file that is there, a folder that is not) writing the text exactly.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { copilotTurn, writeCommand } from "../../src/demo/copilot-script.js";

const dirs: string[] = [];
const scratch = () => {
  const d = mkdtempSync(path.join(tmpdir(), "forge-copilot-script-"));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("the demo's Copilot CLI script", () => {
  it.each([
    ["a text ending in a newline", "line 1\nline 2\n"],
    ["a text with no last newline", "no newline at the end"],
    ["a text with the delimiter, quotes and $ in it", 'FORGE_EOF\nit\'s $HOME and `x` "q"\nFORGE_EOF_1\n'],
    ["the empty text", ""],
  ])("writes %s exactly, making the folder", (_name, content) => {
    const file = path.join(scratch(), "new dir", "it's.txt");
    execFileSync("bash", ["-c", writeCommand(file, content)]);
    expect(readFileSync(file, "utf8")).toBe(content);
  });

  it("turns Read, Write, Edit and Bash into view, create or bash, edit and bash", () => {
    const d = scratch();
    mkdirSync(path.join(d, "src"));
    writeFileSync(path.join(d, "src", "old.js"), "old\n");
    const turn = copilotTurn({
      text: "Working.",
      toolCalls: [
        { name: "Read", input: { file_path: path.join(d, "src", "old.js") } },
        { name: "Write", input: { file_path: path.join(d, "src", "new.js"), content: "new\n" } },
        { name: "Write", input: { file_path: path.join(d, "src", "old.js"), content: "replaced\n" } },
        { name: "Write", input: { file_path: path.join(d, "docs", "a.md"), content: "# A\n" } },
        { name: "Edit", input: { file_path: path.join(d, "src", "old.js"), old_string: "old", new_string: "older" } },
        { name: "Bash", input: { command: "ls", description: "List" } },
      ],
    });
    expect(turn.text).toBe("Working.");
    expect(turn.toolCalls!.map((c) => c.name)).toEqual(["view", "create", "bash", "bash", "edit", "bash"]);
    expect(turn.toolCalls![0]!.input).toEqual({ path: path.join(d, "src", "old.js") });
    expect(turn.toolCalls![1]!.input).toEqual({ path: path.join(d, "src", "new.js"), file_text: "new\n" });
    expect(turn.toolCalls![4]!.input).toEqual({ path: path.join(d, "src", "old.js"), old_str: "old", new_str: "older" });
    expect(turn.toolCalls![5]!.input).toEqual({ command: "ls", description: "List" });
    // The bash Writes do what the Writes would have.
    for (const c of turn.toolCalls!.slice(2, 4)) execFileSync("bash", ["-c", String(c.input.command)]);
    expect(readFileSync(path.join(d, "src", "old.js"), "utf8")).toBe("replaced\n");
    expect(readFileSync(path.join(d, "docs", "a.md"), "utf8")).toBe("# A\n");
  });

  it("has no Copilot tool for a tool the Claude Code script never calls", () => {
    expect(() => copilotTurn({ toolCalls: [{ name: "WebFetch", input: {} }] })).toThrow(/no tool for WebFetch/);
  });
});
