/**
 * Latency of the local GitHub's REST operations, called through plain Octokit with an installation
 * token and a webhook receiver subscribed to every event (so each write also builds and delivers
 * its webhooks, as in the end-to-end suites). Prints the median and p90 per operation in ms.
 * Run: `npm run bench:sim` (BENCH_N=40 samples per operation by default; `--json` for JSON).
 */
import { Octokit } from "@octokit/rest";
import { createSim } from "../src/local-github/server.js";
import { appKeys, startReceiver } from "../test/local-github/support/helpers.js";
import { gitProcesses } from "../src/local-github/git/index.js";

const N = Number(process.env.BENCH_N ?? 40);
const json = process.argv.includes("--json");
const owner = "acme";
const repo = "bench";
const b64 = (s: string) => Buffer.from(s).toString("base64");

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * (s.length - 1) + 0.5))]!;
}

async function main(): Promise<void> {
  const sim = await createSim({ strict: true, workflowExecutor: "noop" });
  const receiver = await startReceiver("b");
  const files: Record<string, string> = { "README.md": "# bench\n" };
  for (let i = 0; i < 40; i++) files[`src/m${i}/file${i}.ts`] = `export const x${i} = ${i};\n`;
  await sim.control.createRepo({ owner, name: repo, files });
  const app = sim.control.registerApp({
    slug: "forge-bench",
    publicKeyPem: appKeys().publicKeyPem,
    webhookUrl: receiver.url,
    webhookSecret: "b",
    permissions: { contents: "write", pull_requests: "write", issues: "write", checks: "write", actions: "write", statuses: "write" },
    events: ["push", "create", "delete", "pull_request", "issues", "issue_comment", "check_suite", "check_run"],
  });
  const inst = sim.control.install(app.id, owner, "all");
  const gh = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.installationToken(inst.id) });
  const times = new Map<string, number[]>();
  const spawned = new Map<string, Map<string, number>>();
  async function time<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const before = new Map(gitProcesses);
    const t0 = performance.now();
    const r = await fn();
    const per = spawned.get(name) ?? new Map<string, number>();
    for (const [k, v] of gitProcesses) if (v !== (before.get(k) ?? 0)) per.set(k, (per.get(k) ?? 0) + v - (before.get(k) ?? 0));
    spawned.set(name, per);
    const list = times.get(name) ?? [];
    list.push(performance.now() - t0);
    times.set(name, list);
    return r;
  }

  const main = (await gh.rest.git.getRef({ owner, repo, ref: "heads/main" })).data.object.sha;
  // Warm-up: validators compile on first use.
  await gh.rest.repos.getContent({ owner, repo, path: "README.md" });
  for (let i = 0; i < N; i++) {
    const branch = `b${i}`;
    await time("getRef", () => gh.rest.git.getRef({ owner, repo, ref: "heads/main" }));
    await time("getContent", () => gh.rest.repos.getContent({ owner, repo, path: `src/m${i % 40}/file${i % 40}.ts` }));
    const blob = await time("createBlob", () => gh.rest.git.createBlob({ owner, repo, content: `blob ${i}\n`, encoding: "utf-8" }));
    const base = (await gh.rest.git.getCommit({ owner, repo, commit_sha: main })).data.tree.sha;
    const tree = await time("createTree", () =>
      gh.rest.git.createTree({
        owner,
        repo,
        base_tree: base,
        tree: [{ path: `work/${branch}.txt`, mode: "100644", type: "blob", sha: blob.data.sha }],
      }),
    );
    const commit = await time("createCommit", () =>
      gh.rest.git.createCommit({ owner, repo, message: `work ${i}`, tree: tree.data.sha, parents: [main] }),
    );
    await gh.rest.git.createRef({ owner, repo, ref: `refs/heads/${branch}`, sha: main });
    await time("updateRef", () => gh.rest.git.updateRef({ owner, repo, ref: `heads/${branch}`, sha: commit.data.sha }));
    await time("contents PUT", () =>
      gh.rest.repos.createOrUpdateFileContents({
        owner,
        repo,
        path: `notes/${branch}.md`,
        branch,
        message: "note",
        content: b64(`note ${i}\n`),
      }),
    );
    const pr = await time("pulls.create", () => gh.rest.pulls.create({ owner, repo, head: branch, base: "main", title: `PR ${i}` }));
    await time("pulls.merge", () => gh.rest.pulls.merge({ owner, repo, pull_number: pr.data.number, merge_method: "squash" }));
    await time("issues.create", () => gh.rest.issues.create({ owner, repo, title: `issue ${i}` }));
    await sim.idle();
  }
  const rows = [...times].map(([op, xs]) => ({
    op,
    median: Number(quantile(xs, 0.5).toFixed(1)),
    p90: Number(quantile(xs, 0.9).toFixed(1)),
    n: xs.length,
    // git processes per call (during the call; webhooks built after the answer are not counted)
    git: [...(spawned.get(op) ?? [])].map(([k, v]) => `${k}×${(v / xs.length).toFixed(1)}`).join(" "),
  }));
  if (json) console.log(JSON.stringify(rows));
  else {
    console.log(`local GitHub REST latency (ms), ${N} samples each`);
    for (const r of rows)
      console.log(`${r.op.padEnd(14)} median ${String(r.median).padStart(7)}   p90 ${String(r.p90).padStart(7)}   git ${r.git || "-"}`);
  }
  if (sim.violations.length) console.error("violations:", JSON.stringify(sim.violations));
  await sim.close();
  await receiver.close();
}

await main();
