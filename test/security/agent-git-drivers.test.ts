/**
 * Attack: the agent writes its own git configuration and attributes, and the runner's git runs the
 * programs they name — as the runner's user, whose `/proc/<pid>/environ` holds the job token and the
 * model key — and commits their output. A filter driver's `clean` runs on `git add --all`, its
 * `smudge` on a checkout; a textconv driver and `diff.external` on a diff; a merge driver on a
 * merge; `include.path`, `includeIf` and `config.worktree` (with `extensions.worktreeConfig`) bring
 * them in from files the agent chose; `.git/info/attributes` and an in-tree `.gitattributes` name
 * them for every path.
 *
 * Now the runner makes the repository's control files its own again before each of its git
 * commands (action/src/git-guard.ts): the configuration it took before any agent ran (only keys that
 * name no program), no `config.worktree`, no `info/attributes`, its own alternates. Each planted
 * driver would leave a marker file; none may exist, and what is committed is the agent's bytes.
 */
import { existsSync, lstatSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it, onTestFinished } from "vitest";
import { Git } from "../../action/src/git.js";
import { concludeMerge, mergeRef } from "../../src/agent/branches.js";
import { runStages } from "../../src/agent/stages/index.js";
import { cleanupTempDirs, FAKE_AGENT, fakeWorld } from "../agent/helpers.js";
import { agentWalkthrough, makeWorld, sh, type World } from "../action/world.js";
import { runScriptJob } from "../action/job.js";

let world: World | undefined;
afterEach(() => {
  world?.cleanup();
  world = undefined;
  cleanupTempDirs();
});

/** Shell lines (run in the checkout, as the agent would) that plant every driver; each leaves `<probe>/<name>.ran`. */
function plantDrivers(probe: string): string[] {
  // Every driver is this script: it leaves `<name>.ran`, then runs the rest of its arguments (else cat).
  const mark = (name: string, ...then: string[]) => [`${probe}/mark.sh`, name, ...then].join(" ");
  return [
    `mkdir -p '${probe}' .git/info`,
    `printf '#!/bin/sh\\nn=$1; shift; touch ${probe}/$n.ran; if [ $# -gt 0 ]; then exec "$@"; else exec cat; fi\\n' > '${probe}/mark.sh'`,
    `chmod +x '${probe}/mark.sh'`,
    `git config filter.evil.clean '${mark("clean", "sed", "s/hello/FILTERED/")}'`,
    `git config filter.evil.smudge '${mark("smudge")}'`,
    `git config filter.evil.required true`,
    `git config diff.evil.textconv '${mark("textconv", "cat")}'`,
    `git config diff.external '${mark("external", "true")}'`,
    `git config merge.evil.driver '${mark("merge", "true")} %A %O %B'`,
    `git config core.pager '${mark("pager")}'`,
    `git config core.editor '${mark("editor", "true")}'`,
    // Included files and the worktree's own config: more drivers by other routes.
    `printf '[filter "inc"]\\n\\tclean = ${mark("include")}\\n' > '${probe}/included.config'`,
    `printf '[filter "cond"]\\n\\tclean = ${mark("include-if")}\\n' > '${probe}/included-if.config'`,
    `git config include.path '${probe}/included.config'`,
    `git config 'includeIf.gitdir:/.path' '${probe}/included-if.config'`,
    `git config extensions.worktreeConfig true`,
    `git config --worktree filter.wt.clean '${mark("worktree-config")}'`,
    `printf '* diff=evil merge=evil\\n*.txt filter=evil\\n*.md filter=wt\\n*.inc filter=inc\\n*.cond filter=cond\\n' > .git/info/attributes`,
    `printf '* filter=evil diff=evil merge=evil\\n' > .gitattributes`,
    "printf 'hello include\\n' > x.inc && printf 'hello cond\\n' > x.cond && printf 'hello notes\\n' > notes.md",
  ];
}

function ran(probe: string): string[] {
  return existsSync(probe) ? readdirSync(probe).filter((f) => f.endsWith(".ran")) : [];
}

