// Git smart HTTP at /{owner}/{repo}.git, served by `git http-backend` as a CGI program.
//
// Authentication follows what actions/checkout sends: `Authorization: basic
// base64(x-access-token:<token>)` (any user name is accepted with a token as password, as GitHub
// does). Fetching a public repository needs no credentials; pushing needs `contents: write` for
// App/workflow tokens or a write role for people. After a receive-pack the refs are compared with
// their state before the push, and the resulting push/create/delete/pull_request events are sent.
// The repository's rulesets and branch protection are enforced by a pre-receive hook (push-hook.ts).
import { spawn } from "node:child_process";
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from "node:http";
import { join } from "node:path";
import { authenticate, hasPermission, HttpError, roleAtLeast, roleOf } from "./auth.js";
import type { SimCore } from "./domain/index.js";
import { listRefs } from "./git/index.js";
import { gitLatencyClass } from "./latency/profile.js";
import { pushHook } from "./push-hook.js";
import type { Repo, Token } from "./state.js";

const GIT_PATH = /^\/([^/]+)\/([^/]+?)\.git(\/.*)$/;

export function isGitRequest(path: string): boolean {
  return GIT_PATH.test(path);
}

function deny(res: ServerResponse, status: number, text: string, challenge = false): void {
  const headers: Record<string, string> = { "content-type": "text/plain" };
  if (challenge) headers["www-authenticate"] = 'Basic realm="GitHub"';
  res.writeHead(status, headers);
  res.end(`${text}\n`);
}

