// Real `git clone` and `git push` over smart HTTP with a token sent as actions/checkout sends it,
// and the events a push causes (push, create, delete, pull_request.synchronize, merged-by-push).
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSim, type Sim } from "../../src/local-github/server.js";
import { appKeys, startReceiver, type Receiver } from "./support/helpers.js";

let sim: Sim;
let receiver: Receiver;
let work: string;
let installationId: number;

// Asynchronous on purpose: the server answering git runs in this same process.
function git(cwd: string, args: string[], extra: string[] = []): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(
      "git",
      [...extra, ...args],
      {
        cwd,
        encoding: "utf8",
        env: {
          ...process.env,
          GIT_TERMINAL_PROMPT: "0",
          GIT_CONFIG_NOSYSTEM: "1",
          HOME: work,
          GIT_AUTHOR_NAME: "Agent",
          GIT_AUTHOR_EMAIL: "agent@forge.invalid",
          GIT_COMMITTER_NAME: "Agent",
          GIT_COMMITTER_EMAIL: "agent@forge.invalid",
        },
      },
      (err, stdout, stderr) => (err ? reject(Object.assign(err, { stderr })) : resolve(stdout)),
    ),
  );
}

/** The header actions/checkout configures: lower-case "basic", base64("x-access-token:<token>"). */
function authHeader(token: string): string[] {
  return ["-c", `http.extraheader=AUTHORIZATION: basic ${Buffer.from(`x-access-token:${token}`).toString("base64")}`];
}

async function gitFails(cwd: string, args: string[], extra: string[] = []): Promise<string> {
  try {
    await git(cwd, args, extra);
  } catch (e) {
    return String((e as { stderr: string }).stderr);
  }
  throw new Error(`git ${args.join(" ")} succeeded`);
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "forge-sim-git-test-"));
  sim = await createSim();
  receiver = await startReceiver("x");
  await sim.control.createRepo({ owner: "acme", name: "public", files: { "README.md": "hi\n" } });
  await sim.control.createRepo({
    owner: "acme",
    name: "secret",
    private: true,
    files: { "README.md": "private\n" },
    collaborators: { rita: "read" },
  });
  const app = sim.control.registerApp({
    slug: "forge-git",
    publicKeyPem: appKeys().publicKeyPem,
    webhookUrl: receiver.url,
    webhookSecret: "x",
    permissions: { contents: "write", pull_requests: "write" },
    events: ["push", "create", "delete", "pull_request"],
  });
  installationId = sim.control.install(app.id, "acme", "all").id;
});

afterAll(async () => {
  await sim?.close();
  await receiver?.close();
  rmSync(work, { recursive: true, force: true });
});

