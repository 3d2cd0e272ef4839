/**
 * Commands are read from what a comment says, not from what it shows: `/forge …` inside a code block
 * or a quote (a pasted log, an agent's walkthrough quoted back, a reply quoting a command) is not a
 * command, so nobody is made to run one by quoting it.
 */
import { describe, expect, it } from "vitest";
import { parseCommand } from "../../src/app/commands.js";

describe("/forge in code and quotes is not obeyed", () => {
  const shown: [string, string][] = [
    ["a fenced block", "Look at this:\n\n```\n/forge cancel\n```\n"],
    ["a fenced block with a language", "```sh\n/forge retry a\n```"],
    ["a tilde fence", "~~~\n/forge cancel\n~~~"],
    ["a longer fence closed only by its own length", "````\n```\n/forge cancel\n````"],
    ["an indented code block", "The agent printed:\n\n    /forge cancel\n"],
    ["a tab-indented code block", "\t/forge cancel"],
    ["a quote", "> /forge cancel\n\nWhy did someone write that?"],
    ["a nested quote", "> > /forge approve"],
    ["an unclosed fence (the rest of the comment is code)", "```\n/forge cancel"],
  ];
  for (const [where, body] of shown) {
    it(`ignores a command shown in ${where}`, () => {
      expect(parseCommand(body)).toBeUndefined();
    });
  }

  it("still obeys a command outside them, after a fence closes", () => {
    expect(parseCommand("```\n/forge cancel\n```\n/forge retry a please")).toEqual({
      name: "retry",
      args: ["a", "please"],
      rest: "a please",
    });
    expect(parseCommand("  /forge status")).toMatchObject({ name: "status" });
  });

  it("reads no more than GitHub keeps of a comment (65,536 characters)", () => {
    expect(parseCommand(`${"x".repeat(70_000)}\n/forge cancel`)).toBeUndefined();
    expect(parseCommand(`${"x\n".repeat(1_000)}/forge pause`)).toMatchObject({ name: "pause" });
  });
});
