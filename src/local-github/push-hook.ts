// Rules on pushes over Git: as GitHub, the local GitHub refuses a push in a pre-receive hook, before
// any ref moves, with "GH013: Repository rule violations found for <ref>." (rulesets, the rules of
// rule-violations.ts) or "GH006: Protected branch update failed for <ref>." (branch protection,
// branch-protection.ts). The hook itself only passes the ref updates, and where git keeps the
// pushed objects until they are accepted (its quarantine), to the server (`POST /_hooks/pre-receive`,
// with a key of the server's and the push's id): the server judges them with the same code as every
// REST write, for the pusher it authenticated, and answers the text git shows as `remote:` lines.
import { randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join } from "node:path";
import { protectionRules, protectionViolations } from "./branch-protection.js";
import type { ActContext, SimCore } from "./domain/index.js";
import { isAncestorIn } from "./rule-facts.js";
import { gh013, ruleViolations } from "./rule-violations.js";
import { allRulesets, canBypass } from "./rulesets.js";
import type { Repo } from "./state.js";

export const PRE_RECEIVE_PATH = "/_hooks/pre-receive";

/** The hook: git's ref updates and quarantine to the server, its answer to git's stderr, its verdict as the exit code. */
const HOOK_SOURCE = `"use strict";
const { resolve } = require("node:path");
const updates = require("node:fs").readFileSync(0, "utf8");
const env = {};
for (const k of ["GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_QUARANTINE_PATH"]) {
  const v = process.env[k];
  if (v) env[k] = v.split(":").map((p) => resolve(p)).join(":");
}
fetch(process.env.FORGE_HOOK_URL, {
  method: "POST",
  headers: { "content-type": "application/json", authorization: "Bearer " + process.env.FORGE_HOOK_KEY },
  body: JSON.stringify({ push: process.env.FORGE_PUSH, updates, env }),
})
  .then((r) => r.json())
  .then((a) => {
    if (a.text) process.stderr.write(a.text);
    process.exit(a.ok ? 0 : 1);
  })
  .catch((e) => {
    process.stderr.write("error: the rules of this repository could not be checked: " + e.message + "\\n");
    process.exit(1);
  });
`;

/**
 * The hook's files under `<root>/hooks`, written once per server and each by an atomic rename: a
 * push running the hook while another push starts must never read a half-written file.
 */
function installHook(root: string): string {
  const dir = join(root, "hooks");
  const hook = join(dir, "pre-receive");
  if (existsSync(hook)) return dir;
  mkdirSync(dir, { recursive: true });
  const place = (name: string, text: string, mode: number): void => {
    const temp = join(dir, `.${name}.${process.pid}.${Math.random().toString(36).slice(2)}`);
    writeFileSync(temp, text, { mode });
    chmodSync(temp, mode);
    renameSync(temp, join(dir, name));
  };
  place("rules.cjs", HOOK_SOURCE, 0o644);
  place("pre-receive", `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(join(dir, "rules.cjs"))}\n`, 0o755);
  return dir;
}

/** Per server: the key the hook shows, and the pushes under way (their repository and pusher). */
const pushes = new WeakMap<SimCore, { key: string; pending: Map<string, { repo: Repo; who: ActContext }> }>();

function pushesOf(core: SimCore): { key: string; pending: Map<string, { repo: Repo; who: ActContext }> } {
  let p = pushes.get(core);
  if (!p) pushes.set(core, (p = { key: randomBytes(24).toString("hex"), pending: new Map() }));
  return p;
}

/**
 * The environment for `git http-backend` under which receive-pack runs the hook, and `done` to call
 * once the push is over; undefined when no rule can apply to this pusher (every ruleset bypassed or
 * none, and no branch protection binding).
 */
export function pushHook(core: SimCore, repo: Repo, who: ActContext): { env: Record<string, string>; done: () => void } | undefined {
  const ruled = allRulesets(repo).some((r) => r.enforcement === "active" && !canBypass(repo, r, who));
  const guarded = [...(repo.protection?.keys() ?? [])].some((b) => protectionRules(repo, `refs/heads/${b}`, who).length > 0);
  if (!ruled && !guarded) return undefined;
  const p = pushesOf(core);
  const id = randomUUID();
  p.pending.set(id, { repo, who });
  return {
    env: {
      FORGE_HOOK_URL: `${core.baseUrl}${PRE_RECEIVE_PATH}`,
      FORGE_HOOK_KEY: p.key,
      FORGE_PUSH: id,
      GIT_CONFIG_COUNT: "1",
      GIT_CONFIG_KEY_0: "core.hooksPath",
      GIT_CONFIG_VALUE_0: installHook(core.root),
    },
    done: () => void p.pending.delete(id),
  };
}

const ZERO = /^0+$/;

/** The verdict on a push's ref updates (`<before> <after> <ref>` lines): the text git shows, and whether it may go. */
export async function judgePush(
  core: SimCore,
  repo: Repo,
  who: ActContext,
  updates: string,
  env: Record<string, string>,
): Promise<{ ok: boolean; text: string }> {
  const texts: string[] = [];
  for (const line of updates.split("\n")) {
    const [before, after, ref] = line.trim().split(" ");
    if (!before || !after || !ref) continue;
    const view = { gitDir: repo.gitDir, env };
    const write = {
      ref,
      before: ZERO.test(before) ? null : before,
      after: ZERO.test(after) ? null : after,
      view,
      // A push says nothing of whether it fast-forwards: git's ancestry does.
      fastForward: () => isAncestorIn(view, before, after),
    };
    const rules = await ruleViolations(core, repo, write, who);
    if (rules.length) texts.push(gh013(core.baseUrl, repo, ref, rules));
    const protections = await protectionViolations(repo, write, who);
    if (protections.length)
      texts.push(`error: GH006: Protected branch update failed for ${ref}.\n${protections.map((m) => `error: ${m}\n`).join("")}`);
  }
  return { ok: texts.length === 0, text: texts.join("") };
}

/** `POST /_hooks/pre-receive`: the hook of a push under way asks for its verdict. */
export async function handlePreReceive(
  core: SimCore,
  req: IncomingMessage,
  res: ServerResponse,
  readBody: (req: IncomingMessage) => Promise<Buffer>,
): Promise<void> {
  const answer = (status: number, body: { ok: boolean; text: string }) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  };
  const p = pushesOf(core);
  const given = Buffer.from(String(req.headers.authorization ?? "").replace(/^Bearer /, ""));
  const want = Buffer.from(p.key);
  const raw = await readBody(req);
  if (req.method !== "POST" || given.length !== want.length || !timingSafeEqual(given, want))
    return answer(403, { ok: false, text: "error: not a push of this server\n" });
  let body: { push?: string; updates?: string; env?: Record<string, string> };
  try {
    body = JSON.parse(raw.toString("utf8")) as typeof body;
  } catch {
    return answer(400, { ok: false, text: "error: unreadable hook request\n" });
  }
  const push = body.push ? p.pending.get(body.push) : undefined;
  if (!push) return answer(404, { ok: false, text: "error: no such push under way\n" });
  const env: Record<string, string> = {};
  for (const k of ["GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_QUARANTINE_PATH"])
    if (typeof body.env?.[k] === "string") env[k] = body.env[k];
  answer(200, await judgePush(core, push.repo, push.who, body.updates ?? "", env));
}