describe("git smart HTTP", () => {
  it("clones a public repository anonymously; a private one needs a token with contents:read", async () => {
    await git(work, ["clone", "-q", `${sim.gitUrl}/acme/public.git`, "pub"]);
    expect((await git(join(work, "pub"), ["log", "--format=%s"])).trim()).toBe("Initial commit");
    expect(await gitFails(work, ["clone", "-q", `${sim.gitUrl}/acme/secret.git`, "s1"])).toMatch(
      /Authentication failed|could not read Username|terminal prompts disabled/,
    );
    const token = sim.control.installationToken(installationId);
    await git(work, ["clone", "-q", `${sim.gitUrl}/acme/secret.git`, "s2"], authHeader(token));
    // The token in the URL works too.
    await git(work, ["clone", "-q", `${sim.gitUrl.replace("http://", `http://x-access-token:${token}@`)}/acme/secret.git`, "s3"]);
  });

  it("pushes with a token, refuses pushes without write access, and emits the push's events", async () => {
    const token = sim.control.installationToken(installationId);
    const dir = join(work, "push");
    await git(work, ["clone", "-q", `${sim.gitUrl}/acme/public.git`, "push"], authHeader(token));
    await git(dir, ["checkout", "-q", "-b", "forge/run-1/t1/1"]);
    writeFileSync(join(dir, "a.txt"), "a\n");
    await git(dir, ["add", "a.txt"]);
    await git(dir, ["commit", "-q", "-m", "agent: a"]);
    await git(dir, ["push", "-q", "origin", "HEAD"], authHeader(token));

    const gh = new Octokit({ baseUrl: sim.apiUrl, auth: token });
    const head = (await git(dir, ["rev-parse", "HEAD"])).trim();
    expect((await gh.rest.git.getRef({ owner: "acme", repo: "public", ref: "heads/forge/run-1/t1/1" })).data.object.sha).toBe(head);
    const { data: pr } = await gh.rest.pulls.create({ owner: "acme", repo: "public", head: "forge/run-1/t1/1", base: "main", title: "t1" });

    // A second push moves the PR head: pull_request.synchronize.
    writeFileSync(join(dir, "b.txt"), "b\n");
    await git(dir, ["add", "b.txt"]);
    await git(dir, ["commit", "-q", "-m", "agent: b"]);
    await git(dir, ["push", "-q", "origin", "HEAD"], authHeader(token));
    const head2 = (await git(dir, ["rev-parse", "HEAD"])).trim();

    // No credentials → 401 challenge; a read-only person → 403; anonymous pushes fail.
    expect(await gitFails(dir, ["push", "-q", "origin", "HEAD:refs/heads/x"])).toMatch(
      /Authentication failed|could not read Username|terminal prompts disabled/,
    );
    const rita = sim.control.userToken("rita");
    expect(await gitFails(dir, ["push", "-q", `${sim.gitUrl}/acme/secret.git`, "HEAD:refs/heads/x"], authHeader(rita))).toMatch(
      /403|denied/,
    );

    // Pushing the branch into main by hand merges the PR, as on GitHub; deleting the branch emits delete.
    await git(dir, ["push", "-q", "origin", "HEAD:main"], authHeader(token));
    await git(dir, ["push", "-q", "origin", "--delete", "forge/run-1/t1/1"], authHeader(token));

    await sim.idle();
    const sync = await receiver.waitFor((h) => h.event === "pull_request" && h.action === "synchronize");
    expect(sync.payload.after).toBe(head2);
    expect(sync.payload.before).toBe(head);
    const closed = await receiver.waitFor((h) => h.event === "pull_request" && h.action === "closed");
    expect((closed.payload.pull_request as { merged: boolean; number: number }).merged).toBe(true);
    expect((closed.payload.pull_request as { number: number }).number).toBe(pr.number);
    await receiver.waitFor((h) => h.event === "create" && h.payload.ref === "forge/run-1/t1/1");
    await receiver.waitFor((h) => h.event === "delete" && h.payload.ref === "forge/run-1/t1/1");
    const pushes = receiver.received.filter((h) => h.event === "push");
    expect(pushes.map((p) => [p.payload.ref, p.payload.created, p.payload.deleted])).toEqual([
      ["refs/heads/forge/run-1/t1/1", true, false],
      ["refs/heads/forge/run-1/t1/1", false, false],
      ["refs/heads/main", false, false],
      ["refs/heads/forge/run-1/t1/1", false, true],
    ]);
    expect((pushes[0]!.payload.pusher as { name: string }).name).toBe("forge-git[bot]");
    expect(receiver.received.every((h) => h.signatureValid && !h.schemaError)).toBe(true);
    expect(sim.violations).toEqual([]);
  });
});

describe("git smart HTTP under a ruleset", () => {
  it("many pushes at once each run the rules hook whole: none is declined unless it breaks a rule", { timeout: 120_000 }, async () => {
    await sim.control.createRepo({ owner: "acme", name: "ruled", files: { "README.md": "rules\n" } });
    const set = await sim.control.api("acme", "POST", "/repos/acme/ruled/rulesets", {
      name: "state",
      target: "branch",
      enforcement: "active",
      conditions: { ref_name: { include: ["refs/heads/forge/*/_state"], exclude: [] } },
      rules: [{ type: "creation" }, { type: "update" }, { type: "deletion" }, { type: "non_fast_forward" }],
    });
    expect(set.status).toBe(201);
    const token = sim.control.installationToken(installationId);
    const dir = join(work, "ruled");
    await git(work, ["clone", "-q", `${sim.gitUrl}/acme/ruled.git`, "ruled"], authHeader(token));
    const shas: string[] = [];
    for (let i = 0; i < 8; i++) {
      await git(dir, ["commit", "-q", "--allow-empty", "-m", `c${i}`]);
      shas.push((await git(dir, ["rev-parse", "HEAD"])).trim());
    }
    // Three rounds of eight pushes at once, allowed by the rules; then one that breaks them.
    for (let round = 0; round < 3; round++) {
      const results = await Promise.allSettled(
        shas.map((sha, i) => git(dir, ["push", "-q", "origin", `${sha}:refs/heads/forge/r/t${i}/${round}`], authHeader(token))),
      );
      const declined = results.flatMap((r) => (r.status === "rejected" ? [String((r.reason as { stderr: string }).stderr)] : []));
      expect(declined).toEqual([]);
    }
    const refused = await gitFails(dir, ["push", "-q", "origin", `${shas[0]}:refs/heads/forge/r/_state`], authHeader(token));
    expect(refused).toMatch(/GH013/);
  });
});
