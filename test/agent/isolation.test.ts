// The agent's own OS user (src/agent/isolation.ts) over a job's life: created fresh per job, its
// processes killed by uid (not by process group), the folder modes it needed put back, its files in
// the shared temporary folders removed, the user deleted; and a repository command run as it
// (src/agent/repo-command.ts). Needs root or passwordless sudo (CI is root).
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, statSync, writeFileSync, existsSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it, type TestContext } from "vitest";
import {
  agentProcesses,
  asAgentUser,
  handOver,
  killAgentProcesses,
  prepareAgentUser,
  releaseAgentUser,
  takeBack,
  type AgentUser,
} from "../../src/agent/isolation.js";
import { runRepoCommand } from "../../src/agent/repo-command.js";
import { spawnAgent } from "../../src/agent/spawn/index.js";
import { cleanupTempDirs, tempDir } from "./helpers.js";

const PRIVILEGED = process.getuid?.() === 0 || spawnSync("sudo", ["-n", "true"]).status === 0;
const users: AgentUser[] = [];
const mine: number[] = [];

afterEach(async () => {
  for (const u of users.splice(0)) await releaseAgentUser(u);
  for (const pid of mine.splice(0)) spawnSync("kill", ["-KILL", String(pid)]);
  cleanupTempDirs();
});

async function agentUser(ctx: TestContext): Promise<AgentUser> {
  if (!PRIVILEGED) {
    if (process.env.CI) throw new Error("CI must run this: it needs root or passwordless sudo");
    ctx.skip("the agent's own user needs root or passwordless sudo");
  }
  const u = (await prepareAgentUser("user", () => undefined))!;
  users.push(u);
  return u;
}

const exists = (user: string) => spawnSync("id", ["-u", user]).status === 0;

/** Starts `script` as the agent's user, detached (the test does not wait for it). */
function startAs(u: AgentUser, script: string): void {
  const { command, args } = asAgentUser(u, "sh", ["-c", script], { PATH: "/usr/bin:/bin" });
  const child = spawn(command, args, { detached: true, stdio: "ignore" });
  child.unref();
}

