import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AGENT_WORKFLOW_PATH } from "../../src/cli/commands/init.js";
import { parseConfigText } from "../../src/core/config.js";
import { forgeConfigSchema } from "../../src/core/schemas/config.js";
import { runForge } from "./helpers.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const PLAN_FILES = ["plan.md", "dag.json", "tasks/greeting.md", "tasks/link-greeting.md"].map((f) => `.forge/plans/hello/${f}`);
const ALL_FILES = [AGENT_WORKFLOW_PATH, ".github/forge.yml", ...PLAN_FILES];

/** Every file under `dir` except .git, with its content and modification time. */
function snapshot(dir: string): Record<string, { text: string; mtimeMs: number }> {
  const out: Record<string, { text: string; mtimeMs: number }> = {};
  const walk = (rel: string) => {
    for (const e of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (p === ".git") continue;
      if (e.isDirectory()) walk(p);
      else out[p] = { text: readFileSync(path.join(dir, p), "utf8"), mtimeMs: statSync(path.join(dir, p)).mtimeMs };
    }
  };
  walk("");
  return out;
}

describe("forge init", () => {
  let repo: string;
  beforeEach(() => {
    repo = mkdtempSync(path.join(tmpdir(), "forge-init-"));
    execFileSync("git", ["init", "-q", repo]);
  });
  afterEach(() => rmSync(repo, { recursive: true, force: true }));

  it("writes the pinned agent workflow, a commented forge.yml and the hello plan, then prints the next three steps", async () => {
    const r = await runForge(["init"], repo);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(Object.keys(snapshot(repo)).sort()).toEqual([...ALL_FILES].sort());
    for (const f of ALL_FILES) expect(r.out).toContain(`  ${f}\n`);
    expect(r.out.split("\n").filter((l) => /^\s*\d+\. /.test(l))).toHaveLength(3);
    expect(r.out).toContain("ANTHROPIC_API_KEY");
    expect(r.out).toContain("Protect the state branches");
    expect(r.out).toContain("forge doctor");
    expect(r.out).toContain("/forge run hello");

    expect(readFileSync(path.join(repo, AGENT_WORKFLOW_PATH), "utf8")).toBe(
      readFileSync(path.join(ROOT, "templates/workflows/forge-agent.yml"), "utf8"),
    );
  });

  it("writes a forge.yml that parses to the defaults, and to the defaults again with its fields uncommented", async () => {
    await runForge(["init"], repo);
    const text = readFileSync(path.join(repo, ".github/forge.yml"), "utf8");
    const defaults = forgeConfigSchema.parse({});
    expect(parseConfigText(text)).toEqual({ ok: true, config: defaults });
    expect(text.split("\n").every((l) => l === "" || l.startsWith("#"))).toBe(true);

    // Uncommenting every field line that has a value gives the defaults too, so each value shown is right.
    const keys = new Set<string>();
    const collect = (o: Record<string, unknown>) => {
      for (const [k, v] of Object.entries(o)) {
        keys.add(k);
        if (v && typeof v === "object" && !Array.isArray(v)) collect(v as Record<string, unknown>);
      }
    };
    collect(defaults);
    const uncommented = text
      .split("\n")
      .map((l) => {
        const m = /^# ( *)([a-z_]+):(.*)$/.exec(l);
        return m && keys.has(m[2]!) && !m[3]!.includes("not set by default") ? l.slice(2) : l;
      })
      .join("\n");
    expect(uncommented).toContain("\nmax_parallel_agents: 5\n");
    expect(uncommented).toContain("\ntimeouts:\n");
    expect(uncommented).toContain("\n  agent_minutes: 60\n");
    expect(parseConfigText(uncommented)).toEqual({ ok: true, config: defaults });
    for (const field of ["base_branch", "test_command", "followups", "keywords", "isolation", "workflow"])
      expect(text).toContain(`${field}:`);
  });

  it("writes a plan that forge validate accepts", async () => {
    await runForge(["init"], repo);
    const r = await runForge(["validate", ".forge/plans/hello"], repo);
    expect(r).toEqual({ code: 0, out: 'OK plan "hello": 2 tasks, 0 refineries, 1 dependency, 0 overlays, 0 specs\n', err: "" });
  });

  it("refuses to overwrite any existing file without --force: exit 2, one line naming it, nothing written", async () => {
    await runForge(["init"], repo);
    const before = snapshot(repo);
    const again = await runForge(["init"], repo);
    expect(again.code).toBe(2);
    expect(again.out).toBe("");
    // The prefix is `forge:` or `forge init:`, whichever main.ts prints for a CliError.
    expect(again.err).toMatch(
      /^forge( init)?: \.github\/workflows\/forge-agent\.yml already exists; nothing written \(use --force to overwrite\)\n$/,
    );
    expect(snapshot(repo)).toEqual(before);

    // One existing file, the last one checked, is enough: none of the others is written either.
    const fresh = mkdtempSync(path.join(tmpdir(), "forge-init-"));
    try {
      execFileSync("git", ["init", "-q", fresh]);
      mkdirSync(path.join(fresh, ".forge/plans/hello/tasks"), { recursive: true });
      writeFileSync(path.join(fresh, ".forge/plans/hello/tasks/link-greeting.md"), "mine\n");
      const r = await runForge(["init", "--dir", fresh], ROOT);
      expect(r.code).toBe(2);
      expect(r.err).toMatch(/^forge( init)?: \.forge\/plans\/hello\/tasks\/link-greeting\.md already exists; nothing written .*\n$/);
      expect(Object.keys(snapshot(fresh))).toEqual([".forge/plans/hello/tasks/link-greeting.md"]);
      expect(readFileSync(path.join(fresh, ".forge/plans/hello/tasks/link-greeting.md"), "utf8")).toBe("mine\n");
    } finally {
      rmSync(fresh, { recursive: true, force: true });
    }
  });

  it("rewrites every file with --force", async () => {
    await runForge(["init"], repo);
    const originals = snapshot(repo);
    for (const f of ALL_FILES) writeFileSync(path.join(repo, f), "changed\n");
    const r = await runForge(["init", "--force"], repo);
    expect(r.code).toBe(0);
    const after = snapshot(repo);
    for (const f of ALL_FILES) expect(after[f]!.text, f).toBe(originals[f]!.text);
  });

  it("works on --dir and exits 2 outside a git repository", async () => {
    const r = await runForge(["init", "--dir", repo], ROOT);
    expect(r.code).toBe(0);
    expect(Object.keys(snapshot(repo))).toHaveLength(ALL_FILES.length);

    const plain = mkdtempSync(path.join(tmpdir(), "forge-init-"));
    try {
      const outside = await runForge(["init"], plain);
      expect(outside.code).toBe(2);
      expect(outside.err).toMatch(/^forge( init)?: .* is not a git repository \(no \.git\)/);
      expect(readdirSync(plain)).toEqual([]);
      expect((await runForge(["init", "--dir", "no/such/dir"], plain)).code).toBe(2);
    } finally {
      rmSync(plain, { recursive: true, force: true });
    }
  });
});
