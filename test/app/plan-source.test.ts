/**
 * A big plan's files are read in a few GraphQL queries (`OctokitPort.readFiles`, 100 files a query)
 * rather than a call each, against the local GitHub: the same files as the contents API gives, a
 * missing one as null, and the plan source the same as when it is read file by file.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProbotOctokit } from "probot";
import { readPlanSourceFromGitHub } from "../../src/app/plan-source.js";
import { OctokitPort, READ_FILES_BATCH, type Octokit } from "../../src/github/octokit-port.js";
import type { GitHubPort } from "../../src/github/port.js";
import { createSim, type Sim } from "../../src/local-github/server.js";
import { dagFiles, generateDag } from "../helpers/gen-plan.js";
import { appKeys, startReceiver, type Receiver } from "../local-github/support/helpers.js";

let sim: Sim;
let receiver: Receiver;
let port: OctokitPort;
const routes: string[] = [];
let files: Record<string, string>;

beforeAll(async () => {
  sim = await createSim();
  receiver = await startReceiver("p");
  files = await dagFiles(generateDag(130, 300, 3));
  await sim.control.createRepo({ owner: "acme", name: "w", files: { ...files, "bin.dat": "a\u0000b" } });
  const app = sim.control.registerApp({
    slug: "forge-plan-source",
    publicKeyPem: appKeys().publicKeyPem,
    webhookUrl: receiver.url,
    webhookSecret: "p",
    permissions: { contents: "write" },
    events: ["push"],
  });
  const inst = sim.control.install(app.id, "acme", "all");
  const octokit = new ProbotOctokit({ auth: { token: sim.control.installationToken(inst.id) }, baseUrl: sim.apiUrl }) as unknown as Octokit;
  octokit.hook.before("request", (o) => void routes.push(`${o.method} ${o.url}`));
  port = new OctokitPort(octokit, "acme", "w");
});

afterAll(async () => {
  await sim?.close();
  await receiver?.close();
});

describe("reading many files", () => {
  it("readFiles gives what readFile gives, in a query per 100 files; a missing file is null, a binary one is read through the contents API", async () => {
    const paths = [...Object.keys(files), "nope/missing.md", "bin.dat"];
    expect(paths.length).toBeGreaterThan(READ_FILES_BATCH);
    routes.length = 0;
    const got = await port.readFiles(paths, "main");
    expect(routes.filter((r) => r.includes("graphql"))).toHaveLength(Math.ceil(paths.length / READ_FILES_BATCH));
    expect(routes.filter((r) => !r.includes("graphql"))).toEqual(["GET /repos/{owner}/{repo}/contents/{path}"]);
    expect(got.get("nope/missing.md")).toBeNull();
    for (const path of [...Object.keys(files).slice(0, 5), "bin.dat"]) expect(got.get(path)).toEqual(await port.readFile(path, "main"));
    for (const [path, text] of Object.entries(files)) expect(got.get(path)?.content).toBe(text);
  });

  it("a big plan's source is the same read in batches as file by file, in a few calls", async () => {
    const planId = Object.keys(files)[0]!.split("/")[2]!;
    const head = (await port.branchHead("main"))!;
    routes.length = 0;
    const batched = await readPlanSourceFromGitHub(port, planId, head);
    const calls = routes.length;
    const oneByOne: GitHubPort = {
      readFile: (p: string, r: string) => port.readFile(p, r),
      listDirectory: (p: string, r: string) => port.listDirectory(p, r),
    } as unknown as GitHubPort;
    const plain = await readPlanSourceFromGitHub(oneByOne, planId, head);
    expect(batched.files).toEqual(plain.files);
    expect(batched.dirs).toEqual(plain.dirs);
    expect(batched.unreadable).toEqual([]);
    expect(batched.files.size).toBeGreaterThan(130);
    expect(calls).toBeLessThan(10);
  });
});