export async function handleGit(core: SimCore, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  const m = GIT_PATH.exec(url.pathname)!;
  const repo = core.state.repoByName(decodeURIComponent(m[1]!), decodeURIComponent(m[2]!));
  if (!repo) return deny(res, 404, "Repository not found.");
  const rest = m[3]!;
  const service =
    url.searchParams.get("service") ??
    (rest.endsWith("/git-receive-pack") ? "git-receive-pack" : rest.endsWith("/git-upload-pack") ? "git-upload-pack" : "");
  const write = service === "git-receive-pack";

  let token: Token | undefined;
  try {
    const cred = authenticate(core.state, req.headers.authorization);
    if (cred.kind === "token") token = cred.token;
    else if (cred.kind === "jwt")
      return deny(res, 401, "Invalid username or token. Password authentication is not supported for Git operations.", true);
  } catch {
    return deny(res, 401, "Invalid username or token. Password authentication is not supported for Git operations.", true);
  }
  if (!token) {
    if (write || repo.private) return deny(res, 401, "Authentication required", true);
  } else if (!allowed(core, repo, token, write)) {
    // A token that cannot see the repository gets "not found"; one that can read but not write
    // gets "Permission … denied" (403), as GitHub answers a push it refuses.
    if (!allowed(core, repo, token, false)) return deny(res, 404, "Repository not found.");
    return deny(res, 403, `Permission to ${repo.owner.login}/${repo.name}.git denied to ${token.actor.login}.`);
  }

  // An injected failure (faults.ts `gitFaults`): the RPC answered with a 5xx, or its connection dropped.
  if (req.method === "POST" && service) {
    const fault = core.faults.git(write ? "push" : "fetch");
    if (fault) return answerFault(req, res, fault.answer);
  }

  // GitHub's time for a fetch (at its ref advertisement) or a push (before the refs change).
  await core.latency.wait(gitLatencyClass(req.method ?? "GET", rest, service));
  const before = write ? await listRefs(repo.gitDir) : undefined;
  // Rules that apply to this pusher run as a pre-receive hook (refused pushes change nothing).
  const hook = write && token ? pushHook(core, repo, { actor: token.actor, token }) : undefined;
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    GIT_PROJECT_ROOT: join(core.root, "git"),
    GIT_HTTP_EXPORT_ALL: "1",
    GIT_CONFIG_NOSYSTEM: "1",
    PATH_INFO: `/${repo.owner.login}/${repo.name}.git${rest}`,
    QUERY_STRING: url.search.replace(/^\?/, ""),
    REQUEST_METHOD: req.method ?? "GET",
    CONTENT_TYPE: req.headers["content-type"] ?? "",
    REMOTE_USER: token?.actor.login ?? "",
    REMOTE_ADDR: req.socket.remoteAddress ?? "127.0.0.1",
    ...(hook?.env ?? {}),
  };
  if (req.headers["content-length"]) env.CONTENT_LENGTH = req.headers["content-length"];
  if (req.headers["content-encoding"]) env.HTTP_CONTENT_ENCODING = req.headers["content-encoding"];
  if (req.headers["git-protocol"]) env.GIT_PROTOCOL = String(req.headers["git-protocol"]);

  const child = spawn("git", ["http-backend"], { env });
  req.pipe(child.stdin);
  child.stdin.on("error", () => undefined);
  let head = Buffer.alloc(0);
  let headersDone = false;
  const stderr: Buffer[] = [];
  child.stderr.on("data", (d: Buffer) => stderr.push(d));
  child.stdout.on("data", (chunk: Buffer) => {
    if (headersDone) {
      res.write(chunk);
      return;
    }
    head = Buffer.concat([head, chunk]);
    let idx = head.indexOf("\r\n\r\n");
    let sepLen = 4;
    if (idx < 0) {
      idx = head.indexOf("\n\n");
      sepLen = 2;
    }
    if (idx < 0) return;
    headersDone = true;
    let status = 200;
    const headers: Record<string, string> = {};
    for (const line of head.subarray(0, idx).toString("utf8").split(/\r?\n/)) {
      const c = line.indexOf(":");
      if (c < 0) continue;
      const k = line.slice(0, c).trim();
      const v = line.slice(c + 1).trim();
      if (k.toLowerCase() === "status") status = Number(v.split(" ")[0]);
      else headers[k] = v;
    }
    res.writeHead(status, headers);
    res.write(head.subarray(idx + sepLen));
  });
  await new Promise<void>((resolve) => {
    child.on("close", () => resolve());
    child.on("error", () => resolve());
  });
  hook?.done();
  if (!headersDone) {
    res.writeHead(500, { "content-type": "text/plain" });
    res.end(Buffer.concat(stderr));
    return;
  }
  // Events are queued before the push's response ends (so a client that waits for the push also
  // waits for them to be queued) and sent after it.
  if (before) {
    const after = await listRefs(repo.gitDir);
    const changes = [];
    for (const [ref, sha] of after) if (before.get(ref) !== sha) changes.push({ ref, before: before.get(ref) ?? null, after: sha });
    for (const [ref, sha] of before) if (!after.has(ref)) changes.push({ ref, before: sha, after: null });
    if (changes.length) await core.refsChanged(repo, changes, { actor: token!.actor, token });
  }
  res.end();
  core.bus.flush();
}

/**
 * A git RPC that fails: its body read and dropped, then a status — or the connection dropped in the
 * middle of the answer. Dropped after the headers, not before: a request on a reused connection
 * that gets no answer at all is sent again by curl itself, so the client would never see that drop.
 */
async function answerFault(req: IncomingMessage, res: ServerResponse, answer: number | "reset"): Promise<void> {
  for await (const _ of req) void _;
  if (answer !== "reset") return deny(res, answer, STATUS_CODES[answer] ?? "Error");
  res.writeHead(200, {
    "content-type": `application/x-${req.url?.includes("receive-pack") ? "git-receive-pack" : "git-upload-pack"}-result`,
  });
  res.flushHeaders();
  res.socket?.destroy();
}

function allowed(core: SimCore, repo: Repo, token: Token, write: boolean): boolean {
  if (token.kind === "user") {
    const role = roleOf(repo, token.actor);
    if (!role) return !write && !repo.private;
    return roleAtLeast(role, write ? "write" : "read");
  }
  if (token.repoIds && !token.repoIds.includes(repo.id)) return false;
  if (token.kind === "installation") {
    const inst = core.state.installations.get(token.installationId!);
    if (!inst || !core.state.installationsFor(repo).includes(inst)) return false;
  }
  return hasPermission(token.permissions, "contents", write ? "write" : "read");
}

export { HttpError };