async function until(check: () => Promise<boolean>, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("the job's agent user", () => {
  it("is created fresh for each job, with a name and uid of its own, and removed at the end", { timeout: 30_000 }, async (ctx) => {
    const a = await agentUser(ctx);
    const b = await agentUser(ctx);
    expect(a.user).toMatch(/^forge-agent-[0-9a-f]{8}$/);
    expect(b.user).toMatch(/^forge-agent-[0-9a-f]{8}$/);
    expect(a.user).not.toBe(b.user);
    expect(a.uid).not.toBe(b.uid);
    expect(a.uid).not.toBe(process.getuid!());
    expect(exists(a.user) && exists(b.user)).toBe(true);
    users.splice(0);
    expect(await releaseAgentUser(a)).toEqual([]);
    expect(await releaseAgentUser(b)).toEqual([]);
    expect(exists(a.user) || exists(b.user)).toBe(false);
  });

  it("is created and removed by jobs on one machine at the same time", { timeout: 60_000 }, async (ctx) => {
    await agentUser(ctx);
    const more = (await Promise.all([1, 2, 3, 4, 5].map(() => prepareAgentUser("user", () => undefined)))) as AgentUser[];
    users.push(...more);
    const all = users.splice(0);
    expect(new Set(all.map((u) => u.uid)).size).toBe(all.length);
    expect(all.every((u) => exists(u.user))).toBe(true);
    expect((await Promise.all(all.map((u) => releaseAgentUser(u)))).flat()).toEqual([]);
    expect(all.some((u) => exists(u.user))).toBe(false);
  });

  it("puts back the modes handOver changed on the runner's folders, and removes what it left in /tmp", { timeout: 30_000 }, async (ctx) => {
    const u = await agentUser(ctx);
    const root = tempDir("forge-iso-");
    const parent = path.join(root, "work");
    const tree = path.join(parent, "repo");
    mkdirSync(tree, { recursive: true });
    chmodSync(parent, 0o750);
    await handOver(u, [tree]);
    expect(statSync(parent).mode & 0o777).toBe(0o751);
    expect(statSync(tree).uid).toBe(u.uid);
    await takeBack(u, [tree]);
    expect(statSync(tree).uid).toBe(process.getuid!());
    const left = `/tmp/forge-iso-left-${u.user}`;
    startAs(u, `echo left > ${left}`);
    await until(async () => existsSync(left));
    users.splice(0);
    expect(await releaseAgentUser(u)).toEqual([]);
    expect(statSync(parent).mode & 0o777).toBe(0o750);
    expect(existsSync(left)).toBe(false);
  });
});

describe("killing the agent's processes", () => {
  it(
    "kills every process of its uid — setsid daemons and a forking loop included — and nothing of anyone else",
    { timeout: 30_000 },
    async (ctx) => {
      const u = await agentUser(ctx);
      const bystander = spawn("sleep", ["60"], { detached: true, stdio: "ignore" });
      mine.push(bystander.pid!);
      // The loop forks while the kill runs (bounded: at most 300 sleeps, and 400 processes for the user).
      startAs(
        u,
        "ulimit -u 400; setsid sh -c 'sleep 60' & setsid sh -c 'i=0; while [ $i -lt 300 ]; do sleep 60 & i=$((i+1)); sleep 0.005; done' & sleep 60",
      );
      await until(async () => (await agentProcesses(u.uid)).length >= 4);
      expect(await killAgentProcesses(u)).toEqual([]);
      expect(await agentProcesses(u.uid)).toEqual([]);
      expect(statSync(`/proc/${bystander.pid}`).isDirectory()).toBe(true);
    },
  );

  it("refuses a user that is root or the runner itself", async () => {
    const owner = { uid: process.getuid?.() ?? 0, gid: 0 };
    const base = { user: "x", gid: 0, via: "root" as const, owner, changedModes: new Map<string, number>() };
    await expect(killAgentProcesses({ ...base, uid: 0 })).rejects.toThrow(/refusing/);
    await expect(killAgentProcesses({ ...base, uid: owner.uid })).rejects.toThrow(/refusing/);
  });
});

describe("a repository command", () => {
  it(
    "runs as the agent's user with the given environment and its own HOME and TMPDIR, and nothing of it outlives it",
    { timeout: 30_000 },
    async (ctx) => {
      const u = await agentUser(ctx);
      const dir = tempDir("forge-iso-");
      const repo = path.join(dir, "repo");
      mkdirSync(repo);
      writeFileSync(path.join(repo, "t.sh"), 'id -u; echo "$HOME $TMPDIR $ONLY"; setsid sleep 60 </dev/null >/dev/null 2>&1 &\n');
      const r = await runRepoCommand({
        command: "sh t.sh",
        cwd: repo,
        env: { PATH: "/usr/bin:/bin", ONLY: "given" },
        timeoutMs: 20_000,
        runAs: u,
        scratchDir: path.join(dir, "scratch"),
      });
      expect(r.code).toBe(0);
      expect(r.output.split("\n")[0]).toBe(String(u.uid));
      expect(r.output).toContain(`${path.join(dir, "scratch", "home")} ${path.join(dir, "scratch", "tmp")} given`);
      expect(r.survivors).toBeUndefined();
      expect(await agentProcesses(u.uid)).toEqual([]);
      expect(statSync(repo).uid).toBe(process.getuid!());
    },
  );

  it("keeps only the tail of a flood of output, and of one endless line", { timeout: 30_000 }, async () => {
    const dir = tempDir("forge-iso-");
    const r = await runRepoCommand({
      command:
        "i=0; while [ $i -lt 20000 ]; do echo line-$i-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx; i=$((i+1)); done; head -c 3000000 /dev/zero | tr '\\0' y; echo; echo done >&2",
      cwd: dir,
      env: { PATH: "/usr/bin:/bin" },
      timeoutMs: 20_000,
      scratchDir: path.join(dir, "scratch"),
      maxOutputBytes: 64 * 1024,
    });
    expect(r.code).toBe(0);
    expect(r.output.length).toBeLessThan(2 * 64 * 1024 + 200);
    expect(r.output).toContain("[… earlier output cut]");
    expect(r.output).not.toContain("line-0-");
    expect(r.output).toMatch(/\[stderr\]\ndone\n$/);
  });
});

describe("an agent its own user cannot reach", () => {
  it(
    "ends the session with the reason — the closed folder named — instead of failing inside the agent; reachable, it runs",
    { timeout: 30_000 },
    async (ctx) => {
      const u = await agentUser(ctx);
      const dir = tempDir("forge-iso-");
      // The runner's own folder, as mkdtemp makes it (0700), holding the agent's program.
      const hidden = path.join(dir, "hidden");
      mkdirSync(hidden, { mode: 0o700 });
      chmodSync(hidden, 0o700);
      chmodSync(dir, 0o755);
      const agent = path.join(hidden, "agent.mjs");
      writeFileSync(agent, "console.log(process.getuid());\n");
      chmodSync(agent, 0o644);
      const work = path.join(dir, "work");
      mkdirSync(work);
      const spawnAs = () =>
        spawnAgent({
          adapter: "command",
          command: process.execPath,
          args: [agent],
          prompt: "p",
          cwd: work,
          sessionDir: path.join(dir, `session-${Math.random().toString(16).slice(2)}`),
          env: { PATH: process.env.PATH },
          forgeCli: false,
          runAs: u,
        });
      const closed = await spawnAs();
      expect(closed.exitCode).toBe(1);
      expect(closed.error?.code).toBe("spawn_failed");
      expect(closed.error?.message).toContain(`${agent} cannot be read by the agent's own OS user ${u.user}`);
      expect(closed.error?.message).toContain(`${hidden} has mode 0700`);
      expect(closed.error?.message).toContain("agent.isolation: none");
      // The folders handed over for the session are the runner's again.
      expect(statSync(work).uid).toBe(process.getuid!());
      chmodSync(hidden, 0o755);
      const open = await spawnAs();
      expect(open.error).toBeUndefined();
      expect(open.exitCode).toBe(0);
      // A script its user may execute but not read: its interpreter could not read it.
      const script = path.join(hidden, "agent.sh");
      writeFileSync(script, "#!/bin/sh\necho hi\n");
      chmodSync(script, 0o711);
      const unreadable = await spawnAgent({
        adapter: "command",
        command: script,
        args: [],
        prompt: "p",
        cwd: work,
        sessionDir: path.join(dir, "session-script"),
        env: { PATH: process.env.PATH },
        forgeCli: false,
        runAs: u,
      });
      expect(unreadable.error?.message).toContain(`${script} cannot be read by the agent's own OS user`);
    },
  );
});
