/**
 * The page GitHub shows a person who has just installed the App names commands that work. Forge's
 * package is `@forge-dev/forge`, which the release publishes (package.json is not private); the
 * registry's `forge` is an unrelated project, so a bare `npx forge …` before the package is installed
 * fetches whatever the registry serves under that name. The page says to install Forge's package
 * first — by its own name, or from the tarball `npm pack` makes — and then run the installed
 * `forge`, and every `forge` subcommand it names exists.
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
  it(
    "names commands that work: Forge's package installed first, by its name or from the tarball, then the installed forge's subcommands",
    { timeout: 60_000 },
    async () => {
      const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { name: string; private?: boolean };
      // Published by the release under its scoped name: the name the page installs.
      expect(pkg.name).toBe("@forge-dev/forge");
      expect(pkg.private).toBeUndefined();

      h = await startHarness(() => ({ kind: "success" }));
      const res = await fetch(`${h.app.url}/setup/installed`);
      expect(res.status).toBe(200);
      const html = await res.text();
      const commands = codes(html);

      // No command fetches and runs a package by a name: npx runs only the installed forge.
      expect(html).not.toContain(`npx ${pkg.name}`);
      for (const c of commands) expect(c, c).not.toMatch(/^npx (?!forge )|^npm (?:exec|x) /);
      // The package is installed by its own name, or from the tarball `npm pack` makes (README, "Setup and test").
      expect(commands).toContain(`npm i -D ${pkg.name}`);
      for (const c of commands.filter((x) => x.startsWith("npm i")))
        expect(c, c).toMatch(/^npm i -D (?:@forge-dev\/forge|\/path\/to\/forge-dev-forge-<version>\.tgz)$/);
      expect(commands).toContain("npm pack");
      // Every `npx forge <sub>` is a subcommand of the installed forge.
      const named = commands.filter((c) => c.startsWith("npx forge ")).map((c) => c.split(/\s+/)[2]!);
      expect(named).toEqual(["init", "doctor"]);
      const known = subcommands();
      for (const sub of named) expect(known, sub).toContain(sub);
      // The tarball is installed before anything runs it.
      expect(html.indexOf("npm i -D")).toBeLessThan(html.indexOf("npx forge init"));
    },
  );
});
