// GitHub's size limits as the local GitHub applies them, against GitHub's description:
//  - the contents API (docs.github.com/rest/repos/contents#get-repository-content): "Between 1-100 MB:
//    … the content field will be an empty string and the encoding field will be "none". To get the
//    contents of these larger files, use the raw media type.";
//  - GraphQL `Blob.text`, cut at 512,000 bytes with `isTruncated: true` (the schema's "Indicates
//    whether the contents is truncated"; the cut measured at exactly 512,000 bytes);
//  - Actions secrets: "Secrets are limited to 48 KB in size." (docs.github.com/actions/reference/secrets-reference).
import { Octokit } from "@octokit/rest";
import sodium from "libsodium-wrappers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OctokitPort, type Octokit as PortOctokit } from "../../src/github/octokit-port.js";
import { createSim, type Sim } from "../../src/local-github/server.js";

let sim: Sim;
let admin: Octokit;
const MB = 1024 * 1024;
const big = "x".repeat(MB) + "tail\n"; // just over 1 MB
const medium = "é".repeat(256_010) + "\n"; // 512,021 bytes: past the GraphQL cut, under 1 MB
const small = "hello\n";

beforeAll(async () => {
  sim = await createSim();
  await sim.control.createRepo({ owner: "acme", name: "r", files: { "big.txt": big, "medium.txt": medium, "small.txt": small } });
  admin = new Octokit({ baseUrl: sim.apiUrl, auth: sim.control.userToken("acme") });
});
afterAll(() => sim.close());

describe("the contents API past 1 MB", () => {
  it("answers a file up to 1 MB inline, base64", async () => {
    const { data } = await admin.rest.repos.getContent({ owner: "acme", repo: "r", path: "medium.txt" });
    const file = data as { encoding: string; content: string; size: number };
    expect(file.encoding).toBe("base64");
    expect(Buffer.from(file.content, "base64").toString("utf8")).toBe(medium);
  });

  it("answers a file over 1 MB with encoding none and empty content; its size and the raw media type still give it", async () => {
    const { data } = await admin.rest.repos.getContent({ owner: "acme", repo: "r", path: "big.txt" });
    const file = data as { encoding: string; content: string; size: number; sha: string };
    expect(file.encoding).toBe("none");
    expect(file.content).toBe("");
    expect(file.size).toBe(Buffer.byteLength(big));
    const raw = await admin.request("GET /repos/{owner}/{repo}/contents/{path}", {
      owner: "acme",
      repo: "r",
      path: "big.txt",
      headers: { accept: "application/vnd.github.raw" },
    });
    expect(Buffer.from(raw.data as unknown as ArrayBuffer).toString("utf8")).toBe(big);
    const blob = await admin.rest.git.getBlob({ owner: "acme", repo: "r", file_sha: file.sha });
    expect(Buffer.from(blob.data.content, "base64").toString("utf8")).toBe(big);
  });
});

describe("GraphQL Blob.text", () => {
  const query = `query($e: String!) { repository(owner: "acme", name: "r") { object(expression: $e) { ... on Blob { text isTruncated byteSize } } } }`;
  type Answer = { repository: { object: { text: string | null; isTruncated: boolean; byteSize: number } } };

  it("is whole up to 512,000 bytes and cut there past it, with isTruncated", async () => {
    const whole = await admin.graphql<Answer>(query, { e: "main:small.txt" });
    expect(whole.repository.object).toEqual({ text: small, isTruncated: false, byteSize: small.length });
    const cut = await admin.graphql<Answer>(query, { e: "main:medium.txt" });
    expect(cut.repository.object.isTruncated).toBe(true);
    expect(cut.repository.object.byteSize).toBe(Buffer.byteLength(medium));
    expect(Buffer.byteLength(cut.repository.object.text!)).toBe(512_000);
    expect(medium.startsWith(cut.repository.object.text!)).toBe(true);
  });
});

describe("Forge's port past GitHub's cuts", () => {
  it("reads a file over 1 MB and one GraphQL cut whole, one by one and in a batch", async () => {
    const port = new OctokitPort(admin as unknown as PortOctokit, "acme", "r");
    expect((await port.readFile("big.txt", "main"))?.content).toBe(big);
    expect((await port.readFile("medium.txt", "main"))?.content).toBe(medium);
    const files = await port.readFiles(["small.txt", "medium.txt", "big.txt", "absent.txt"], "main");
    expect(files.get("small.txt")?.content).toBe(small);
    expect(files.get("medium.txt")?.content).toBe(medium);
    expect(files.get("big.txt")?.content).toBe(big);
    expect(files.get("absent.txt")).toBeNull();
  });
});

describe("Actions secrets past 48 KB", () => {
  it("accepts a value of 48 KB and refuses one byte more with 422", async () => {
    const p = { owner: "acme", repo: "r" };
    const { data: key } = await admin.rest.actions.getRepoPublicKey(p);
    await sodium.ready;
    const seal = (value: string) =>
      sodium.to_base64(
        sodium.crypto_box_seal(sodium.from_string(value), sodium.from_base64(key.key, sodium.base64_variants.ORIGINAL)),
        sodium.base64_variants.ORIGINAL,
      );
    const put = (value: string) =>
      admin.rest.actions
        .createOrUpdateRepoSecret({ ...p, secret_name: "BIG", encrypted_value: seal(value), key_id: key.key_id })
        .then((r) => ({ status: r.status, message: "" }))
        .catch((e: { status: number; message: string }) => ({ status: e.status, message: e.message }));
    expect((await put("k".repeat(48 * 1024))).status).toBe(201);
    const over = await put("k".repeat(48 * 1024 + 1));
    expect(over.status).toBe(422);
    expect(over.message).toMatch(/48 KB/);
    expect(sim.core.state.repoByName("acme", "r")!.secrets!.byName.get("BIG")!.value).toHaveLength(48 * 1024);
  });
});
