/**
 * The page GitHub shows a person who has just installed the App names commands that work. The
 * package `@forge-dev/forge` is not on the npm registry (package.json says `private`), and the
 * registry's `forge` is an unrelated project: `npx @forge-dev/forge …` fails, and a bare name fetches
 * whatever the registry serves under it. The page says to install Forge's packed tarball first and
 * then run the installed `forge`, and every `forge` subcommand it names exists.
 */
import { readFileSync } from "node:fs";
import { Command } from "commander";
import { afterEach, describe, expect, it } from "vitest";
import { COMMANDS } from "../../src/cli/commands/index.js";
import { startHarness, type Harness } from "../app/helpers.js";

let h: Harness | undefined;
afterEach(async () => {
  const done = h;
  h = undefined;
  await done?.close();
}, 60_000);

/** The text of each `<code>` element of an HTML page, entities decoded. */
const codes = (html: string) =>
  [...html.matchAll(/<code>(.*?)<\/code>/g)].map((m) => m[1]!.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&"));

/** The `forge` command line's subcommands, as the CLI registers them. */
function subcommands(): string[] {
  const program = new Command();
  for (const register of COMMANDS) register(program, {} as never);
  return program.commands.map((c) => c.name());
}

describe("the App's installed page", () => {
  it("names commands that work: the tarball installed first, then the installed forge's subcommands", { timeout: 60_000 }, async () => {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { name: string; private?: boolean };
    expect(pkg.private).toBe(true);

    h = await startHarness(() => ({ kind: "success" }));
    const res = await fetch(`${h.app.url}/setup/installed`);
    expect(res.status).toBe(200);
    const html = await res.text();
    const commands = codes(html);

    // No command fetches a package by a name the registry does not serve as Forge.
    expect(html).not.toContain(`npx ${pkg.name}`);
    for (const c of commands) expect(c, c).not.toMatch(/^npx (?!forge )|^npm (?:exec|x) /);
    // The package comes from the tarball `npm pack` makes (README, "Setup and test").
    expect(commands).toContain("npm pack");
    expect(commands).toContain("npm i -D /path/to/forge-dev-forge-<version>.tgz");
    // Every `npx forge <sub>` is a subcommand of the installed forge.
    const named = commands.filter((c) => c.startsWith("npx forge ")).map((c) => c.split(/\s+/)[2]!);
    expect(named).toEqual(["init", "doctor"]);
    const known = subcommands();
    for (const sub of named) expect(known, sub).toContain(sub);
    // The tarball is installed before anything runs it.
    expect(html.indexOf("npm i -D")).toBeLessThan(html.indexOf("npx forge init"));
  });
});