describe("the runner's git runs no driver the agent configured", () => {
  it("a task job: add, commit, diff and push with the agent's filter, textconv, merge, include and worktree-config drivers planted — none runs, the agent's bytes are committed", async () => {
    const w = (world = makeWorld());
    const probe = path.join(w.dir, "probe");
    const script = [
      ...plantDrivers(probe),
      "mkdir -p src && printf 'hello\\n' > src/out.txt",
      // A repository of its own inside the work tree, with its own fsmonitor and filter.
      `mkdir nested && cd nested && git init -q && git config core.fsmonitor '${probe}/mark.sh nested-fsmonitor'`,
      `git config filter.n.clean '${probe}/mark.sh nested-clean' && echo '* filter=n' > .git/info/attributes && echo hi > f`,
      "git -c core.fsmonitor=false -c filter.n.clean=cat add f && git -c core.fsmonitor=false -c filter.n.clean=cat -c user.name=a -c user.email=b commit -qm n && cd ..",
      `cat > "$FORGE_WALKTHROUGH_PATH" <<'WT'\n${agentWalkthrough()}WT`,
    ].join("\n");
    const report = await runScriptJob(w, "driver-agent", script);
    expect(ran(probe)).toEqual([]);
    // The in-tree .gitattributes is a protected path: refused (the attempt fails), never committed.
    expect(report.exitCode).toBe(1);
    expect(report.result.error).toMatch(/\.gitattributes/);
    // The agent's bytes, not a filter's output.
    expect(w.show(report.headSha, "src/out.txt")).toBe("hello\n");
    expect(w.show(report.headSha, "notes.md")).toBe("hello notes\n");
    expect(w.show(report.headSha, ".gitattributes")).toBeUndefined();
    // The runner's git takes the agent's configuration from no file: its own is back.
    const config = sh(w.workspace, ["config", "--file", ".git/config", "--list"]);
    expect(config).not.toMatch(/filter\.|diff\.|merge\.|include|worktreeconfig|core\.(pager|editor)/i);
    expect(existsSync(path.join(w.workspace, ".git/config.worktree"))).toBe(false);
    expect(existsSync(path.join(w.workspace, ".git/info/attributes"))).toBe(false);
  });

  it("the runner's own diff, checkout and merge — the refinery's merge and its conclusion included — run no driver, whatever the agent planted", async () => {
    const w = (world = makeWorld());
    const probe = path.join(w.dir, "probe");
    const { git } = w;
    const start = await git.head();
    // The runner used the repository before the agent ran (the job's checkout does).
    await git.run(["status", "--porcelain"]);
    // Two branches that both change one file: their merge needs the merge driver.
    writeFileSync(path.join(w.workspace, "shared.txt"), "hello base\n");
    await git.run(["add", "shared.txt"]);
    await git.commit("base\n");
    const base = await git.head();
    await git.run(["checkout", "--quiet", "-b", "side"]);
    writeFileSync(path.join(w.workspace, "shared.txt"), "hello side\n");
    await git.run(["add", "shared.txt"]);
    await git.commit("side\n");
    await git.run(["checkout", "--quiet", "-B", w.branch, base]);
    writeFileSync(path.join(w.workspace, "shared.txt"), "hello main\n");
    await git.run(["add", "shared.txt"]);
    await git.commit("main\n");

    // The agent plants everything.
    const { execFileSync } = await import("node:child_process");
    execFileSync("sh", ["-c", plantDrivers(probe).join("\n")], { cwd: w.workspace });
    writeFileSync(path.join(w.workspace, "src.txt"), "hello again\n");

    await git.run(["add", "--all"]);
    await git.run(["diff", "--cached", start]);
    await git.run(["diff", "HEAD"]);
    await git.run(["log", "-p", "-1"]);
    await git.run(["checkout", "--quiet", "--force", "side"]);
    await git.run(["checkout", "--quiet", "--force", w.branch]);
    expect(ran(probe)).toEqual([]);
    // The refinery's merge stage (src/agent/stages/refinery.ts) through the runner's git.
    const merged = await mergeRef(w.workspace, "side", "Merge side", git.forStages());
    if (!merged.merged) {
      writeFileSync(path.join(w.workspace, "shared.txt"), "hello resolved\n");
      expect((await concludeMerge(w.workspace, git.forStages())).merged).toBe(true);
    }
    expect(ran(probe)).toEqual([]);
  });

  it("a type 3's sub-branches (the agent layer in the runner's process): the plan stage's agent plants a filter and a merge driver; committing and merging its subtasks runs neither", async () => {
    const w = fakeWorld({}, { git: true });
    const probe = path.join(w.dir, "probe");
    const branch = "forge/r1/t1/1";
    const { execFileSync } = await import("node:child_process");
    execFileSync("git", ["-C", w.repo, "checkout", "-q", "-b", branch]);
    execFileSync("git", ["-C", w.repo, "commit", "-q", "--allow-empty", "-m", "base"]);
    const git = new Git({ dir: w.repo, remote: "file:///nowhere.git", identity: { name: "Forge", email: "forge@example.invalid" } });
    onTestFinished(() => git.close());
    await git.run(["status", "--porcelain"]);
    execFileSync("sh", [
      "-c",
      `mkdir -p '${probe}' && printf '#!/bin/sh\\ntouch ${probe}/$1.ran\\nexec cat\\n' > '${probe}/mark.sh' && chmod +x '${probe}/mark.sh'`,
    ]);
    const config = readFileSync(path.join(w.repo, ".git/config"), "utf8");
    w.setPlan({
      "3:plan": {
        subtasks: [{ id: "api", type: "1" }],
        write: {
          [path.join(w.repo, ".git/config")]:
            `${config}[filter "evil"]\n\tclean = ${probe}/mark.sh clean\n[merge "evil"]\n\tdriver = ${probe}/mark.sh merge\n`,
          [path.join(w.repo, ".git/info/attributes")]: "* filter=evil merge=evil\n",
        },
      },
      "1:work-api": { write: { [path.join(w.repo, "api.ts")]: "export const hello = 1;\n" } },
      "3:walkthrough": { walkthrough: true },
    });
    const out = await runStages({
      agentType: "3",
      subBranches: true,
      git: git.forStages(),
      taskContext: { runId: "r1", taskId: "t1", attempt: 1, task: "---\nid: t1\ntitle: T\n---\n## Description\nDo T.", branch },
      workdir: w.repo,
      sessionDir: path.join(w.dir, "session"),
      spawn: {
        adapter: "command",
        command: process.execPath,
        args: [FAKE_AGENT],
        env: { PATH: process.env.PATH },
        extraEnv: { FAKE_PLAN: w.planFile, FAKE_STATE: w.state },
        forgeCli: false,
      },
    });
    expect(out.exitCode, JSON.stringify(out.manifest)).toBe(0);
    expect(ran(probe)).toEqual([]);
    expect(execFileSync("git", ["-C", w.repo, "show", `${branch}-api:api.ts`], { encoding: "utf8" })).toBe("export const hello = 1;\n");
  });

  it("links the agent put where git reads or writes (.git/config, COMMIT_EDITMSG) are replaced, never followed; a .git replaced by a link stops the runner", async () => {
    const w = (world = makeWorld());
    const { git } = w;
    await git.run(["status", "--porcelain"]);
    const victim = path.join(w.dir, "runner-file.txt");
    writeFileSync(victim, "the runner's own file\n");
    const { execFileSync } = await import("node:child_process");
    const linked = [
      `cp .git/config '${w.dir}/runner.gitconfig' && rm .git/config && ln -s '${w.dir}/runner.gitconfig' .git/config`,
      `rm -f .git/COMMIT_EDITMSG && ln -s '${victim}' .git/COMMIT_EDITMSG && ln -s '${victim}' .git/MERGE_MSG`,
    ];
    execFileSync("sh", ["-c", linked.join(" && ")], { cwd: w.workspace });
    writeFileSync(path.join(w.workspace, "more.txt"), "more\n");
    await git.run(["add", "--all"]);
    await git.commit("more\n");
    expect(readFileSync(victim, "utf8")).toBe("the runner's own file\n");
    expect(lstatSync(path.join(w.workspace, ".git/config")).isSymbolicLink()).toBe(false);
    // The whole .git swapped for a link to a repository elsewhere: the runner refuses to go on.
    execFileSync("sh", ["-c", "cp -a .git ../elsewhere.git && rm -rf .git && ln -s ../elsewhere.git .git"], { cwd: w.workspace });
    await expect(git.run(["status", "--porcelain"])).rejects.toThrow(/no longer a directory/);
  });
});
