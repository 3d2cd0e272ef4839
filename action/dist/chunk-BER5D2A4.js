import { createRequire as __forgeCreateRequire } from 'node:module';
const require = __forgeCreateRequire(import.meta.url);
import {
  EXIT_CODES,
  EXIT_STATUS,
  MODELS_ENV,
  isExitCode,
  parsePlan,
  require_dist,
  signalStatusOf
} from "./chunk-SL7VK6UQ.js";
import {
  __toESM
} from "./chunk-54WUDIML.js";

// src/agent/secrets.ts
var SECRET_NAME = /(TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|PRIVATE_?KEY|CREDENTIAL|AUTH)/i;
var TOKEN_SHAPES = [
  /\bgh[opsur]_[A-Za-z0-9]{20,}\b/g,
  // GitHub tokens: ghp_, gho_, ghs_ (installation/job), ghu_, ghr_
  /\bgithub_pat_[A-Za-z0-9_]{20,}\b/g,
  /\bsk-ant-[A-Za-z0-9_-]{8,}\b/g,
  // Anthropic keys
  /\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}\b/g,
  // OpenAI keys
  // Basic auth of a token nobody registered: base64 of `x-access-token:` (15 bytes, so it always
  // encodes to these 20 characters) and of the token after it.
  /eC1hY2Nlc3MtdG9rZW46[A-Za-z0-9+/]{8,}={0,2}/g,
  // A key runs to its END line, never past the next BEGIN: one scan per key, whatever the text.
  /-----BEGIN [A-Z ]*PRIVATE KEY-----(?:(?!-----BEGIN )[\s\S])*?-----END [A-Z ]*PRIVATE KEY-----/g
];
var MASK = "***";
var Masker = class {
  #values = /* @__PURE__ */ new Set();
  #pattern = null;
  /** Registers a secret value. Values shorter than 4 characters are ignored (masking them would destroy logs). */
  add(value) {
    if (!value || value.length < 4) return this;
    for (const v of [value, ...value.split(/\r?\n/).filter((l) => l.length >= 4)]) this.#values.add(v);
    this.#values.add(Buffer.from(value, "utf8").toString("base64"));
    this.#values.add(Buffer.from(`x-access-token:${value}`, "utf8").toString("base64"));
    this.#pattern = null;
    return this;
  }
  /** Registers the value of every variable whose name says it is a secret (`*TOKEN*`, `*KEY*`, …). */
  addFromEnv(env) {
    for (const [name, value] of Object.entries(env)) if (isSecretName(name) && value) this.add(value);
    return this;
  }
  get size() {
    return this.#values.size;
  }
  values() {
    return [...this.#values];
  }
  mask(text) {
    if (!text) return text;
    let out = text;
    if (this.#values.size > 0) {
      this.#pattern ??= new RegExp(
        [...this.#values].sort((a, b) => b.length - a.length).map(escapeRegExp).join("|"),
        "g"
      );
      out = out.replace(this.#pattern, MASK);
    }
    for (const shape of TOKEN_SHAPES) out = out.replace(shape, MASK);
    return out;
  }
  /** `mask` over every string in a JSON-like value (objects and arrays copied, other values kept). */
  maskDeep(value) {
    if (typeof value === "string") return this.mask(value);
    if (Array.isArray(value)) return value.map((v) => this.maskDeep(v));
    if (value && typeof value === "object")
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [this.mask(k), this.maskDeep(v)]));
    return value;
  }
  /**
   * Inside GitHub Actions, tells the runner to mask the values in its log too (`::add-mask::`).
   * `@actions/core` is imported only there; it is ESM-only since version 3.
   */
  async registerWithActions(env = process.env) {
    if (env.GITHUB_ACTIONS !== "true") return false;
    const core = await import("./core-MOUI6STT.js");
    for (const v of this.#values) core.setSecret(v);
    return true;
  }
};
function isSecretName(name) {
  return SECRET_NAME.test(name);
}
function escapeRegExp(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
var INVISIBLE = (
  // eslint-disable-next-line no-misleading-character-class -- removing these characters one by one is the point
  /[\u00AD\u034F\u061C\u115F\u1160\u17B4\u17B5\u180B-\u180F\u200B-\u200F\u202A-\u202E\u2060-\u206F\u3164\uFE00-\uFE0F\uFEFF\uFFA0\uFFF0-\uFFFB]|\uDB40[\uDC00-\uDFFF]/g
);
var CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/g;
var INJECTION_MARKERS = [
  /\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+)?(?:the\s+)?(?:previous|prior|above|earlier|preceding|system)\s+(?:instructions?|prompts?|messages?|rules?|context)\b/gi,
  /\byou\s+are\s+now\s+(?:a|an|the|in)\b/gi,
  /\bnew\s+(?:system\s+)?instructions?\s*:/gi,
  /\b(?:developer|jailbreak|DAN)\s+mode\b/gi
];
var ROLE_TAGS = /<\/?\s*(?:system|assistant|user|human|instructions?|tool_result|function_results?)\s*>|<\|[a-z_]+\|>|\[\/?INST\]|<<\/?SYS>>/gi;
var ROLE_LINES = /^([ \t]*)(system|assistant|human)[ \t]*:/gim;
var ATTRS = String.raw`(?:\s+[^\s"'<>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>` + "`" + String.raw`]+))?)*`;
var OPEN_TAG = new RegExp(String.raw`<([a-z][a-z0-9-]*)(${ATTRS})\s*/?>`, "gi");
var CLOSE_TAG = /<\/([a-z][a-z0-9-]*)\s*>/gi;
var ANY_TAG = new RegExp(String.raw`</?[a-z][a-z0-9-]*${ATTRS}\s*/?>`, "gi");
var DETAILS_TAG = new RegExp(String.raw`</?(?:details|summary)${ATTRS}\s*/?>`, "gi");
var UNDISPLAYED = /* @__PURE__ */ new Set(["script", "style", "template", "noscript"]);
var HIDDEN_ATTR = /\bhidden|style\s*=\s*["'][^"']*display\s*:\s*none/i;
function removeElements(s, drop) {
  const closes = /* @__PURE__ */ new Map();
  for (const m of s.matchAll(CLOSE_TAG)) {
    const name = m[1].toLowerCase();
    let list = closes.get(name);
    if (!list) closes.set(name, list = []);
    list.push({ at: m.index, end: m.index + m[0].length });
  }
  const closeAfter = (name, from) => {
    const list = closes.get(name);
    if (!list) return void 0;
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = lo + hi >> 1;
      if (list[mid].at < from) lo = mid + 1;
      else hi = mid;
    }
    return list[lo];
  };
  const open2 = new RegExp(OPEN_TAG.source, OPEN_TAG.flags);
  let out = "";
  let kept = 0;
  for (let m = open2.exec(s); m; m = open2.exec(s)) {
    const name = m[1].toLowerCase();
    const close = drop(name, m[2]) ? closeAfter(name, m.index + m[0].length) : void 0;
    if (!close) {
      open2.lastIndex = m.index + 1;
      continue;
    }
    out += s.slice(kept, m.index);
    kept = close.end;
    open2.lastIndex = close.end;
  }
  return kept === 0 ? s : out + s.slice(kept);
}
var READ_FACTOR = 4;
function sanitizeUntrusted(text, options = {}) {
  const max = options.maxLength ?? 2e4;
  const read = Math.max(max * READ_FACTOR, 1e3);
  let s = text.length > read ? text.slice(0, read) : text;
  s = s.normalize("NFKC");
  if (s.length > read) s = s.slice(0, read);
  const cutEarly = text.length > read;
  s = s.replace(INVISIBLE, "").replace(CONTROL, "");
  s = s.replace(/<!--[\s\S]*?(?:-->|$)/g, "");
  s = removeElements(s, (name) => UNDISPLAYED.has(name));
  s = removeElements(s, (_name, attrs) => HIDDEN_ATTR.test(attrs));
  s = s.replace(DETAILS_TAG, "");
  s = s.replace(
    /!\[([^[\]]*)\]\(([^()\s]*)(?:\s+"[^"]*")?\)/g,
    (_m, alt, url) => `[image: ${alt.trim() || "untitled"}] (${url})`
  );
  s = s.replace(/\]\(([^()\s]+)\s+"[^"]*"\)/g, "]($1)");
  s = s.replace(/^[ \t]{0,3}\[[^[\]\n]+\]:[ \t]*(?:\n[ \t]*)?\S+(?:[ \t]+(?:"[^"\n]*"|'[^'\n]*'|\([^)\n]*\)))?[ \t]*$/gm, "");
  s = s.replace(ANY_TAG, "");
  s = s.replace(ROLE_TAGS, (m) => `[removed tag ${m.replace(/[<>|]/g, "")}]`);
  s = s.replace(ROLE_LINES, (_m, indent, role) => `${indent}(quoted) ${role}:`);
  for (const marker of INJECTION_MARKERS) s = s.replace(marker, (m) => `[quoted text: "${m}"]`);
  s = s.replace(/(?<![ \t])[ \t]+$/gm, "").replace(/\n{3,}/g, "\n\n").trim();
  if (s.length > max || cutEarly) s = `${s.slice(0, max)}
[\u2026 cut at ${max} characters]`;
  return s;
}
function quoteUntrusted(label, text) {
  const clean = sanitizeUntrusted(text);
  return [`<untrusted-text source="${label.replace(/["<>]/g, "")}">`, clean.replaceAll("</untrusted-text>", ""), `</untrusted-text>`].join(
    "\n"
  );
}

// src/agent/env.ts
var BASE_NAMES = /* @__PURE__ */ new Set([
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "LANG",
  "LANGUAGE",
  "TZ",
  "TERM",
  "TMPDIR",
  "TEMP",
  "TMP",
  "CI",
  "NODE_EXTRA_CA_CERTS",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "http_proxy",
  "https_proxy",
  "no_proxy",
  "GIT_AUTHOR_NAME",
  "GIT_AUTHOR_EMAIL",
  "GIT_COMMITTER_NAME",
  "GIT_COMMITTER_EMAIL"
]);
var BASE_PREFIXES = ["LC_", "XDG_"];
var FORBIDDEN = /^(GITHUB_TOKEN|GH_TOKEN|COPILOT_GITHUB_TOKEN|GH_ENTERPRISE_TOKEN|GITHUB_ENTERPRISE_TOKEN|ACTIONS_RUNTIME_TOKEN|ACTIONS_ID_TOKEN_REQUEST_TOKEN|ACTIONS_ID_TOKEN_REQUEST_URL|ACTIONS_CACHE_URL|ACTIONS_RESULTS_URL|ACTIONS_RUNTIME_URL|INPUT_.*|FORGE_APP_.*|PRIVATE_KEY|WEBHOOK_SECRET|APP_ID)$/;
function isForbiddenEnvName(name) {
  return FORBIDDEN.test(name);
}
function pickEnv(parent, patterns = []) {
  const exact = new Set(patterns.filter((p) => !p.endsWith("*")));
  const prefixes = [...BASE_PREFIXES, ...patterns.filter((p) => p.endsWith("*")).map((p) => p.slice(0, -1))];
  const out = {};
  for (const [name, value] of Object.entries(parent)) {
    if (value === void 0 || isForbiddenEnvName(name)) continue;
    if (BASE_NAMES.has(name) || exact.has(name) || prefixes.some((p) => name.startsWith(p))) out[name] = value;
  }
  return out;
}

// src/agent/isolation.ts
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { access, chmod, open, readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
var execP = promisify(execFile);
var SYSTEM_PATH = [process.env.PATH ?? "", "/usr/local/sbin", "/usr/sbin", "/sbin", "/usr/bin", "/bin"].filter(Boolean).join(":");
var exec = (cmd, args, o = { encoding: "utf8" }) => execP(cmd, args, { ...o, env: { ...process.env, PATH: SYSTEM_PATH } });
var AGENT_USER_PREFIX = "forge-agent-";
var AGENT_USER_NAME = /^forge-agent-[0-9a-f]{8}$/;
var IsolationError = class extends Error {
};
async function privileged(via, command, args) {
  const [cmd, argv] = via === "root" ? [command, args] : ["sudo", ["-n", "--", command, ...args]];
  return (await exec(cmd, argv)).stdout;
}
async function canSudo() {
  try {
    await exec("sudo", ["-n", "true"]);
    return true;
  } catch {
    return false;
  }
}
async function prepareAgentUser(mode, warn) {
  if (mode === "none") return void 0;
  const uid = process.getuid?.();
  const via = uid === 0 ? "root" : await canSudo() ? "sudo" : void 0;
  if (!via) {
    const why = "the agent cannot run as its own user here: that needs root or passwordless sudo (GitHub's hosted runners have it), so it runs as the runner's user and could read the job's token from the runner's processes";
    if (mode === "user") throw new IsolationError(`agent.isolation is 'user', but ${why}. Set agent.isolation: none to accept that.`);
    warn(`${why}. Set agent.isolation: none in .github/forge.yml to silence this warning.`);
    return void 0;
  }
  try {
    await exec("setpriv", ["--version"]);
    const user = await createUser(via);
    const id = async (flag) => Number((await exec("id", [flag, user])).stdout.trim());
    const [agentUid, agentGid] = [await id("-u"), await id("-g")];
    if (!(agentUid > 0) || agentUid === uid) throw new Error(`${user} has uid ${agentUid}`);
    return { user, uid: agentUid, gid: agentGid, via, owner: { uid: uid ?? 0, gid: process.getgid?.() ?? 0 }, changedModes: /* @__PURE__ */ new Map() };
  } catch (err) {
    const why = `the agent's own user could not be prepared (${err instanceof Error ? err.message.split("\n")[0] : String(err)}): useradd and setpriv (Debian's passwd and util-linux) are needed`;
    if (mode === "user") throw new IsolationError(`agent.isolation is 'user', but ${why}.`);
    warn(`${why}; the agent runs as the runner's user.`);
    return void 0;
  }
}
async function createUser(via) {
  for (let i = 0; ; i++) {
    const user = `${AGENT_USER_PREFIX}${randomBytes(4).toString("hex")}`;
    try {
      await privileged(via, "useradd", ["--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin", user]);
      return user;
    } catch (err) {
      if (i >= 5 || err.code === "ENOENT") throw err;
      await pause(50 + Math.random() * 200 * (i + 1));
    }
  }
}
var pause = (ms) => new Promise((r) => setTimeout(r, ms));
function asAgentUser(u, command, args, env) {
  const setpriv = ["--reuid", String(u.uid), "--regid", String(u.gid), "--clear-groups", "--no-new-privs", "--", command, ...args];
  if (u.via === "root") return { command: "setpriv", args: setpriv };
  return { command: "sudo", args: ["-n", "-E", "--", "env", `PATH=${env.PATH ?? ""}`, "setpriv", ...setpriv] };
}
var INTERPRETERS = /* @__PURE__ */ new Set(["node", "nodejs", "sh", "bash", "dash", "python", "python3", "perl", "ruby", "tsx", "deno", "bun"]);
async function resolveCommand(command, PATH) {
  if (command.includes("/")) return path.resolve(command);
  for (const dir of (PATH ?? "").split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(dir, command);
    if (await access(candidate).then(
      () => true,
      () => false
    ))
      return candidate;
  }
  return void 0;
}
async function firstBytes(file, n) {
  const fh = await open(file, "r").catch(() => void 0);
  if (!fh) return "";
  try {
    const { buffer, bytesRead } = await fh.read(Buffer.alloc(n), 0, n, 0);
    return buffer.subarray(0, bytesRead).toString();
  } catch {
    return "";
  } finally {
    await fh.close();
  }
}
async function agentPasses(u, flag, file) {
  const { command, args } = asAgentUser(u, "test", [flag, file], { PATH: SYSTEM_PATH });
  return execP(command, args, { env: { ...process.env, PATH: SYSTEM_PATH } }).then(
    () => true,
    () => false
  );
}
async function closedFolder(file) {
  const chain = [];
  for (let a = path.dirname(file); a !== path.dirname(a); a = path.dirname(a)) chain.unshift(a);
  for (const dir of chain) {
    const s = await stat(dir).catch(() => void 0);
    if (s && (s.mode & 1) === 0) return `${dir} has mode ${(s.mode & 4095).toString(8).padStart(4, "0")}`;
  }
  return void 0;
}
async function unreachableCommand(u, command, args, env) {
  const resolved = await resolveCommand(command, env.PATH);
  if (!resolved) return void 0;
  const checks = [["-x", resolved]];
  if (await firstBytes(resolved, 2) === "#!") checks.push(["-r", resolved]);
  if (INTERPRETERS.has(path.basename(resolved))) {
    const program = args.find((a) => !a.startsWith("-"));
    if (program && await stat(path.resolve(program)).then(
      (s) => s.isFile(),
      () => false
    ))
      checks.push(["-r", path.resolve(program)]);
  }
  for (const [flag, file] of checks) {
    if (await agentPasses(u, flag, file)) continue;
    const folder = await closedFolder(file);
    return `the agent's command ${file} cannot be ${flag === "-x" ? "run" : "read"} by the agent's own OS user ${u.user} (agent.isolation runs every agent session as that user)${folder ? `: ${folder}` : ""}. Install the agent where every user can read it (chmod o+rx on its folders), or set agent.isolation: none in .github/forge.yml.`;
  }
  return void 0;
}
async function signalAgentGroup(u, pgid, signal) {
  if (u.via === "root") {
    process.kill(-pgid, signal);
    return;
  }
  await privileged(u.via, "kill", [`-${signal.replace(/^SIG/, "")}`, "--", `-${pgid}`]).catch(() => void 0);
}
async function handOver(u, dirs) {
  const unique = [...new Set(dirs.map((d) => path.resolve(d)))];
  for (const dir of unique) {
    for (let a = path.dirname(dir); a !== path.dirname(a); a = path.dirname(a)) {
      const s = await stat(a).catch(() => void 0);
      if (!s || s.uid !== u.owner.uid || (s.mode & 1) !== 0) continue;
      const changed = await chmod(a, s.mode | 1).then(
        () => true,
        () => false
      );
      if (changed && !u.changedModes.has(a)) u.changedModes.set(a, s.mode & 4095);
    }
  }
  if (unique.length) await privileged(u.via, "chown", ["-R", `${u.uid}:${u.gid}`, "--", ...unique]);
}
async function takeBack(u, dirs) {
  const unique = [...new Set(dirs.map((d) => path.resolve(d)))];
  if (unique.length) await privileged(u.via, "chown", ["-R", `${u.owner.uid}:${u.owner.gid}`, "--", ...unique]);
}
async function agentProcesses(uid) {
  const out = [];
  for (const name of await readdir("/proc").catch(() => [])) {
    if (!/^\d+$/.test(name)) continue;
    const status = await readFile(`/proc/${name}/status`, "utf8").catch(() => "");
    const ids = /^Uid:\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)/m.exec(status);
    const state = /^State:\s+(\S)/m.exec(status)?.[1];
    if (ids && ids.slice(1).map(Number).includes(uid) && state !== "Z" && state !== "X") out.push(Number(name));
  }
  return out;
}
async function killAgentProcesses(u, tries = 20) {
  if (!(u.uid > 0) || u.uid === u.owner.uid) throw new IsolationError(`refusing to kill every process of uid ${u.uid}`);
  const env = { PATH: SYSTEM_PATH };
  const kill = asAgentUser(u, "sh", ["-c", `[ "$(id -u)" = "${u.uid}" ] || exit 97; kill -s KILL -- -1 2>/dev/null; exit 0`], env);
  let left = await agentProcesses(u.uid);
  for (let i = 0; left.length > 0 && i < tries; i++) {
    await execP(kill.command, kill.args, { env }).catch(() => void 0);
    await pause(10 * (i + 1));
    left = await agentProcesses(u.uid);
  }
  return left;
}
async function releaseAgentUser(u) {
  const problems = [];
  const left = await killAgentProcesses(u).catch((err) => [String(err)]);
  if (left.length) problems.push(`processes of ${u.user} still alive: ${left.join(", ")}`);
  for (const [dir, mode] of u.changedModes) {
    await chmod(dir, mode).catch((err) => problems.push(`mode of ${dir} not restored: ${String(err)}`));
  }
  u.changedModes.clear();
  for (const dir of ["/tmp", "/var/tmp", "/dev/shm"]) {
    await privileged(u.via, "find", [dir, "-xdev", "-mindepth", "1", "-uid", String(u.uid), "-delete"]).catch(() => void 0);
  }
  for (let i = 0; AGENT_USER_NAME.test(u.user); i++) {
    const err = await privileged(u.via, "userdel", [u.user]).then(
      () => void 0,
      (e) => e
    );
    if (err === void 0) break;
    if (i < 5) {
      await pause(50 + Math.random() * 200 * (i + 1));
      continue;
    }
    problems.push(`${u.user} not removed: ${err instanceof Error ? err.message.split("\n")[0] : String(err)}`);
    break;
  }
  return problems;
}

// src/agent/agent-files.ts
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readlinkSync,
  readSync,
  realpathSync,
  unlinkSync,
  writeSync
} from "node:fs";
import path2 from "node:path";
var AgentFileRefusedError = class extends Error {
  constructor(file, reason) {
    super(`refused to read ${file}: ${reason}`);
    this.file = file;
    this.reason = reason;
    this.name = "AgentFileRefusedError";
  }
  file;
  reason;
};
var DEFAULT_MAX_BYTES = 64 * 1024 * 1024;
var OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | (constants.O_NOCTTY ?? 0);
function code(err) {
  return err?.code;
}
function inside(root, file) {
  const rel = path2.relative(path2.resolve(root), path2.resolve(root, file));
  if (rel === "" || rel === ".." || rel.startsWith(`..${path2.sep}`) || path2.isAbsolute(rel))
    throw new AgentFileRefusedError(file, `it is not inside ${root}`);
  return rel;
}
function walkDirs(root, rel, file) {
  let dir = path2.resolve(root);
  for (const part of rel.split(path2.sep).slice(0, -1)) {
    dir = path2.join(dir, part);
    let st;
    try {
      st = lstatSync(dir);
    } catch (err) {
      if (code(err) === "ENOENT") return false;
      throw err;
    }
    if (st.isSymbolicLink()) throw new AgentFileRefusedError(file, `${path2.relative(root, dir)} is a symbolic link`);
    if (!st.isDirectory()) return false;
  }
  return true;
}
function openedPath(fd) {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return void 0;
  }
}
function readAgentFileSync(root, file, opts = {}) {
  const rel = inside(root, file);
  let rootReal;
  try {
    if (lstatSync(root).isSymbolicLink()) throw new AgentFileRefusedError(file, `${root} is a symbolic link`);
    rootReal = realpathSync(root);
  } catch (err) {
    if (code(err) === "ENOENT") return void 0;
    throw err;
  }
  if (!walkDirs(root, rel, file)) return void 0;
  let fd;
  try {
    fd = openSync(path2.join(path2.resolve(root), rel), OPEN_FLAGS);
  } catch (err) {
    const c = code(err);
    if (c === "ENOENT" || c === "ENOTDIR") return void 0;
    if (c === "ELOOP" || c === "EMLINK") throw new AgentFileRefusedError(file, "it is a symbolic link");
    throw err;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new AgentFileRefusedError(file, "it is not a regular file");
    const real = openedPath(fd);
    if (real !== void 0 && real !== path2.join(rootReal, rel))
      throw new AgentFileRefusedError(file, `it resolves to ${real}, outside ${root}`);
    const max = opts.maxBytes ?? DEFAULT_MAX_BYTES;
    if (st.size > max) throw new AgentFileRefusedError(file, `it is larger than ${max} bytes`);
    const buf = Buffer.alloc(st.size);
    let off = 0;
    while (off < buf.length) {
      const n = readSync(fd, buf, off, buf.length - off, off);
      if (n === 0) break;
      off += n;
    }
    return buf.subarray(0, off);
  } finally {
    closeSync(fd);
  }
}
function assertNoLinks(root, dir) {
  const rel = inside(root, path2.join(dir, "x"));
  walkDirs(root, rel, dir);
}
function findLinks(dir, prefix = "") {
  const out = [];
  let entries;
  try {
    entries = readdirSync(path2.join(dir, prefix), { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isSymbolicLink()) out.push(rel);
    else if (e.isDirectory()) out.push(...findLinks(dir, rel));
  }
  return out;
}
async function writeInAgentFolder(root, file, data) {
  const rel = inside(root, file);
  let dir = path2.resolve(root);
  for (const part of rel.split(path2.sep).slice(0, -1)) {
    dir = path2.join(dir, part);
    const st = lstatSync(dir, { throwIfNoEntry: false });
    if (!st) mkdirSync(dir);
    else if (st.isSymbolicLink() || !st.isDirectory()) throw new AgentFileRefusedError(file, `${path2.relative(root, dir)} is not a folder`);
  }
  const target = path2.join(path2.resolve(root), rel);
  if (lstatSync(target, { throwIfNoEntry: false })?.isSymbolicLink()) unlinkSync(target);
  const fd = openSync(target, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 420);
  try {
    const buf = typeof data === "string" ? Buffer.from(data, "utf8") : data;
    for (let off = 0; off < buf.length; ) off += writeSync(fd, buf, off, buf.length - off);
  } finally {
    closeSync(fd);
  }
}
async function readAgentFile(root, file, opts = {}) {
  return readAgentFileSync(root, file, opts);
}
async function readAgentText(root, file, warn, opts = {}) {
  try {
    return (await readAgentFile(root, file, opts))?.toString("utf8");
  } catch (err) {
    if (err instanceof AgentFileRefusedError) warn?.(`${err.message}; treated as absent`);
    return void 0;
  }
}

// src/core/git-error.ts
var GitError = class extends Error {
  constructor(message, args, code2, stderr) {
    super(message);
    this.args = args;
    this.code = code2;
    this.stderr = stderr;
    this.name = "GitError";
  }
  args;
  code;
  stderr;
};
var REFUSED = [
  /\[(?:remote )?rejected\]/,
  /non-fast-forward|\(fetch first\)|stale info|updates were rejected/i,
  /\bGH0\d\d\b|rule violations|protected branch|hook declined/i,
  /returned error: 40[134]\b|\bHTTP 40[134]\b/,
  /authentication failed|invalid username or token|permission to \S+ denied|write access to repository not granted/i,
  /repository not found|couldn't find remote ref|not our ref|no such ref/i
];
var TRANSIENT = [
  /returned error: (?:5\d\d|408|429)\b|\bHTTP (?:5\d\d|408|429)\b/,
  /the remote end hung up|unexpected disconnect|early EOF|transfer closed with outstanding read data/i,
  /connection (?:reset|refused|timed out)|timed out|operation too slow|empty reply from server/i,
  /could not resolve (?:host|proxy)|failed to connect to|recv failure|send failure|network is unreachable/i,
  /gnutls_handshake|SSL_read|SSL_ERROR|TLS connection was non-properly terminated/i
];
function gitFailureKind(stderr) {
  const text = stderr.slice(0, 65536);
  if (REFUSED.some((r) => r.test(text))) return "refused";
  if (TRANSIENT.some((r) => r.test(text))) return "transient";
  return "other";
}

// src/agent/prompts.ts
import { existsSync } from "node:fs";
import { readFile as readFile2 } from "node:fs/promises";
import path3 from "node:path";
import { fileURLToPath } from "node:url";
var REPO_PROMPT_DIR = ".forge/prompts";
function builtinPromptDir(env = process.env) {
  const candidates = [
    env.FORGE_PROMPTS_DIR,
    fileURLToPath(new URL("./prompts/", import.meta.url)),
    fileURLToPath(new URL("../../src/agent/prompts/", import.meta.url))
  ].filter((d) => Boolean(d));
  return candidates.find((d) => existsSync(path3.join(d, "1.md"))) ?? candidates[candidates.length - 1];
}
var PromptNotFoundError = class extends Error {
  constructor(kind, searched) {
    super(`no system prompt for agent kind '${kind}' (looked in ${searched.join(", ")})`);
    this.kind = kind;
    this.searched = searched;
    this.name = "PromptNotFoundError";
  }
  kind;
  searched;
};
async function loadSystemPrompt(kind, options = {}) {
  const searched = [];
  if (options.repoDir) {
    const file2 = path3.join(options.repoDir, REPO_PROMPT_DIR, `${kind}.md`);
    searched.push(file2);
    const text2 = await readAgentText(options.repoDir, file2);
    if (text2 !== void 0 && text2.trim() !== "") return { kind, text: text2, source: "repository", path: file2 };
  }
  const file = path3.join(options.builtinDir ?? builtinPromptDir(), `${kind}.md`);
  searched.push(file);
  const text = await readFile2(file, "utf8").catch(() => void 0);
  if (text === void 0) throw new PromptNotFoundError(kind, searched);
  return { kind, text, source: "builtin", path: file };
}

// src/agent/types.ts
var ADAPTER_NAMES = ["claude", "codex", "gemini", "opencode", "qwen", "copilot", "command"];
var AGENT_KINDS = [
  "1",
  "2",
  "3",
  "refinery",
  "captain",
  "sentinel",
  "sentinel-writer",
  "sentinel-executor",
  "sentinel-auditor",
  "sentinel-consolidator"
];
function isAgentKind(value) {
  return typeof value === "string" && AGENT_KINDS.includes(value);
}

// src/agent/spawn/collect.ts
import path6 from "node:path";

// src/agent/rate-limit.ts
var USAGE_LIMIT = /usage limit (?:reached|exceeded|hit)|(?:you(?:'|’)ve|you have) (?:hit|reached) your (?:usage |weekly |daily )?limit|\b(?:5-hour|weekly|daily|session|opus|sonnet) limit reached|out of (?:extra )?usage|quota exceeded|insufficient_quota|exceeded your current quota|exhausted your (?:daily )?quota/i;
var OVERLOADED = /\boverloaded(?:_error)?\b|\b529\b/i;
var RATE_LIMIT = /\b429\b|rate[ _-]?limit(?:ed|_error)?|too many requests|resource has been exhausted|RESOURCE_EXHAUSTED/i;
var DAILY_QUOTA = /\bdaily quota\b|PerDay|\bper day\b/i;
var RESETS_AT = /\bresets?\s+(?:at\s+|on\s+)?(?:(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+(\d{1,2}),?\s+(?:at\s+)?)?(\d{1,2})(?::(\d{2}))?\s*(am|pm)?\s*(?:\(\s*([A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*)\s*\))?/i;
var MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
var EPOCH_RESET = /usage limit reached\|(\d{10,13})/i;
var TRY_AGAIN_IN = /\b(?:try again|retry|resets?)\s+(?:in|after)\s+(\d+(?:\.\d+)?)\s*(s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?)\b/i;
function detectRateLimit(text, options = {}) {
  const now = options.now ?? /* @__PURE__ */ new Date();
  let kind = null;
  if (USAGE_LIMIT.test(text)) kind = "usage_limit";
  else if (options.status === 529 || OVERLOADED.test(text)) kind = "overloaded";
  else if (options.status === 429 || RATE_LIMIT.test(text)) kind = "rate_limit";
  if (!kind) return null;
  const info = { kind, message: lineMatching(text, [USAGE_LIMIT, OVERLOADED, RATE_LIMIT]) };
  const resetAt = parseResetTime(text, now) ?? (options.retryAfter ? retryAfterToDate(options.retryAfter, now) : void 0) ?? (kind === "usage_limit" && DAILY_QUOTA.test(text) ? nextWallClockTime(0, 0, "America/Los_Angeles", now) : void 0);
  if (resetAt) info.resetAt = resetAt;
  return info;
}
function lineMatching(text, patterns) {
  const lines = text.split(/\r?\n/);
  const line = lines.find((l) => patterns.some((p) => p.test(l))) ?? lines[0] ?? "";
  return line.trim().slice(0, 300);
}
function parseResetTime(text, now = /* @__PURE__ */ new Date()) {
  const epoch = EPOCH_RESET.exec(text);
  if (epoch) {
    const n = Number(epoch[1]);
    return new Date(n > 1e12 ? n : n * 1e3);
  }
  const at = RESETS_AT.exec(text);
  if (at && (at[1] !== void 0 || at[4] !== void 0 || at[5] !== void 0 || at[6] !== void 0)) {
    let hour = Number(at[3]);
    const minute = at[4] ? Number(at[4]) : 0;
    const meridiem = at[5]?.toLowerCase();
    if (meridiem === "pm" && hour < 12) hour += 12;
    if (meridiem === "am" && hour === 12) hour = 0;
    const zone = at[6] && isValidTimeZone(at[6]) ? at[6] : "UTC";
    if (hour <= 23 && minute <= 59) {
      if (at[1] === void 0) return nextWallClockTime(hour, minute, zone, now);
      const month = MONTHS.indexOf(at[1].toLowerCase()) + 1;
      const day = Number(at[2]);
      const year = wallClock(now.getTime(), zone).year;
      const thisYear = zonedTimeToUtc(year, month, day, hour, minute, zone);
      return thisYear.getTime() > now.getTime() - 864e5 ? thisYear : zonedTimeToUtc(year + 1, month, day, hour, minute, zone);
    }
  }
  const inN = TRY_AGAIN_IN.exec(text);
  if (inN) {
    const n = Number(inN[1]);
    const unit = inN[2].toLowerCase();
    const ms = unit.startsWith("h") ? n * 36e5 : unit.startsWith("m") ? n * 6e4 : n * 1e3;
    return new Date(now.getTime() + ms);
  }
  return void 0;
}
function parseRetryAfter(value, now = /* @__PURE__ */ new Date()) {
  const v = value.trim();
  if (/^\d+(?:\.\d+)?$/.test(v)) return Math.round(Number(v) * 1e3);
  const t = Date.parse(v);
  if (Number.isNaN(t)) return void 0;
  return Math.max(0, t - now.getTime());
}
function retryAfterToDate(value, now) {
  const ms = parseRetryAfter(value, now);
  return ms === void 0 ? void 0 : new Date(now.getTime() + ms);
}
var formatters = /* @__PURE__ */ new Map();
function formatterFor(zone) {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric"
    });
    formatters.set(zone, f);
  }
  return f;
}
function isValidTimeZone(zone) {
  try {
    formatterFor(zone);
    return true;
  } catch {
    return false;
  }
}
function wallClock(t, zone) {
  const parts = Object.fromEntries(
    formatterFor(zone).formatToParts(new Date(t)).map((p) => [p.type, p.value])
  );
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    hour: Number(parts.hour),
    minute: Number(parts.minute),
    second: Number(parts.second)
  };
}
function zoneOffsetMs(t, zone) {
  const w = wallClock(t, zone);
  const asUtc = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
  return asUtc - Math.floor(t / 1e3) * 1e3;
}
function zonedTimeToUtc(year, month, day, hour, minute, zone) {
  const guess = Date.UTC(year, month - 1, day, hour, minute);
  const first = guess - zoneOffsetMs(guess, zone);
  const second = guess - zoneOffsetMs(first, zone);
  return new Date(second);
}
function nextWallClockTime(hour, minute, zone, now) {
  const z = isValidTimeZone(zone) ? zone : "UTC";
  const today = wallClock(now.getTime(), z);
  for (let addDays = 0; addDays < 3; addDays++) {
    const candidate = zonedTimeToUtc(today.year, today.month, today.day + addDays, hour, minute, z);
    if (candidate.getTime() > now.getTime()) return candidate;
  }
  return zonedTimeToUtc(today.year, today.month, today.day + 1, hour, minute, z);
}
function backoffDelay(attempt, options = {}) {
  const base = options.baseMs ?? 5e3;
  const max = options.maxMs ?? 3e5;
  const exp = Math.min(base * 2 ** attempt, max);
  const jitter = (options.random ?? Math.random)() * exp * 0.5;
  return Math.round(Math.min(exp + jitter, max * 1.5));
}
function planRateLimitWait(info, options) {
  const now = options.now.getTime();
  const random = options.random ?? Math.random;
  let until;
  if (info.resetAt) until = Math.max(now, info.resetAt.getTime()) + Math.round(random() * 5e3);
  else if (info.kind === "usage_limit") until = now + (options.unknownUsageLimitMs ?? 36e5);
  else until = now + backoffDelay(options.attempt, options);
  const untilDate = new Date(until);
  if (options.attempt >= (options.maxRetries ?? 5) || until > options.deadline) return { action: "give_up", until: untilDate };
  return { action: "wait", ms: until - now, until: untilDate };
}

// src/agent/spawn/context.ts
import { createWriteStream, existsSync as existsSync2 } from "node:fs";
import { mkdir as mkdir2 } from "node:fs/promises";
import path5 from "node:path";

// src/agent/depth.ts
import { randomBytes as randomBytes2 } from "node:crypto";
var ENV = {
  depth: "FORGE_SPAWN_DEPTH",
  maxDepth: "FORGE_MAX_DEPTH",
  trace: "FORGE_TRACE_ID",
  agentType: "FORGE_AGENT_TYPE"
};
var DEFAULT_MAX_DEPTH = 3;
var TRACE = /^[0-9a-f]{16}$/;
function newTraceId() {
  return randomBytes2(8).toString("hex");
}
function traceIdFrom(env) {
  const v = env[ENV.trace]?.trim().toLowerCase();
  return v && TRACE.test(v) ? v : newTraceId();
}
function currentDepth(env) {
  const n = Number.parseInt(env[ENV.depth] ?? "", 10);
  return Number.isFinite(n) && n >= 0 ? n : 0;
}
function effectiveMaxDepth(requested, env) {
  const wanted = requested ?? DEFAULT_MAX_DEPTH;
  const inherited = Number.parseInt(env[ENV.maxDepth] ?? "", 10);
  return Number.isFinite(inherited) && inherited >= 0 ? Math.min(wanted, inherited) : wanted;
}
function checkDepth(env, requestedMax) {
  const depth = currentDepth(env) + 1;
  const maxDepth = effectiveMaxDepth(requestedMax, env);
  return { depth, maxDepth, ok: depth <= maxDepth, remaining: Math.max(0, maxDepth - depth) };
}

// src/agent/signals.ts
var import_yaml = __toESM(require_dist(), 1);
import { randomBytes as randomBytes3 } from "node:crypto";
import { mkdir, rename, stat as stat2, writeFile } from "node:fs/promises";
import path4 from "node:path";
var STATUS_WORD = { done: "success", fail: "fail", refine: "needs-refinement" };
function signalSlug(name) {
  return name.toLowerCase().replace(/[^a-z0-9._-]+/g, "-").replace(/^-+|-+$/g, "") || "unnamed";
}
function signalPath(sessionDir, layer, name, status) {
  return path4.join(sessionDir, ".signals", `${layer}-${signalSlug(name)}.${status}`);
}
async function writeFileAtomic(file, content) {
  await mkdir(path4.dirname(file), { recursive: true });
  const tmp = path4.join(path4.dirname(file), `.${path4.basename(file)}.tmp.${process.pid}.${randomBytes3(3).toString("hex")}`);
  await writeFile(tmp, content, { encoding: "utf8", flag: "wx" });
  await rename(tmp, file);
}
async function writeSignal(input) {
  const file = signalPath(input.sessionDir, input.layer, input.name, input.status);
  let size = 0;
  if (input.artifactPath)
    size = await stat2(input.artifactPath).then(
      (s) => s.size,
      () => 0
    );
  const doc = {
    path: input.artifactPath ?? null,
    size,
    status: STATUS_WORD[input.status],
    created_at: input.createdAt.toISOString(),
    completed_at: input.completedAt.toISOString(),
    trace_id: input.traceId,
    layer: input.layer,
    name: input.name,
    elapsed_seconds: Math.round((input.completedAt.getTime() - input.createdAt.getTime()) / 10) / 100,
    version: 1,
    ...input.extra
  };
  await writeFileAtomic(file, (0, import_yaml.stringify)(doc));
  return file;
}

// src/agent/spawn/context.ts
function defaultReportPaths(sessionDir) {
  return {
    walkthrough: path5.join(sessionDir, "walkthrough.md"),
    question: path5.join(sessionDir, "question.md"),
    changeRequest: path5.join(sessionDir, "change-request.md"),
    refinement: path5.join(sessionDir, "refinement.md")
  };
}
async function openSpawn(options) {
  const parentEnv = options.env ?? process.env;
  const sessionDir = path5.resolve(options.sessionDir);
  await mkdir2(sessionDir, { recursive: true });
  const eventsPath = path5.join(sessionDir, "events.ndjson");
  const transcriptPath = path5.join(sessionDir, "transcript.log");
  const started = /* @__PURE__ */ new Date();
  const masker = options.masker ?? new Masker().addFromEnv(parentEnv);
  for (const [k, v] of Object.entries(options.extraEnv ?? {})) if (/KEY|TOKEN|SECRET|PASSWORD/i.test(k)) masker.add(v);
  const depthCheck = checkDepth(parentEnv, options.maxDepth);
  const events = createWriteStream(eventsPath, { flags: "a" });
  const transcript = createWriteStream(transcriptPath, { flags: "a" });
  events.on("error", () => void 0);
  transcript.on("error", () => void 0);
  return {
    options,
    parentEnv,
    name: options.name ?? "spawn",
    layer: options.layer ?? "exec",
    sessionDir,
    eventsPath,
    transcriptPath,
    started,
    masker,
    events,
    transcript,
    traceId: traceIdFrom(parentEnv),
    depthCheck,
    turn: 0,
    rateLimitRetries: 0
  };
}
function emit(sc, draft) {
  const event = {
    at: (/* @__PURE__ */ new Date()).toISOString(),
    kind: draft.kind,
    summary: sc.masker.mask(draft.summary),
    ...draft.tool ? { tool: draft.tool } : {},
    ...draft.costUsd !== void 0 ? { costUsd: draft.costUsd } : {},
    ...draft.tokens ? { tokens: draft.tokens } : {},
    ...sc.turn > 0 ? { turn: sc.turn } : {},
    traceId: sc.traceId,
    depth: sc.depthCheck.depth,
    name: sc.name
  };
  sc.events.write(`${JSON.stringify(event)}
`);
  try {
    sc.options.onProgress?.(event);
  } catch {
  }
}
async function finish(sc, exitCode, extra = {}, reports = {}) {
  const { options, started, depthCheck } = sc;
  const finished = /* @__PURE__ */ new Date();
  await sc.service?.close().catch(() => void 0);
  emit(sc, { kind: "exit", summary: `exit ${exitCode}${extra.error ? ` (${extra.error.code}: ${extra.error.message})` : ""}` });
  await Promise.all([closeStream(sc.events), closeStream(sc.transcript)]);
  const signalFile = await writeSignal({
    sessionDir: sc.sessionDir,
    layer: sc.layer,
    name: sc.name,
    status: signalStatusOf(exitCode),
    ...reports.walkthrough ? { artifactPath: reports.walkthrough } : existsSync2(sc.transcriptPath) ? { artifactPath: sc.transcriptPath } : {},
    traceId: sc.traceId,
    createdAt: started,
    completedAt: finished,
    extra: { exit_code: exitCode, depth: depthCheck.depth, ...extra.error ? { error_code: extra.error.code } : {} }
  }).catch(() => void 0);
  const result = {
    adapter: options.adapter,
    ...options.agentType ? { agentType: options.agentType } : {},
    sessionDir: sc.sessionDir,
    eventsPath: sc.eventsPath,
    transcriptPath: sc.transcriptPath,
    traceId: sc.traceId,
    depth: depthCheck.depth,
    maxDepth: depthCheck.maxDepth,
    exitCode,
    status: EXIT_STATUS[exitCode],
    startedAt: started.toISOString(),
    finishedAt: finished.toISOString(),
    durationMs: finished.getTime() - started.getTime(),
    rateLimitRetries: 0,
    reports,
    ...extra,
    ...signalFile ? { signalPath: signalFile } : {}
  };
  if (result.error) result.error = { code: result.error.code, message: sc.masker.mask(result.error.message) };
  if (result.result !== void 0) result.result = sc.masker.mask(result.result);
  return result;
}
function closeStream(s) {
  return new Promise((resolve) => {
    if (s.closed || s.destroyed) return resolve();
    s.end(() => resolve());
  });
}

// src/agent/spawn/collect.ts
var EXIT_MARKER = /^[ \t>*`]*FORGE_EXIT\s*[=:]\s*(\d+)\b/gm;
function explicitExitCode(text) {
  if (!text) return void 0;
  let found;
  for (const m of text.matchAll(EXIT_MARKER)) {
    const n = Number(m[1]);
    if (isExitCode(n)) found = n;
  }
  return found;
}
var INSTALL = {
  claude: "Claude Code: npm i -g @anthropic-ai/claude-code",
  codex: "Codex: npm i -g @openai/codex",
  gemini: "Gemini CLI: npm i -g @google/gemini-cli",
  opencode: "opencode: npm i -g opencode-ai",
  qwen: "Qwen Code: npm i -g @qwen-code/qwen-code",
  copilot: "GitHub Copilot CLI: npm i -g @github/copilot (its own licence; Forge does not bring it)"
};
function spawnFailure(command, err) {
  if (err.code !== "ENOENT") return `${command}: ${err.message}`;
  const install = INSTALL[path6.basename(command)];
  return `${command}: no such command (not on PATH)${install ? `; install ${install}` : ""} (${err.message})`;
}
async function collect(sc, p, run) {
  const { options } = sc;
  const { outcome, parsed, common, written } = run;
  if (outcome.spawnError) {
    return finish(
      sc,
      EXIT_CODES.FAILURE,
      { ...common, error: { code: "spawn_failed", message: spawnFailure(p.invocation.command, outcome.spawnError) } },
      written
    );
  }
  if (outcome.stopped === "aborted")
    return finish(sc, EXIT_CODES.INTERRUPTED, { ...common, error: { code: "aborted", message: "cancelled" } }, written);
  if (outcome.stopped === "timeout") {
    return finish(
      sc,
      EXIT_CODES.TIMEOUT,
      {
        ...common,
        timedOut: "wall",
        error: { code: "timeout", message: `wall-clock limit of ${Math.round((options.timeoutMs ?? 0) / 1e3)} s reached` }
      },
      written
    );
  }
  if (outcome.stopped === "idle") {
    return finish(
      sc,
      EXIT_CODES.TIMEOUT,
      {
        ...common,
        timedOut: "idle",
        error: { code: "idle_timeout", message: `no output for ${Math.round((outcome.silentMs ?? options.idleTimeoutMs ?? 0) / 1e3)} s` }
      },
      written
    );
  }
  const explicit = explicitExitCode(parsed.result);
  const exitCode = exitCodeOf(sc, run, explicit);
  if (exitCode === EXIT_CODES.FAILURE && explicit === void 0) {
    const limited = await rateLimited(sc, p, run);
    if (limited) return limited;
  }
  return finish(
    sc,
    exitCode,
    { ...common, ...exitCode !== EXIT_CODES.SUCCESS ? { error: failureOf(p, run, exitCode, explicit) } : {} },
    written
  );
}
function exitCodeOf(sc, run, explicit) {
  const { parsed, written, outcome } = run;
  if (explicit !== void 0) return explicit;
  if (sc.options.adapter === "command") return isExitCode(outcome.code) ? outcome.code : EXIT_CODES.FAILURE;
  if (!parsed.ok) return EXIT_CODES.FAILURE;
  if (written.changeRequest) return EXIT_CODES.NEEDS_ESCALATION;
  if (written.question) return EXIT_CODES.HUMAN_INPUT;
  if (written.refinement) return EXIT_CODES.NEEDS_REFINEMENT;
  return EXIT_CODES.SUCCESS;
}
async function rateLimited(sc, p, run) {
  const { options } = sc;
  const { parsed, common, written, stderrTail } = run;
  const failureText = [parsed.errorText, parsed.ok ? "" : parsed.result, stderrTail.join("\n")].filter(Boolean).join("\n");
  const limit = detectRateLimit(failureText, { status: parsed.apiErrorStatus ?? null });
  if (!limit) return void 0;
  const decision = planRateLimitWait(limit, {
    now: /* @__PURE__ */ new Date(),
    deadline: p.deadline,
    attempt: sc.rateLimitRetries,
    maxRetries: options.maxRateLimitRetries ?? 5,
    ...options.random ? { random: options.random } : {}
  });
  if (decision.action === "wait") {
    emit(sc, { kind: "rate_limit", summary: `${limit.kind}: ${limit.message}; retrying at ${decision.until.toISOString()}` });
    await (options.sleep ?? sleepFor)(decision.ms, options.signal);
    if (options.signal?.aborted)
      return finish(
        sc,
        EXIT_CODES.INTERRUPTED,
        { ...common, error: { code: "aborted", message: "cancelled while waiting for a rate limit" } },
        written
      );
    sc.rateLimitRetries++;
    emit(sc, { kind: "retry", summary: `retry ${sc.rateLimitRetries} after ${limit.kind}` });
    return "again";
  }
  emit(sc, {
    kind: "rate_limit",
    summary: `${limit.kind}: ${limit.message}; limited until ${decision.until.toISOString()}, past this job's budget`
  });
  return finish(
    sc,
    EXIT_CODES.FAILURE,
    {
      ...common,
      rateLimitRetries: sc.rateLimitRetries,
      rateLimitedUntil: decision.until.toISOString(),
      error: { code: "rate_limited", message: `${limit.kind} until ${decision.until.toISOString()}: ${limit.message}` }
    },
    written
  );
}
function failureOf(p, run, exitCode, explicit) {
  const { parsed, stderrTail, outcome } = run;
  const said = explicit !== void 0 ? `the agent ended with FORGE_EXIT=${explicit}` : void 0;
  const why = parsed.errorText ?? (parsed.ok ? void 0 : parsed.result) ?? (stderrTail.length > 0 ? stderrTail.slice(-3).join(" | ") : void 0);
  return {
    code: exitCode === EXIT_CODES.FAILURE ? "agent_failed" : EXIT_STATUS[exitCode],
    message: oneLineError(
      [said, why].filter(Boolean).join(": ") || `${p.invocation.command} exited with ${String(outcome.code ?? outcome.signal)}`
    )
  };
}
function oneLineError(text) {
  const s = text.replace(/\s+/g, " ").trim();
  return (s.length > 500 ? `${s.slice(0, 499)}\u2026` : s) || "the agent failed";
}
var sleepFor = (ms, signal) => new Promise((resolve) => {
  if (signal?.aborted) return resolve();
  const t = setTimeout(done, ms);
  function done() {
    clearTimeout(t);
    signal?.removeEventListener("abort", done);
    resolve();
  }
  signal?.addEventListener("abort", done, { once: true });
});

// src/agent/spawn/prepare.ts
import { writeFile as writeFile3 } from "node:fs/promises";
import path15 from "node:path";

// src/agent/adapters/types.ts
function oneLine(text, max = 200) {
  const s = text.replace(/\s+/g, " ").trim();
  return s.length > max ? `${s.slice(0, max - 1)}\u2026` : s;
}

// src/agent/adapters/claude.ts
var CLAUDE_ENV = [
  "ANTHROPIC_*",
  "CLAUDE_CODE_*",
  "CLAUDE_CONFIG_DIR",
  "DISABLE_*",
  "MAX_THINKING_TOKENS",
  "API_TIMEOUT_MS",
  "BASH_DEFAULT_TIMEOUT_MS",
  "BASH_MAX_TIMEOUT_MS"
];
var ARG_LIMIT = 1e5;
var STREAM_PROGRESS_EVERY_MS = 5e3;
function isPartialChunk(line) {
  return line.startsWith('{"type":"stream_event"');
}
function claudeArgs(input) {
  const viaStdin = Buffer.byteLength(input.prompt, "utf8") > ARG_LIMIT;
  const args = viaStdin ? ["-p"] : ["-p", input.prompt];
  if (input.resumeSession) args.push("--resume", input.resumeSession);
  if (input.systemPrompt) args.push("--append-system-prompt", input.systemPrompt);
  if (input.allowedTools.length > 0) args.push("--allowedTools", input.allowedTools.join(","));
  if (input.maxTurns !== void 0) args.push("--max-turns", String(input.maxTurns));
  args.push("--output-format", "stream-json", "--verbose", "--include-partial-messages");
  if (input.model) args.push("--model", input.model);
  return viaStdin ? { args, stdin: input.prompt } : { args };
}
var claudeAdapter = {
  name: "claude",
  invocation(input) {
    const { args, stdin } = claudeArgs(input);
    return {
      command: input.binary ?? "claude",
      args,
      env: { ...pickEnv(input.parentEnv, [...CLAUDE_ENV, ...input.passEnv]), ...input.forgeEnv, ...input.extraEnv },
      ...stdin !== void 0 ? { stdin } : {}
    };
  },
  parser: () => new StreamJsonParser()
};
function toolSummary(name, input) {
  const i = input ?? {};
  const target = i.file_path ?? i.path ?? i.command ?? i.pattern ?? i.url ?? i.description ?? i.prompt;
  return oneLine(`${name}${typeof target === "string" ? ` ${target}` : ""}`, 160);
}
var StreamJsonParser = class {
  #messageIds = /* @__PURE__ */ new Set();
  #openTools = /* @__PURE__ */ new Set();
  #assistantLines = 0;
  #result;
  #model;
  #sessionId;
  #lastText;
  #lastStreamDraft = 0;
  /** Lines that were not stream-json (a command agent's plain output). */
  plainLines = [];
  stdoutLine(line) {
    const trimmed = line.trim();
    if (!trimmed) return [];
    let e;
    try {
      const parsed = trimmed.startsWith("{") ? JSON.parse(trimmed) : void 0;
      if (!parsed || typeof parsed !== "object") throw new Error("not an object");
      e = parsed;
    } catch {
      this.plainLines.push(line);
      return [{ kind: "output", summary: oneLine(line) }];
    }
    return this.event(e);
  }
  stderrLine(line) {
    return line.trim() ? [{ kind: "stderr", summary: oneLine(line) }] : [];
  }
  event(e) {
    switch (e.type) {
      case "system": {
        if (typeof e.model === "string") this.#model = e.model;
        if (typeof e.session_id === "string") this.#sessionId = e.session_id;
        const subtype = typeof e.subtype === "string" ? e.subtype : "system";
        return [{ kind: "system", summary: oneLine(subtype === "init" ? `session started (model ${this.#model ?? "?"})` : subtype) }];
      }
      case "assistant": {
        const message = e.message ?? {};
        if (typeof message.id === "string") this.#messageIds.add(message.id);
        else this.#assistantLines++;
        if (typeof message.model === "string") this.#model ??= message.model;
        const drafts = [];
        for (const block of Array.isArray(message.content) ? message.content : []) {
          if (block.type === "text" && typeof block.text === "string") {
            this.#lastText = block.text;
            drafts.push({ kind: "text", summary: oneLine(block.text) });
          } else if (block.type === "tool_use" && typeof block.name === "string") {
            if (typeof block.id === "string") this.#openTools.add(block.id);
            drafts.push({ kind: "tool_use", tool: block.name, summary: toolSummary(block.name, block.input) });
          } else if (block.type === "thinking") {
            drafts.push({ kind: "text", summary: "thinking" });
          }
        }
        return drafts;
      }
      case "user": {
        const message = e.message ?? {};
        const drafts = [];
        for (const block of Array.isArray(message.content) ? message.content : []) {
          if (block.type !== "tool_result") continue;
          if (typeof block.tool_use_id === "string") this.#openTools.delete(block.tool_use_id);
          const content = typeof block.content === "string" ? block.content : JSON.stringify(block.content ?? "");
          drafts.push({ kind: "tool_result", summary: oneLine(`${block.is_error === true ? "error: " : ""}${content}`) });
        }
        return drafts;
      }
      case "stream_event": {
        const now = Date.now();
        if (now - this.#lastStreamDraft < STREAM_PROGRESS_EVERY_MS) return [];
        this.#lastStreamDraft = now;
        return [{ kind: "text", summary: "(the model is writing)" }];
      }
      case "result": {
        this.#result = e;
        if (typeof e.session_id === "string") this.#sessionId = e.session_id;
        const text = typeof e.result === "string" ? e.result : String(e.subtype ?? "");
        return [
          {
            kind: "result",
            summary: oneLine(`${e.is_error === true ? "error: " : ""}${text}`),
            ...typeof e.total_cost_usd === "number" && e.total_cost_usd >= 0 ? { costUsd: e.total_cost_usd } : {}
          }
        ];
      }
      default:
        return [{ kind: "system", summary: oneLine(String(e.type ?? "event")) }];
    }
  }
  turns() {
    return this.#messageIds.size + this.#assistantLines;
  }
  busy() {
    return this.#openTools.size > 0;
  }
  finish(exitCode) {
    const r = this.#result;
    const outcome = { ok: exitCode === 0 && (r === void 0 ? true : r.is_error !== true) };
    const result = typeof r?.result === "string" ? r.result : this.#lastText;
    if (result !== void 0) outcome.result = result;
    if (this.#model) outcome.model = this.#model;
    const turns = typeof r?.num_turns === "number" ? r.num_turns : this.turns();
    if (r || turns > 0) outcome.turns = turns;
    if (typeof r?.total_cost_usd === "number") outcome.costUsd = r.total_cost_usd;
    if (this.#sessionId) outcome.sessionId = this.#sessionId;
    if (typeof r?.api_error_status === "number") outcome.apiErrorStatus = r.api_error_status;
    if (r?.is_error === true) {
      const errors = Array.isArray(r.errors) ? r.errors.map(String).join("; ") : "";
      outcome.errorText = [typeof r.result === "string" ? r.result : String(r.subtype ?? "error"), errors].filter(Boolean).join("; ");
    }
    return outcome;
  }
};

// src/agent/adapters/codex.ts
import path8 from "node:path";

// src/agent/hierarchy.ts
var SPAWNABLE_BY = {
  "1": [],
  "2": ["1"],
  "3": ["1", "2"],
  refinery: ["1", "2", "3"],
  captain: [],
  sentinel: [],
  "sentinel-writer": [],
  "sentinel-executor": [],
  "sentinel-auditor": [],
  "sentinel-consolidator": []
};
function mayCallerSpawn(caller, child) {
  return SPAWNABLE_BY[caller].includes(child);
}
var EDIT = ["Read", "Write", "Edit", "MultiEdit", "Glob", "Grep", "LS", "Bash", "TodoWrite"];
var REVIEW = ["Read", "Write", "Glob", "Grep", "LS", "Bash"];
var ALLOWED_TOOLS = {
  "1": EDIT,
  "2": EDIT,
  "3": EDIT,
  refinery: EDIT,
  captain: EDIT,
  sentinel: REVIEW,
  "sentinel-writer": REVIEW,
  "sentinel-executor": REVIEW,
  "sentinel-auditor": REVIEW,
  "sentinel-consolidator": REVIEW
};
var FORBIDDEN_TOOLS = /* @__PURE__ */ new Set(["Task", "Agent"]);
function allowedToolsFor(kind, _adapter = "claude") {
  return [...kind ? ALLOWED_TOOLS[kind] : EDIT];
}

// src/agent/adapters/headless.ts
import { existsSync as existsSync3, readFileSync } from "node:fs";
import path7 from "node:path";
var isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v);
function readJsonLine(line) {
  const t = line.trim();
  if (!t) return { drafts: [] };
  try {
    const parsed = t.startsWith("{") ? JSON.parse(t) : void 0;
    if (isObject(parsed)) return { event: parsed };
  } catch {
  }
  return { drafts: [{ kind: "output", summary: oneLine(line) }] };
}
var stderrDrafts = (line) => line.trim() ? [{ kind: "stderr", summary: oneLine(line) }] : [];
function readJsonObject(file) {
  if (!file || !existsSync3(file)) return void 0;
  try {
    const parsed = JSON.parse(readFileSync(file, "utf8"));
    return isObject(parsed) ? parsed : void 0;
  } catch {
    return void 0;
  }
}
function agentEnv(input, names) {
  return { ...pickEnv(input.parentEnv, [...names, ...input.passEnv]), ...input.forgeEnv, ...input.extraEnv };
}
function sessionWritableDirs(cwd, forgeEnv = {}, more = []) {
  const dirs = [forgeEnv.FORGE_SESSION_DIR, forgeEnv.FORGE_SIGNAL_DIR, ...more];
  for (const file of [
    forgeEnv.FORGE_WALKTHROUGH_PATH,
    forgeEnv.FORGE_QUESTION_FILE,
    forgeEnv.FORGE_CHANGE_REQUEST_FILE,
    forgeEnv.FORGE_REFINEMENT_FILE
  ]) {
    if (file) dirs.push(path7.dirname(path7.resolve(cwd, file)));
  }
  const inside2 = (dir, root) => {
    const rel = path7.relative(root, dir);
    return rel === "" || !rel.startsWith("..") && !path7.isAbsolute(rel);
  };
  const out = [];
  for (const d of dirs) {
    if (!d) continue;
    const abs = path7.resolve(cwd, d);
    if (inside2(abs, cwd) || out.some((o) => inside2(abs, o))) continue;
    out.push(abs);
  }
  return out;
}
function mergeJson(base, over) {
  const out = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = isObject(v) && isObject(base[k]) ? mergeJson(base[k], v) : v;
  return out;
}
function sessionHome(input) {
  return path7.join(input.forgeEnv.FORGE_SESSION_DIR ?? input.cwd, "home");
}
function toolCallSummary(name, params) {
  const p = isObject(params) ? params : {};
  const target = p.file_path ?? p.filePath ?? p.absolute_path ?? p.path ?? p.command ?? p.pattern ?? p.dir_path ?? p.url ?? p.query ?? p.description;
  return oneLine(`${name}${typeof target === "string" ? ` ${target}` : ""}`, 160);
}
function mapTools(allowedTools, map) {
  const out = /* @__PURE__ */ new Set();
  for (const t of allowedTools) for (const g of map[t.replace(/\(.*$/, "")] ?? []) out.add(g);
  return [...out];
}
var HeadlessParser = class {
  turnCount = 0;
  errors = [];
  running = /* @__PURE__ */ new Set();
  stdoutLine(line) {
    const read = readJsonLine(line);
    return "drafts" in read ? read.drafts : this.event(read.event);
  }
  stderrLine(line) {
    return stderrDrafts(line);
  }
  turns() {
    return this.turnCount;
  }
  busy() {
    return this.running.size > 0;
  }
  outcome(ok, fields, end) {
    const outcome = { ok, turns: this.turnCount };
    if (fields.result !== void 0) outcome.result = fields.result;
    if (fields.model) outcome.model = fields.model;
    if (fields.sessionId) outcome.sessionId = fields.sessionId;
    if (fields.costUsd) outcome.costUsd = fields.costUsd;
    if (fields.apiErrorStatus !== void 0) outcome.apiErrorStatus = fields.apiErrorStatus;
    if (this.errors.length > 0) outcome.errorText = this.errors.join("\n");
    else if (end.exitCode === 0 && !end.ended) outcome.errorText = end.missingEnd;
    return outcome;
  }
};

// src/agent/adapters/codex.ts
var CODEX_ENV = ["OPENAI_*", "CODEX_*", "AZURE_OPENAI_API_KEY"];
var WRITE_TOOLS = /* @__PURE__ */ new Set(["Write", "Edit", "MultiEdit", "NotebookEdit", "Bash"]);
var SANDBOXES = ["read-only", "workspace-write", "danger-full-access", "bypass"];
function codexSandbox(input) {
  const asked = input.parentEnv?.FORGE_CODEX_SANDBOX?.trim();
  if (asked && SANDBOXES.includes(asked)) return asked;
  if (input.parentEnv?.CODEX_THREAD_ID) return "danger-full-access";
  if (input.parentEnv?.GITHUB_ACTIONS === "true") return "bypass";
  return input.allowedTools.some((t) => WRITE_TOOLS.has(t.replace(/\(.*$/, ""))) ? "workspace-write" : "read-only";
}
function codexWritableDirs(cwd, forgeEnv = {}, parentEnv = {}) {
  const kind = forgeEnv.FORGE_AGENT_TYPE;
  const home = kind && (SPAWNABLE_BY[kind]?.length ?? 0) > 0 ? parentEnv.CODEX_HOME || (parentEnv.HOME ? path8.join(parentEnv.HOME, ".codex") : void 0) : void 0;
  return sessionWritableDirs(cwd, forgeEnv, [home]);
}
function codexProviderArgs(baseUrl) {
  if (!baseUrl) return [];
  const provider = `{ name = "Forge model proxy", base_url = ${JSON.stringify(baseUrl)}, wire_api = "responses", env_key = "OPENAI_API_KEY" }`;
  return ["-c", 'model_provider="forge"', "-c", `model_providers.forge=${provider}`];
}
function codexArgs(input) {
  const sandbox = codexSandbox(input);
  const args = ["exec", "--json", "--skip-git-repo-check", "--cd", input.cwd, "-c", "allow_login_shell=false"];
  args.push(...codexProviderArgs(input.extraEnv?.OPENAI_BASE_URL ?? input.parentEnv?.OPENAI_BASE_URL));
  if (sandbox === "bypass") args.push("--dangerously-bypass-approvals-and-sandbox");
  else {
    args.push("--sandbox", sandbox, "-c", 'approval_policy="never"');
    if (sandbox === "workspace-write") {
      args.push("-c", "sandbox_workspace_write.network_access=true");
      for (const dir of codexWritableDirs(input.cwd, input.forgeEnv, input.parentEnv)) args.push("--add-dir", dir);
    }
  }
  if (input.model) args.push("--model", input.model);
  if (input.modelTier) args.push("-c", `model_reasoning_effort="${input.modelTier}"`);
  if (input.systemPrompt) args.push("-c", `developer_instructions=${JSON.stringify(input.systemPrompt)}`);
  if (input.resumeSession) args.push("resume", input.resumeSession);
  args.push("-");
  return args;
}
var codexAdapter = {
  name: "codex",
  invocation(input) {
    return {
      command: input.binary ?? "codex",
      args: codexArgs(input),
      env: agentEnv(input, CODEX_ENV),
      stdin: input.prompt
    };
  },
  parser: () => new CodexJsonParser()
};
var CodexJsonParser = class extends HeadlessParser {
  #lastMessage;
  #threadId;
  #turnFailed = false;
  #completed = false;
  event(e) {
    switch (e.type) {
      case "thread.started":
        if (typeof e.thread_id === "string") this.#threadId = e.thread_id;
        return [{ kind: "system", summary: "thread started" }];
      case "turn.started":
        this.turnCount++;
        return [{ kind: "system", summary: `turn ${this.turnCount}` }];
      case "turn.completed": {
        this.#completed = true;
        const u = e.usage ?? {};
        const tokens = typeof u.input_tokens === "number" && typeof u.output_tokens === "number" ? ` (${u.input_tokens} input, ${u.output_tokens} output tokens)` : "";
        return [
          {
            kind: "result",
            summary: oneLine(`turn completed${tokens}${this.#lastMessage ? `: ${this.#lastMessage}` : ""}`),
            ...tokens ? { tokens: { input: u.input_tokens, output: u.output_tokens } } : {}
          }
        ];
      }
      case "turn.failed": {
        const msg = String((e.error ?? {}).message ?? "turn failed");
        this.#turnFailed = true;
        this.errors.push(msg);
        return [{ kind: "result", summary: oneLine(`error: ${msg}`) }];
      }
      case "error": {
        const msg = String(e.message ?? "error");
        this.errors.push(msg);
        return [{ kind: "stderr", summary: oneLine(msg) }];
      }
      case "item.started":
      case "item.updated":
      case "item.completed":
        return this.#item(String(e.type), e.item ?? {});
      default:
        return [{ kind: "system", summary: oneLine(String(e.type ?? "event")) }];
    }
  }
  #item(phase, item) {
    const done = phase === "item.completed";
    const id = typeof item.id === "string" ? item.id : void 0;
    if (id && (item.type === "command_execution" || item.type === "mcp_tool_call")) {
      if (phase === "item.started") this.running.add(id);
      if (done) this.running.delete(id);
    }
    switch (item.type) {
      case "agent_message":
        if (typeof item.text === "string" && done) {
          this.#lastMessage = item.text;
          return [{ kind: "text", summary: oneLine(item.text) }];
        }
        return [];
      case "reasoning":
        return done ? [{ kind: "text", summary: "thinking" }] : [];
      case "command_execution":
        return phase === "item.started" ? [{ kind: "tool_use", tool: "Bash", summary: oneLine(`Bash ${String(item.command ?? "")}`) }] : done ? [{ kind: "tool_result", summary: oneLine(`exit ${String(item.exit_code ?? "?")}: ${String(item.aggregated_output ?? "")}`) }] : [];
      case "file_change": {
        const changes = Array.isArray(item.changes) ? item.changes : [];
        return done ? [
          {
            kind: "tool_use",
            tool: "Edit",
            summary: oneLine(`Edit ${changes.map((c) => `${String(c.kind ?? "")} ${String(c.path ?? "")}`).join(", ")}`)
          }
        ] : [];
      }
      case "mcp_tool_call":
        return phase === "item.started" ? [
          {
            kind: "tool_use",
            tool: String(item.tool ?? "mcp"),
            summary: oneLine(`${String(item.server ?? "")} ${String(item.tool ?? "")}`)
          }
        ] : [];
      case "web_search":
        return phase === "item.started" ? [{ kind: "tool_use", tool: "WebSearch", summary: oneLine(`WebSearch ${String(item.query ?? "")}`) }] : [];
      case "error":
        return [{ kind: "stderr", summary: oneLine(String(item.message ?? "error")) }];
      default:
        return done ? [{ kind: "system", summary: oneLine(String(item.type ?? "item")) }] : [];
    }
  }
  finish(exitCode) {
    return this.outcome(
      exitCode === 0 && !this.#turnFailed,
      { result: this.#lastMessage, sessionId: this.#threadId },
      { exitCode, ended: this.#completed, missingEnd: "codex ended without turn.completed" }
    );
  }
};

// src/agent/adapters/command.ts
var commandAdapter = {
  name: "command",
  invocation(input) {
    if (!input.command) throw new Error("adapter 'command' needs a command to run");
    return {
      command: input.command,
      args: input.args ?? [],
      env: {
        ...pickEnv(input.parentEnv, input.passEnv),
        ...input.forgeEnv,
        ...input.extraEnv,
        // The session a resumed attempt continues, for an agent that keeps sessions of its own.
        ...input.resumeSession ? { FORGE_RESUME_SESSION: input.resumeSession } : {}
      },
      stdin: input.prompt
    };
  },
  parser: () => new CommandOutputParser()
};
var CommandOutputParser = class extends StreamJsonParser {
  /** The last lines a plain agent printed on stderr (its error, as most programs print one). */
  #stderr = [];
  stderrLine(line) {
    if (line.trim()) this.#stderr.push(line.trim());
    if (this.#stderr.length > 20) this.#stderr.shift();
    return super.stderrLine(line);
  }
  finish(exitCode) {
    const outcome = super.finish(exitCode);
    const plain = outcome.result === void 0 && this.plainLines.length > 0;
    outcome.ok = exitCode === 0;
    if (plain) outcome.result = this.plainLines.slice(-20).join("\n");
    if (!outcome.ok && plain && outcome.errorText === void 0) {
      const said = this.#stderr.findLast((l) => /\berror\b/i.test(l)) ?? this.#stderr.at(-1) ?? this.plainLines.at(-1)?.trim();
      if (said) outcome.errorText = said;
    }
    return outcome;
  }
};

// src/agent/adapters/copilot.ts
import { mkdirSync as mkdirSync2, writeFileSync } from "node:fs";
import path9 from "node:path";
var COPILOT_ENV = ["COPILOT_*"];
var COPILOT_DEFAULT_MODEL = "claude-sonnet-4-5";
var COPILOT_USAGE_FILE = "forge-usage.json";
var TOOL_MAP = {
  Read: ["view"],
  Write: ["create"],
  Edit: ["edit"],
  MultiEdit: ["edit"],
  Glob: ["glob"],
  Grep: ["grep"],
  LS: ["view"],
  // 1.0.102 has no `write_bash` (it names it an unknown tool in the allowlist).
  Bash: ["bash", "read_bash", "stop_bash", "list_bash"],
  WebFetch: ["web_fetch"]
};
function copilotTools(allowedTools) {
  return mapTools(allowedTools, TOOL_MAP);
}
function copilotHome(input) {
  return path9.join(sessionHome(input), ".copilot");
}
function copilotArgs(input) {
  const tools = copilotTools(input.allowedTools);
  const args = ["--output-format", "json", "--allow-all-tools"];
  args.push(`--available-tools=${(tools.length ? tools : ["view"]).join(",")}`);
  args.push("--model", input.model || COPILOT_DEFAULT_MODEL);
  args.push("--no-ask-user", "--no-auto-update", "--disable-client-telemetry", "--no-color");
  args.push("--usage-output-file", path9.join(copilotHome({ forgeEnv: input.forgeEnv ?? {}, cwd: input.cwd }), COPILOT_USAGE_FILE));
  for (const dir of sessionWritableDirs(input.cwd, input.forgeEnv)) args.push("--add-dir", dir);
  if (input.resumeSession) args.push(`--resume=${input.resumeSession}`);
  return args;
}
var copilotAdapter = {
  name: "copilot",
  invocation(input) {
    const home = copilotHome(input);
    mkdirSync2(home, { recursive: true });
    if (input.systemPrompt) writeFileSync(path9.join(home, "copilot-instructions.md"), `${input.systemPrompt}
`);
    const env = {
      ...agentEnv(input, COPILOT_ENV),
      COPILOT_HOME: home,
      COPILOT_AUTO_UPDATE: "false"
    };
    if (env.COPILOT_PROVIDER_BASE_URL && env.COPILOT_OFFLINE === void 0) env.COPILOT_OFFLINE = "true";
    return {
      command: input.binary ?? "copilot",
      args: copilotArgs(input),
      env: withShellProvider(env, input.parentEnv),
      stdin: input.prompt
    };
  },
  parser: (invocation) => new CopilotJsonParser(usageFileOf(invocation))
};
var PROVIDER_VAR = /^COPILOT_(?:PROVIDER_[A-Z_]+|OFFLINE)$/;
function withShellProvider(env, parentEnv) {
  const out = { ...env };
  if (!Object.keys(out).some((k) => PROVIDER_VAR.test(k))) {
    for (const [k, v] of Object.entries(parentEnv))
      if (v !== void 0 && k.startsWith("FORGE_") && PROVIDER_VAR.test(k.slice(6)) && out[k.slice(6)] === void 0) out[k.slice(6)] = v;
  }
  for (const [k, v] of Object.entries(out)) if (PROVIDER_VAR.test(k)) out[`FORGE_${k}`] = v;
  return out;
}
function usageFileOf(invocation) {
  const i = invocation?.args.indexOf("--usage-output-file") ?? -1;
  return i >= 0 ? invocation.args[i + 1] : void 0;
}
function copilotUsage(file) {
  const parsed = readJsonObject(file);
  if (!parsed) return void 0;
  const metrics = isObject(parsed.modelMetrics) ? parsed.modelMetrics : {};
  let input = 0;
  let output = 0;
  for (const m of Object.values(metrics)) {
    const u = isObject(m) && isObject(m.usage) ? m.usage : {};
    const n = (k) => typeof u[k] === "number" ? u[k] : 0;
    input += n("inputTokens") + n("cacheReadTokens") + n("cacheWriteTokens");
    output += n("outputTokens");
  }
  const model = Object.keys(metrics)[0];
  return { input, output, ...model ? { model } : {} };
}
var FORGE_TOOL = { create: "Write", edit: "Edit", bash: "Bash", view: "Read", grep: "Grep", glob: "Glob" };
var CopilotJsonParser = class extends HeadlessParser {
  constructor(usageFile) {
    super();
    this.usageFile = usageFile;
  }
  usageFile;
  #lastText;
  #sessionId;
  #model;
  #result;
  #status;
  event(e) {
    const d = isObject(e.data) ? e.data : {};
    switch (e.type) {
      case "assistant.turn_start":
        this.turnCount++;
        return [];
      case "assistant.message": {
        if (typeof d.model === "string") this.#model = d.model;
        if (typeof d.content !== "string" || !d.content) return [];
        this.#lastText = d.content;
        return [{ kind: "text", summary: oneLine(d.content) }];
      }
      case "tool.execution_start": {
        const name = String(d.toolName ?? "tool");
        if (typeof d.toolCallId === "string") this.running.add(d.toolCallId);
        return [{ kind: "tool_use", tool: FORGE_TOOL[name] ?? name, summary: toolCallSummary(FORGE_TOOL[name] ?? name, d.arguments) }];
      }
      case "tool.execution_complete": {
        if (typeof d.toolCallId === "string") this.running.delete(d.toolCallId);
        const r = isObject(d.result) ? d.result : {};
        const err = isObject(d.error) ? String(d.error.message ?? "") : "";
        const text = d.success === false ? `error: ${err || String(r.content ?? "")}` : String(r.content ?? "");
        return [{ kind: "tool_result", summary: oneLine(text) }];
      }
      case "session.error": {
        const msg = String(d.message ?? d.errorType ?? "error");
        if (typeof d.statusCode === "number") this.#status = d.statusCode;
        this.errors.push(msg);
        return [{ kind: "stderr", summary: oneLine(`${String(d.errorType ?? "error")}: ${msg}`) }];
      }
      case "session.warning":
        return [{ kind: "stderr", summary: oneLine(String(d.message ?? "warning")) }];
      case "result":
        return [this.#resultDraft(e)];
      default:
        return [];
    }
  }
  #resultDraft(e) {
    this.#result = e;
    if (typeof e.sessionId === "string") this.#sessionId = e.sessionId;
    const failed = typeof e.exitCode === "number" && e.exitCode !== 0;
    const text = failed ? `error: exit ${String(e.exitCode)}` : `done${this.#lastText ? `: ${this.#lastText}` : ""}`;
    return { kind: "result", summary: oneLine(text) };
  }
  finish(exitCode) {
    const r = this.#result;
    return this.outcome(
      exitCode === 0 && r !== void 0 && (r.exitCode ?? 0) === 0,
      {
        result: this.#lastText,
        model: this.#model ?? copilotUsage(this.usageFile)?.model,
        sessionId: this.#sessionId,
        apiErrorStatus: this.#status
      },
      { exitCode, ended: r !== void 0, missingEnd: "copilot ended without a result event" }
    );
  }
  /** The session's tokens, from `--usage-output-file` (written as the process ends). */
  afterExit() {
    const u = copilotUsage(this.usageFile);
    if (!u || u.input === 0 && u.output === 0) return [];
    return [
      { kind: "system", summary: `usage: ${u.input} input, ${u.output} output tokens`, tokens: { input: u.input, output: u.output } }
    ];
  }
};

// src/agent/adapters/gemini.ts
import { mkdirSync as mkdirSync3, writeFileSync as writeFileSync2 } from "node:fs";
import path10 from "node:path";
var GEMINI_ENV = ["GEMINI_*", "GOOGLE_GEMINI_BASE_URL", "GOOGLE_API_KEY", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"];
var GEMINI_EXIT = { auth: 41, input: 42, config: 52, quota: 173 };
var GEMINI_DEFAULT_MODEL = "gemini-2.5-pro";
var ARG_LIMIT2 = 1e5;
var TOOL_MAP2 = {
  Read: ["read_file", "read_many_files"],
  Write: ["write_file"],
  Edit: ["replace"],
  MultiEdit: ["replace"],
  Glob: ["glob"],
  Grep: ["grep_search"],
  LS: ["list_directory"],
  Bash: ["run_shell_command"],
  TodoWrite: ["write_todos"],
  WebFetch: ["web_fetch"],
  WebSearch: ["google_web_search"]
};
var GEMINI_EXCLUDED = ["invoke_agent", "ask_user", "enter_plan_mode", "exit_plan_mode"];
function geminiTools(allowedTools) {
  return mapTools(allowedTools, TOOL_MAP2);
}
function geminiSettings(o = {}) {
  return {
    security: { auth: { selectedType: "gemini-api-key" }, folderTrust: { enabled: false } },
    tools: { ...o.tools ? { core: o.tools } : {}, exclude: GEMINI_EXCLUDED },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: {
      enableAutoUpdate: false,
      enableAutoUpdateNotification: false,
      ...o.maxAttempts !== void 0 ? { maxAttempts: o.maxAttempts } : {}
    }
  };
}
var geminiSettingsPath = (home) => path10.join(home, ".gemini", "settings.json");
function writeGeminiSettings(home, settings, base = {}) {
  const file = geminiSettingsPath(home);
  mkdirSync3(path10.dirname(file), { recursive: true });
  writeFileSync2(file, `${JSON.stringify(mergeJson(base, settings), null, 2)}
`);
  return file;
}
function runnerSettings(env) {
  const home = env.GEMINI_CLI_HOME || env.HOME;
  return home && readJsonObject(geminiSettingsPath(home)) || {};
}
function geminiHome(input) {
  return sessionHome(input);
}
function geminiArgs(input) {
  const viaStdin = Buffer.byteLength(input.prompt, "utf8") > ARG_LIMIT2;
  const args = ["-p", viaStdin ? "Follow the instructions above." : input.prompt];
  args.push("--approval-mode", "yolo", "--skip-trust", "-o", "stream-json", "-m", input.model || GEMINI_DEFAULT_MODEL);
  for (const dir of sessionWritableDirs(input.cwd, input.forgeEnv)) args.push("--include-directories", dir);
  if (input.resumeSession) args.push("-r", input.resumeSession);
  return viaStdin ? { args, stdin: input.prompt } : { args };
}
var geminiAdapter = {
  name: "gemini",
  invocation(input) {
    const home = geminiHome(input);
    const settings = geminiSettings({ tools: geminiTools(input.allowedTools) });
    writeGeminiSettings(home, settings, runnerSettings(input.parentEnv));
    if (input.systemPrompt) writeFileSync2(path10.join(home, ".gemini", "GEMINI.md"), `${input.systemPrompt}
`);
    const { args, stdin } = geminiArgs(input);
    return {
      command: input.binary ?? "gemini",
      args,
      env: {
        ...agentEnv(input, GEMINI_ENV),
        GEMINI_CLI_HOME: home,
        // One process: the CLI otherwise starts itself again as a child to raise its heap limit.
        GEMINI_CLI_NO_RELAUNCH: "true"
      },
      ...stdin !== void 0 ? { stdin } : {}
    };
  },
  parser: () => new GeminiStreamParser()
};
var FORGE_TOOL2 = { write_file: "Write", replace: "Edit", run_shell_command: "Bash", read_file: "Read" };
var GeminiStreamParser = class extends HeadlessParser {
  /** A model response starts with the next message or tool call (at the start, after tool results). */
  #newTurn = true;
  #text = "";
  #lastText;
  #sessionId;
  #model;
  #result;
  event(e) {
    switch (e.type) {
      case "init":
        if (typeof e.session_id === "string") this.#sessionId = e.session_id;
        if (typeof e.model === "string") this.#model = e.model;
        return [{ kind: "system", summary: oneLine(`session started (model ${this.#model ?? "?"})`) }];
      case "message": {
        if (e.role !== "assistant" || typeof e.content !== "string") return [];
        this.#startTurn();
        this.#text += e.content;
        this.#lastText = this.#text;
        return [];
      }
      case "tool_use": {
        const drafts = this.#flush();
        this.#startTurn();
        const name = String(e.tool_name ?? "tool");
        if (typeof e.tool_id === "string") this.running.add(e.tool_id);
        drafts.push({ kind: "tool_use", tool: FORGE_TOOL2[name] ?? name, summary: toolCallSummary(name, e.parameters) });
        return drafts;
      }
      case "tool_result": {
        this.#newTurn = true;
        if (typeof e.tool_id === "string") this.running.delete(e.tool_id);
        const err = isObject(e.error) ? String(e.error.message ?? "") : "";
        const text = e.status === "error" ? `error: ${err || String(e.output ?? "")}` : String(e.output ?? "");
        return [{ kind: "tool_result", summary: oneLine(text) }];
      }
      case "error": {
        const msg = String(e.message ?? "error");
        if (e.severity === "error") this.errors.push(msg);
        return [{ kind: "stderr", summary: oneLine(msg) }];
      }
      case "result":
        return [...this.#flush(), this.#resultDraft(e)];
      default:
        return [{ kind: "system", summary: oneLine(String(e.type ?? "event")) }];
    }
  }
  #startTurn() {
    if (!this.#newTurn) return;
    this.turnCount++;
    this.#newTurn = false;
  }
  /** The text the model streamed since the last tool call, as one progress event. */
  #flush() {
    if (!this.#text) return [];
    const text = this.#text;
    this.#text = "";
    return [{ kind: "text", summary: oneLine(text) }];
  }
  #resultDraft(e) {
    this.#result = e;
    const stats = isObject(e.stats) ? e.stats : {};
    const models = isObject(stats.models) ? Object.keys(stats.models) : [];
    if (models.length > 0 && !this.#model) this.#model = models[0];
    const input = typeof stats.input_tokens === "number" ? stats.input_tokens : void 0;
    const output = typeof stats.output_tokens === "number" ? stats.output_tokens : void 0;
    const tokens = input !== void 0 && output !== void 0 ? ` (${input} input, ${output} output tokens)` : "";
    const error = isObject(e.error) ? String(e.error.message ?? e.error.type ?? "error") : "";
    if (error) this.errors.push(error);
    const text = e.status === "error" ? `error: ${error}` : `done${tokens}${this.#lastText ? `: ${this.#lastText}` : ""}`;
    return {
      kind: "result",
      summary: oneLine(text),
      ...input !== void 0 && output !== void 0 && (input > 0 || output > 0) ? { tokens: { input, output } } : {}
    };
  }
  finish(exitCode) {
    const r = this.#result;
    return this.outcome(
      exitCode === 0 && r?.status === "success",
      {
        result: this.#lastText,
        model: this.#model,
        sessionId: this.#sessionId,
        // The CLI's exit code for an API error it gave up on after a 429 (its retries spent, or a quota).
        ...exitCode === GEMINI_EXIT.quota ? { apiErrorStatus: 429 } : {}
      },
      { exitCode, ended: r !== void 0, missingEnd: "gemini ended without a result event" }
    );
  }
};

// src/agent/adapters/opencode.ts
import { mkdirSync as mkdirSync4, writeFileSync as writeFileSync3 } from "node:fs";
import path11 from "node:path";
var OPENCODE_ENV = ["OPENAI_API_KEY", "OPENAI_BASE_URL"];
var OPENCODE_DEFAULT_MODEL = "gpt-5.5";
var OPENCODE_PROVIDER = "forge";
var TOOL_MAP3 = {
  Read: ["read"],
  Write: ["write"],
  Edit: ["edit", "patch", "apply_patch"],
  MultiEdit: ["edit", "patch", "apply_patch"],
  Glob: ["glob"],
  Grep: ["grep"],
  LS: ["list"],
  Bash: ["bash"],
  TodoWrite: ["todowrite", "todoread"],
  WebFetch: ["webfetch"],
  WebSearch: ["websearch"]
};
var ALL_TOOLS = [.../* @__PURE__ */ new Set([...Object.values(TOOL_MAP3).flat(), "task", "question", "skill", "codesearch", "lsp"])];
function opencodeTools(allowedTools) {
  return mapTools(allowedTools, TOOL_MAP3);
}
function opencodeConfig(o) {
  const model = `${OPENCODE_PROVIDER}/${o.model}`;
  return {
    $schema: "https://opencode.ai/config.json",
    provider: {
      [OPENCODE_PROVIDER]: {
        npm: "@ai-sdk/openai-compatible",
        name: "Forge model proxy",
        options: { baseURL: o.baseUrl, apiKey: "{env:OPENAI_API_KEY}", includeUsage: true },
        models: { [o.model]: { name: o.model, tool_call: true } }
      }
    },
    model,
    small_model: model,
    enabled_providers: [OPENCODE_PROVIDER],
    tools: Object.fromEntries(ALL_TOOLS.map((t) => [t, o.tools.includes(t)])),
    // A permission that allows a tool brings it back even when `tools` turns it off: only the kind's tools are allowed.
    permission: {
      edit: o.tools.includes("edit") || o.tools.includes("write") ? "allow" : "deny",
      bash: o.tools.includes("bash") ? "allow" : "deny",
      webfetch: o.tools.includes("webfetch") ? "allow" : "deny",
      external_directory: "allow",
      doom_loop: "allow"
    },
    ...o.instructions ? { instructions: [o.instructions] } : {},
    share: "disabled",
    autoupdate: false
  };
}
var opencodeConfigPath = (home) => path11.join(home, "opencode.json");
function runnerConfig(env) {
  return readJsonObject(env.OPENCODE_CONFIG) ?? {};
}
function opencodeArgs(input) {
  const args = ["run", "--format", "json", "--pure", "-m", `${OPENCODE_PROVIDER}/${input.model || OPENCODE_DEFAULT_MODEL}`];
  if (input.resumeSession) args.push("-s", input.resumeSession);
  return { args, stdin: input.prompt };
}
function opencodeHomeEnv(home) {
  return {
    OPENCODE_CONFIG: opencodeConfigPath(home),
    XDG_CONFIG_HOME: path11.join(home, ".config"),
    XDG_DATA_HOME: path11.join(home, ".local", "share"),
    XDG_CACHE_HOME: path11.join(home, ".cache"),
    XDG_STATE_HOME: path11.join(home, ".local", "state"),
    OPENCODE_DISABLE_AUTOUPDATE: "true",
    OPENCODE_DISABLE_MODELS_FETCH: "true",
    OPENCODE_DISABLE_LSP_DOWNLOAD: "true",
    OPENCODE_DISABLE_DEFAULT_PLUGINS: "true",
    OPENCODE_DISABLE_SHARE: "true"
  };
}
var opencodeAdapter = {
  name: "opencode",
  invocation(input) {
    const home = sessionHome(input);
    mkdirSync4(home, { recursive: true });
    const env = agentEnv(input, OPENCODE_ENV);
    let instructions;
    if (input.systemPrompt) {
      instructions = path11.join(home, "forge-instructions.md");
      writeFileSync3(instructions, `${input.systemPrompt}
`);
    }
    const config = opencodeConfig({
      baseUrl: env.OPENAI_BASE_URL || "https://api.openai.com/v1",
      model: input.model || OPENCODE_DEFAULT_MODEL,
      tools: opencodeTools(input.allowedTools),
      ...instructions ? { instructions } : {}
    });
    writeFileSync3(opencodeConfigPath(home), `${JSON.stringify(mergeJson(runnerConfig(input.parentEnv), config), null, 2)}
`);
    const { args, stdin } = opencodeArgs(input);
    return {
      command: input.binary ?? "opencode",
      args,
      env: { ...env, ...opencodeHomeEnv(home) },
      stdin
    };
  },
  parser: () => new OpencodeJsonParser()
};
var FORGE_TOOL3 = { write: "Write", edit: "Edit", bash: "Bash", read: "Read", patch: "Edit", apply_patch: "Edit" };
var num = (v) => typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : 0;
var OpencodeJsonParser = class extends HeadlessParser {
  #lastText;
  #sessionId;
  #stopped = false;
  #cost = 0;
  #tokens = { input: 0, output: 0 };
  #status;
  event(e) {
    if (typeof e.sessionID === "string") this.#sessionId = e.sessionID;
    const part = isObject(e.part) ? e.part : {};
    switch (e.type) {
      case "step_start":
        this.turnCount++;
        this.#stopped = false;
        return [];
      case "text":
        if (typeof part.text !== "string") return [];
        this.#lastText = part.text;
        return [{ kind: "text", summary: oneLine(part.text) }];
      case "reasoning":
        return [{ kind: "text", summary: "thinking" }];
      case "tool_use":
        return this.#tool(part);
      case "step_finish":
        return this.#stepFinish(part);
      case "error":
        return [this.#error(e)];
      default:
        return [{ kind: "system", summary: oneLine(String(e.type ?? "event")) }];
    }
  }
  #tool(part) {
    const name = String(part.tool ?? "tool");
    const state = isObject(part.state) ? part.state : {};
    const out = [{ kind: "tool_use", tool: FORGE_TOOL3[name] ?? name, summary: toolCallSummary(name, state.input) }];
    if (state.status === "error") out.push({ kind: "tool_result", summary: oneLine(`error: ${String(state.error ?? "")}`) });
    else if (state.status === "completed") out.push({ kind: "tool_result", summary: oneLine(String(state.output ?? "")) });
    return out;
  }
  #stepFinish(part) {
    const tokens = isObject(part.tokens) ? part.tokens : {};
    const cache = isObject(tokens.cache) ? tokens.cache : {};
    const input = num(tokens.input) + num(cache.read) + num(cache.write);
    const output = num(tokens.output) + num(tokens.reasoning);
    this.#tokens = { input: this.#tokens.input + input, output: this.#tokens.output + output };
    this.#cost += num(part.cost);
    if (part.reason === "tool-calls") return [];
    this.#stopped = true;
    const t = this.#tokens;
    return [
      {
        kind: "result",
        summary: oneLine(`done (${t.input} input, ${t.output} output tokens)${this.#lastText ? `: ${this.#lastText}` : ""}`),
        ...t.input > 0 || t.output > 0 ? { tokens: { ...t } } : {},
        ...this.#cost > 0 ? { costUsd: this.#cost } : {}
      }
    ];
  }
  #error(e) {
    const err = isObject(e.error) ? e.error : {};
    const data = isObject(err.data) ? err.data : {};
    if (typeof data.statusCode === "number") this.#status = data.statusCode;
    const body = typeof data.responseBody === "string" ? data.responseBody.slice(0, 500) : "";
    const message = [String(data.message ?? err.name ?? "error"), this.#status ? `(${this.#status})` : "", body].filter(Boolean).join(" ");
    this.errors.push(message);
    return { kind: "stderr", summary: oneLine(message) };
  }
  finish(exitCode) {
    return this.outcome(
      exitCode === 0 && this.errors.length === 0 && this.#stopped,
      { result: this.#lastText, sessionId: this.#sessionId, costUsd: this.#cost, apiErrorStatus: this.#status },
      { exitCode, ended: this.#stopped, missingEnd: "opencode ended without finishing its last step" }
    );
  }
};

// src/agent/adapters/qwen.ts
import { accessSync, chmodSync, constants as constants2, existsSync as existsSync4, mkdirSync as mkdirSync5, realpathSync as realpathSync2, statSync, writeFileSync as writeFileSync4 } from "node:fs";
import path12 from "node:path";
var QWEN_ENV = ["OPENAI_API_KEY", "OPENAI_BASE_URL"];
var QWEN_DEFAULT_MODEL = "qwen3-coder-plus";
var ARG_LIMIT3 = 1e5;
var TOOL_MAP4 = {
  Read: ["read_file", "read_many_files"],
  Write: ["write_file"],
  Edit: ["edit"],
  MultiEdit: ["edit"],
  NotebookEdit: ["notebook_edit"],
  Glob: ["glob"],
  Grep: ["grep_search"],
  LS: ["list_directory"],
  Bash: ["run_shell_command"],
  TodoWrite: ["todo_write"],
  WebFetch: ["web_fetch"],
  WebSearch: ["web_search"]
};
var QWEN_EXCLUDED = ["agent", "list_agents", "send_message", "enter_worktree", "exit_worktree", "ask_user_question", "exit_plan_mode"];
function qwenTools(allowedTools) {
  return mapTools(allowedTools, TOOL_MAP4);
}
var RULE_COVERS = {
  edit: ["write_file", "notebook_edit"],
  read_file: ["grep_search", "glob", "list_directory"]
};
function qwenExcludedTools(allowedTools) {
  const allowed = new Set(qwenTools(allowedTools));
  const all = new Set(Object.values(TOOL_MAP4).flat());
  const takesAllowed = (t) => (RULE_COVERS[t] ?? []).some((c) => allowed.has(c));
  return [...[...all].filter((t) => !allowed.has(t) && !takesAllowed(t)), ...QWEN_EXCLUDED];
}
var qwenHome = (input) => path12.join(sessionHome(input), ".qwen");
function qwenSettings() {
  return {
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: { disableAutoUpdate: true, disableUpdateNag: true }
  };
}
function runnerSettings2(env) {
  const dir = env.QWEN_HOME || (env.HOME ? path12.join(env.HOME, ".qwen") : void 0);
  return readJsonObject(dir && path12.join(dir, "settings.json")) ?? {};
}
function qwenArgs(input) {
  const viaStdin = Buffer.byteLength(input.prompt, "utf8") > ARG_LIMIT3;
  const args = ["-p", viaStdin ? "Follow the instructions above." : input.prompt];
  args.push("--auth-type", "openai", "--yolo", "-o", "stream-json", "-m", input.model || QWEN_DEFAULT_MODEL);
  if (input.systemPrompt) args.push("--append-system-prompt", input.systemPrompt);
  for (const t of qwenExcludedTools(input.allowedTools)) args.push("--exclude-tools", t);
  if (input.maxTurns !== void 0) args.push("--max-session-turns", String(input.maxTurns));
  for (const dir of sessionWritableDirs(input.cwd, input.forgeEnv)) args.push("--include-directories", dir);
  if (input.resumeSession) args.push("-r", input.resumeSession);
  return viaStdin ? { args, stdin: input.prompt } : { args };
}
function qwenEntry(binary, env) {
  const name = binary ?? "qwen";
  const candidates = name.includes(path12.sep) ? [name] : (env.PATH ?? "").split(path12.delimiter).filter(Boolean).map((d) => path12.join(d, name));
  for (const file of candidates) {
    try {
      accessSync(file, constants2.X_OK);
      return realpathSync2(file);
    } catch {
    }
  }
  return void 0;
}
function qwenRipgrep(binary, env = process.env, platform = process.platform, arch = process.arch) {
  const entry = qwenEntry(binary, env);
  if (!entry) return void 0;
  const rg = path12.join(path12.dirname(entry), "vendor", "ripgrep", `${arch}-${platform}`, platform === "win32" ? "rg.exe" : "rg");
  try {
    const { mode } = statSync(rg);
    const wanted = mode | (mode & 292) >> 2;
    if ((mode & 511) !== (wanted & 511)) chmodSync(rg, wanted & 4095);
    return rg;
  } catch {
    return existsSync4(rg) ? rg : void 0;
  }
}
var qwenAdapter = {
  name: "qwen",
  invocation(input) {
    qwenRipgrep(input.binary, input.parentEnv);
    const home = qwenHome(input);
    mkdirSync5(home, { recursive: true });
    const settings = mergeJson(runnerSettings2(input.parentEnv), qwenSettings());
    writeFileSync4(path12.join(home, "settings.json"), `${JSON.stringify(settings, null, 2)}
`);
    const { args, stdin } = qwenArgs(input);
    return {
      command: input.binary ?? "qwen",
      args,
      env: {
        ...agentEnv(input, QWEN_ENV),
        QWEN_HOME: home,
        // One process: the CLI otherwise starts itself again as a child.
        QWEN_CODE_NO_RELAUNCH: "true",
        QWEN_CODE_SUPPRESS_YOLO_WARNING: "1"
      },
      ...stdin !== void 0 ? { stdin } : {}
    };
  },
  parser: () => new QwenStreamParser()
};
var FORGE_TOOL4 = { write_file: "Write", edit: "Edit", run_shell_command: "Bash", read_file: "Read" };
var QwenStreamParser = class extends StreamJsonParser {
  event(e) {
    const drafts = super.event(e);
    for (const d of drafts) if (d.kind === "tool_use" && d.tool) d.tool = FORGE_TOOL4[d.tool] ?? d.tool;
    if (e.type === "result" && e.usage && typeof e.usage === "object") {
      const u = e.usage;
      const input = typeof u.input_tokens === "number" ? u.input_tokens : 0;
      const output = typeof u.output_tokens === "number" ? u.output_tokens : 0;
      const result = drafts.find((d) => d.kind === "result");
      if (result && (input > 0 || output > 0)) result.tokens = { input, output };
    }
    return drafts;
  }
};

// src/agent/adapters/index.ts
var ADAPTERS = {
  claude: claudeAdapter,
  codex: codexAdapter,
  gemini: geminiAdapter,
  opencode: opencodeAdapter,
  qwen: qwenAdapter,
  copilot: copilotAdapter,
  command: commandAdapter
};
function adapterFor(name) {
  return ADAPTERS[name];
}

// src/agent/forge-shim.ts
import { existsSync as existsSync5 } from "node:fs";
import { chmod as chmod2, mkdir as mkdir3, writeFile as writeFile2 } from "node:fs/promises";
import path13 from "node:path";
import { fileURLToPath as fileURLToPath2 } from "node:url";
function defaultForgeCli() {
  const bin = fileURLToPath2(new URL("../../bin/forge.js", import.meta.url));
  const main = fileURLToPath2(new URL("../../dist/cli/main.js", import.meta.url));
  return existsSync5(bin) && existsSync5(main) ? { command: process.execPath, args: [bin] } : void 0;
}
function shQuote(s) {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
async function writeForgeShim(dir, cli) {
  await mkdir3(dir, { recursive: true });
  const file = path13.join(dir, "forge");
  await writeFile2(file, `#!/bin/sh
exec ${[cli.command, ...cli.args].map(shQuote).join(" ")} "$@"
`, "utf8");
  await chmod2(file, 493);
  return file;
}

// src/agent/hierarchy-service.ts
import { randomBytes as randomBytes4 } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import path14 from "node:path";
var HIERARCHY_ENV = {
  socket: "FORGE_HIERARCHY_SOCKET",
  ticket: "FORGE_HIERARCHY_TICKET"
};
var newTicket = () => randomBytes4(32).toString("hex");
var HierarchyService = class _HierarchyService {
  constructor(dir, server, cap) {
    this.cap = cap;
    this.#dir = dir;
    this.socketPath = path14.join(dir, "s");
    this.#server = server;
  }
  cap;
  socketPath;
  #dir;
  #server;
  #records = /* @__PURE__ */ new Map();
  /**
   * Listens on a socket in a new private folder (mode 0700) under the system's temp folder. `cap`:
   * the job's sub-agent cap (sub-agents.ts), a place taken for every spawn admitted.
   */
  static async start(cap) {
    const dir = await mkdtemp(path14.join(tmpdir(), "forge-h-"));
    const server = net.createServer();
    const service = new _HierarchyService(dir, server, cap);
    server.on("connection", (socket) => service.#serve(socket));
    await new Promise((resolve, reject) => {
      server.once("error", reject);
      server.listen(service.socketPath, () => {
        server.off("error", reject);
        resolve();
      });
    });
    server.unref();
    return service;
  }
  /** Registers a session and returns its ticket. */
  issue(facts) {
    const ticket = newTicket();
    this.#records.set(ticket, { ...facts });
    return ticket;
  }
  decide(req) {
    const caller = this.#records.get(req.ticket);
    if (!caller)
      return {
        ok: false,
        code: "unknown_ticket",
        message: "this agent's hierarchy ticket (FORGE_HIERARCHY_TICKET) is not one Forge issued; sub-agents can only be spawned from the agent Forge started, with its variables intact"
      };
    const claimed = req.claimedType && req.claimedType !== caller.agentType ? ` (FORGE_AGENT_TYPE says ${req.claimedType}, but Forge started this agent as type ${caller.agentType ?? "none"}, and what Forge recorded decides)` : "";
    if (caller.agentType) {
      const child = req.agentType;
      if (!child)
        return {
          ok: false,
          code: "spawn_not_allowed",
          message: `an agent of type ${caller.agentType} must name the type it spawns (--agent-type)${claimed}`,
          caller
        };
      if (!isAgentKind(child) || !mayCallerSpawn(caller.agentType, child)) {
        const allowed = SPAWNABLE_BY[caller.agentType];
        return {
          ok: false,
          code: "spawn_not_allowed",
          message: `an agent of type ${caller.agentType} may not spawn type ${child}${claimed}; it may spawn ${allowed.length ? allowed.join(", ") : "no sub-agents"}`,
          caller
        };
      }
    } else if (req.agentType !== void 0 && !isAgentKind(req.agentType)) {
      return { ok: false, code: "bad_request", message: `unknown agent type ${req.agentType}` };
    }
    const depth = caller.depth + 1;
    const maxDepth = req.maxDepth !== void 0 && Number.isInteger(req.maxDepth) && req.maxDepth >= 0 ? Math.min(req.maxDepth, caller.maxDepth) : caller.maxDepth;
    if (depth > maxDepth)
      return {
        ok: false,
        code: "depth_exceeded",
        message: `spawn depth ${depth} exceeds the budget of ${maxDepth}`,
        caller,
        depth,
        maxDepth
      };
    const capped = this.cap?.take(depth, req.agentType);
    if (capped) return { ok: false, code: "sub_agents_exceeded", message: capped, caller, depth, maxDepth };
    const facts = {
      ...req.agentType ? { agentType: req.agentType } : {},
      depth,
      maxDepth,
      traceId: caller.traceId
    };
    return {
      ok: true,
      ticket: this.issue(facts),
      ...facts,
      caller: { ...caller, allowed: caller.agentType ? [...SPAWNABLE_BY[caller.agentType]] : [] }
    };
  }
  #serve(socket) {
    let buf = "";
    socket.setEncoding("utf8");
    socket.on("error", () => void 0);
    socket.on("data", (chunk) => {
      buf += chunk;
      if (buf.length > 64 * 1024) return void socket.destroy();
      const nl = buf.indexOf("\n");
      if (nl < 0) return;
      let answer;
      try {
        const req = JSON.parse(buf.slice(0, nl));
        answer = req && req.op === "spawn" && typeof req.ticket === "string" ? this.decide(req) : { ok: false, code: "bad_request", message: "unknown request" };
      } catch {
        answer = { ok: false, code: "bad_request", message: "the request is not JSON" };
      }
      socket.end(`${JSON.stringify(answer)}
`);
    });
  }
  async close() {
    await new Promise((resolve) => this.#server.close(() => resolve()));
    await rm(this.#dir, { recursive: true, force: true });
  }
};
function askHierarchy(socketPath, req, timeoutMs = 1e4) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    let buf = "";
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer from ${socketPath} within ${timeoutMs / 1e3} s`));
    }, timeoutMs);
    socket.setEncoding("utf8");
    socket.on("connect", () => socket.write(`${JSON.stringify(req)}
`));
    socket.on("data", (chunk) => buf += chunk);
    socket.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.on("end", () => {
      clearTimeout(timer);
      try {
        resolve(JSON.parse(buf.trim()));
      } catch {
        reject(new Error("the hierarchy service answered something that is not JSON"));
      }
    });
  });
}

// src/agent/spawn/prepare.ts
var JOB_ENV = [
  "FORGE_RUN_ID",
  "FORGE_TASK_ID",
  "FORGE_ATTEMPT",
  "FORGE_BRANCH",
  "FORGE_BASE_REF",
  "FORGE_TASK_FILE",
  MODELS_ENV
];
var ENV_VALUE_LIMIT = 1e5;
async function prepare(sc) {
  const { options } = sc;
  const admitted = await admit(sc);
  if ("done" in admitted) return admitted;
  if (!admitted.ticket) await startService(sc, admitted);
  if (sc.depthCheck.remaining === 0)
    emit(sc, { kind: "system", summary: `depth ${sc.depthCheck.depth} of ${sc.depthCheck.maxDepth}: this agent cannot spawn sub-agents` });
  let cwd = options.cwd;
  if (options.prepareCwd) {
    try {
      cwd = await options.prepareCwd();
    } catch (err) {
      return {
        done: await finish(sc, 1, {
          error: { code: "spawn_failed", message: `could not prepare the agent's working directory: ${err.message}` }
        })
      };
    }
  }
  const reports = { ...defaultReportPaths(sc.sessionDir), ...options.reports };
  const allowedTools = (options.allowedTools ?? allowedToolsFor(options.agentType, options.adapter)).filter((t) => !FORBIDDEN_TOOLS.has(t));
  const forgeEnv = await agentForgeEnv(sc, reports, allowedTools, admitted);
  const shimDir = forgeEnv.FORGE_CLI ? path15.dirname(forgeEnv.FORGE_CLI) : void 0;
  const adapter = adapterFor(options.adapter);
  let invocation;
  try {
    invocation = adapter.invocation({
      prompt: options.prompt,
      ...options.systemPrompt ? { systemPrompt: options.systemPrompt } : {},
      ...options.model ? { model: options.model } : {},
      ...options.modelTier ? { modelTier: options.modelTier } : {},
      cwd,
      allowedTools,
      ...options.maxTurns !== void 0 ? { maxTurns: options.maxTurns } : {},
      parentEnv: sc.parentEnv,
      forgeEnv,
      passEnv: options.passEnv ?? [],
      extraEnv: options.extraEnv ?? {},
      ...options.command ? { command: options.command } : {},
      ...options.args ? { args: options.args } : {},
      ...options.binary ? { binary: options.binary } : {},
      ...options.resumeSession ? { resumeSession: options.resumeSession } : {}
    });
  } catch (err) {
    return { done: await finish(sc, 1, { error: { code: "bad_options", message: err.message } }) };
  }
  if (shimDir) invocation.env.PATH = [shimDir, invocation.env.PATH ?? ""].filter(Boolean).join(path15.delimiter);
  const deadline = options.deadline ?? sc.started.getTime() + (options.timeoutMs ?? 30 * 6e4);
  emit(sc, {
    kind: "start",
    summary: `${options.adapter}${options.agentType ? ` type ${options.agentType}` : ""} at depth ${sc.depthCheck.depth}/${sc.depthCheck.maxDepth}`
  });
  return { cwd, reports, adapter, invocation, deadline };
}
async function admit(sc) {
  const { options, parentEnv } = sc;
  const socket = parentEnv[HIERARCHY_ENV.socket];
  const ticket = parentEnv[HIERARCHY_ENV.ticket];
  const claimed = parentEnv[ENV.agentType] || void 0;
  const refuse = async (code2, message) => ({
    done: await finish(sc, 2, { error: { code: code2, message } })
  });
  const child = {};
  if (socket && ticket) {
    let answer;
    try {
      answer = await askHierarchy(socket, {
        op: "spawn",
        ticket,
        ...options.agentType ? { agentType: options.agentType } : {},
        ...options.maxDepth !== void 0 ? { maxDepth: options.maxDepth } : {},
        ...claimed ? { claimedType: claimed } : {}
      });
    } catch (err) {
      return refuse(
        "spawn_not_allowed",
        `cannot reach Forge's hierarchy service (${err.message}); a sub-agent can only be spawned while the agent Forge started is running`
      );
    }
    if (!answer.ok) {
      if (answer.depth !== void 0 && answer.maxDepth !== void 0)
        sc.depthCheck = { depth: answer.depth, maxDepth: answer.maxDepth, ok: answer.code !== "depth_exceeded", remaining: 0 };
      if (answer.caller) sc.traceId = answer.caller.traceId;
      return refuse(
        answer.code === "depth_exceeded" || answer.code === "sub_agents_exceeded" ? answer.code : "spawn_not_allowed",
        answer.message
      );
    }
    sc.traceId = answer.traceId;
    sc.depthCheck = { depth: answer.depth, maxDepth: answer.maxDepth, ok: true, remaining: Math.max(0, answer.maxDepth - answer.depth) };
    child.ticket = answer.ticket;
    child.socket = socket;
  } else if (claimed && options.caller === void 0) {
    return refuse(
      "spawn_not_allowed",
      `FORGE_AGENT_TYPE=${claimed} is set but this process carries no hierarchy ticket from Forge (${HIERARCHY_ENV.ticket}, ${HIERARCHY_ENV.socket}); an agent's type is what Forge recorded when it started it, not an environment variable`
    );
  } else if (options.caller !== void 0) {
    const type = options.agentType;
    if (!type || !mayCallerSpawn(options.caller, type)) {
      return refuse(
        "spawn_not_allowed",
        !type ? `an agent of type ${options.caller} must name the type it spawns (--agent-type)` : `an agent of type ${options.caller} may not spawn type ${type}`
      );
    }
  }
  if (!sc.depthCheck.ok)
    return refuse("depth_exceeded", `spawn depth ${sc.depthCheck.depth} exceeds the budget of ${sc.depthCheck.maxDepth}`);
  if (options.caller !== void 0) {
    const capped = options.subAgents?.take(sc.depthCheck.depth, options.agentType);
    if (capped) return refuse("sub_agents_exceeded", capped);
  }
  return child;
}
async function startService(sc, child) {
  const { options, depthCheck } = sc;
  try {
    sc.service = await HierarchyService.start(options.subAgents);
    child.ticket = sc.service.issue({
      ...options.agentType ? { agentType: options.agentType } : {},
      depth: depthCheck.depth,
      maxDepth: depthCheck.maxDepth,
      traceId: sc.traceId
    });
    child.socket = sc.service.socketPath;
  } catch (err) {
    emit(sc, { kind: "system", summary: `no hierarchy service (${err.message}): this agent cannot spawn sub-agents` });
  }
}
async function agentForgeEnv(sc, reports, allowedTools, child) {
  const { options, sessionDir, depthCheck } = sc;
  const promptFile = path15.join(sessionDir, "prompt.md");
  const systemPromptFile = path15.join(sessionDir, "system-prompt.md");
  await writeFile3(promptFile, sc.masker.mask(options.prompt), "utf8");
  if (options.systemPrompt) await writeFile3(systemPromptFile, sc.masker.mask(options.systemPrompt), "utf8");
  const forgeEnv = {
    FORGE_SESSION_DIR: sessionDir,
    FORGE_SPAWN_DEPTH: String(depthCheck.depth),
    FORGE_MAX_DEPTH: String(depthCheck.maxDepth),
    FORGE_TRACE_ID: sc.traceId,
    FORGE_PROMPT_FILE: promptFile,
    FORGE_ALLOWED_TOOLS: allowedTools.join(","),
    FORGE_WALKTHROUGH_PATH: reports.walkthrough,
    FORGE_QUESTION_FILE: reports.question,
    FORGE_CHANGE_REQUEST_FILE: reports.changeRequest,
    FORGE_REFINEMENT_FILE: reports.refinement,
    FORGE_SIGNAL_DIR: sessionDir,
    FORGE_ADAPTER: options.adapter,
    FORGE_SPAWN_NAME: sc.name
  };
  for (const k of JOB_ENV) {
    const v = sc.parentEnv[k];
    if (v) forgeEnv[k] = v;
  }
  if (options.adapter === "command" && options.command) forgeEnv.FORGE_COMMAND = options.command;
  if (options.binary) forgeEnv.FORGE_AGENT_BINARY = options.binary;
  if (options.prompt.length <= ENV_VALUE_LIMIT) forgeEnv.FORGE_PROMPT = options.prompt;
  if (options.systemPrompt) {
    forgeEnv.FORGE_SYSTEM_PROMPT_FILE = systemPromptFile;
    if (options.systemPrompt.length <= ENV_VALUE_LIMIT) forgeEnv.FORGE_SYSTEM_PROMPT = options.systemPrompt;
  }
  if (options.model) forgeEnv.FORGE_MODEL = options.model;
  if (options.modelTier) forgeEnv.FORGE_MODEL_TIER = options.modelTier;
  if (options.agentType) forgeEnv.FORGE_AGENT_TYPE = options.agentType;
  if (child.ticket && child.socket) {
    forgeEnv[HIERARCHY_ENV.socket] = child.socket;
    forgeEnv[HIERARCHY_ENV.ticket] = child.ticket;
  }
  if (options.maxTurns !== void 0) forgeEnv.FORGE_MAX_TURNS = String(options.maxTurns);
  const cli = options.forgeCli === false ? void 0 : typeof options.forgeCli === "string" ? { command: process.execPath, args: [options.forgeCli] } : options.forgeCli ?? defaultForgeCli();
  if (cli) forgeEnv.FORGE_CLI = await writeForgeShim(path15.join(sessionDir, ".bin"), cli);
  return forgeEnv;
}

// src/agent/spawn/run.ts
import { mkdirSync as mkdirSync6 } from "node:fs";
import { stat as stat3 } from "node:fs/promises";
import path17 from "node:path";

// src/agent/agent-sessions.ts
import { mkdir as mkdir4, readdir as readdir2, writeFile as writeFile4 } from "node:fs/promises";
import path16 from "node:path";
var AGENT_SESSION_DIR = "agent-session";
var MAX_CARRIED_SESSION_BYTES = 8e6;
var SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
function claudeConfigDir(env) {
  return env.CLAUDE_CONFIG_DIR || (env.HOME ? path16.join(env.HOME, ".claude") : void 0);
}
function codexHome(env) {
  return env.CODEX_HOME || (env.HOME ? path16.join(env.HOME, ".codex") : void 0);
}
function geminiDir(env) {
  const home = env.GEMINI_CLI_HOME || env.HOME;
  return home ? path16.join(home, ".gemini") : void 0;
}
function copilotDir(env) {
  return env.COPILOT_HOME || (env.HOME ? path16.join(env.HOME, ".copilot") : void 0);
}
var geminiProjectDir = (cwd) => (path16.basename(cwd) || "project").toLowerCase().replace(/[^a-z0-9]/g, "-").replace(/-+/g, "-").replace(/^-|-$/g, "") || "project";
function qwenDir(env) {
  return env.QWEN_HOME || (env.HOME ? path16.join(env.HOME, ".qwen") : void 0);
}
var claudeProjectDir = (cwd) => cwd.replace(/[^A-Za-z0-9]/g, "-");
async function findFile(dir, match, depth) {
  const entries = await readdir2(dir, { withFileTypes: true }).catch(() => []);
  for (const e of entries) if (e.isFile() && match(e.name)) return path16.join(dir, e.name);
  if (depth <= 0) return void 0;
  for (const e of entries) {
    if (!e.isDirectory()) continue;
    const found = await findFile(path16.join(dir, e.name), match, depth - 1);
    if (found) return found;
  }
  return void 0;
}
async function sessionFileOf(adapter, env, id) {
  if (!SAFE_ID.test(id)) return void 0;
  if (adapter === "claude") {
    const dir = claudeConfigDir(env);
    return dir ? findFile(path16.join(dir, "projects"), (n) => n === `${id}.jsonl`, 1) : void 0;
  }
  if (adapter === "codex") {
    const dir = codexHome(env);
    return dir ? findFile(path16.join(dir, "sessions"), (n) => n.startsWith("rollout-") && n.endsWith(`-${id}.jsonl`), 4) : void 0;
  }
  if (adapter === "gemini") {
    const dir = geminiDir(env);
    const short = id.slice(0, 8);
    return dir ? findFile(path16.join(dir, "tmp"), (n) => n.startsWith("session-") && n.endsWith(`-${short}.jsonl`), 2) : void 0;
  }
  if (adapter === "qwen") {
    const dir = qwenDir(env);
    return dir ? findFile(path16.join(dir, "projects"), (n) => n === `${id}.jsonl`, 2) : void 0;
  }
  if (adapter === "copilot") {
    const dir = copilotDir(env);
    return dir ? findFile(path16.join(dir, "session-state", id), (n) => n === "events.jsonl", 0) : void 0;
  }
  return void 0;
}
async function carrySession(adapter, env, id, sessionDir, masker) {
  const file = await sessionFileOf(adapter, env, id);
  if (!file) return { why: "the CLI left no conversation file" };
  const buf = await readAgentFile(path16.dirname(file), file, { maxBytes: MAX_CARRIED_SESSION_BYTES }).catch((e) => e);
  if (buf instanceof Error) return { why: `its conversation was not carried: ${buf.message}` };
  if (!buf) return { why: "its conversation file could not be read" };
  const name = adapter === "gemini" ? `session-${id}.jsonl` : adapter === "copilot" ? `${id}.jsonl` : path16.basename(file);
  const dest = path16.join(sessionDir, AGENT_SESSION_DIR, `${adapter}-${name}`);
  await mkdir4(path16.dirname(dest), { recursive: true });
  await writeFile4(dest, scrubSession(buf.toString("utf8"), masker));
  return { file: dest };
}
function scrubSession(text, masker) {
  const out = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    const masked = masker.mask(line);
    try {
      JSON.parse(masked);
      out.push(masked);
    } catch {
    }
  }
  return out.length ? `${out.join("\n")}
` : "";
}
async function restoreSession(adapter, carried, carriedName, env, cwd, id) {
  if (!SAFE_ID.test(id)) return void 0;
  let dest;
  if (adapter === "claude") {
    const dir = claudeConfigDir(env);
    if (dir) dest = path16.join(dir, "projects", claudeProjectDir(cwd), `${id}.jsonl`);
  } else if (adapter === "codex") {
    const dir = codexHome(env);
    const name = carriedName.replace(/^codex-/, "");
    const date = /^rollout-(\d{4})-(\d{2})-(\d{2})T/.exec(name);
    if (dir && date && name.endsWith(`-${id}.jsonl`)) dest = path16.join(dir, "sessions", date[1], date[2], date[3], name);
  } else if (adapter === "gemini") {
    const dir = geminiDir(env);
    if (dir) dest = path16.join(dir, "tmp", geminiProjectDir(cwd), "chats", `session-${id}.jsonl`);
  } else if (adapter === "qwen") {
    const dir = qwenDir(env);
    if (dir) dest = path16.join(dir, "projects", claudeProjectDir(cwd), "chats", `${id}.jsonl`);
  } else if (adapter === "copilot") {
    const dir = copilotDir(env);
    if (dir) dest = path16.join(dir, "session-state", id, "events.jsonl");
  }
  if (!dest) return void 0;
  await mkdir4(path16.dirname(dest), { recursive: true });
  await writeFile4(dest, carried);
  return dest;
}

// src/agent/process.ts
import { spawn } from "node:child_process";
function runProcess(options) {
  const t0 = Date.now();
  return new Promise((resolve) => {
    let settled = false;
    let stopped;
    let lastOutput = Date.now();
    let silentMs;
    const timers = [];
    let child;
    try {
      child = spawn(options.command, options.args, {
        cwd: options.cwd,
        env: options.env,
        stdio: ["pipe", "pipe", "pipe"],
        detached: process.platform !== "win32"
      });
    } catch (err2) {
      resolve({ code: null, signal: null, spawnError: err2, durationMs: Date.now() - t0 });
      return;
    }
    const finish2 = (outcome) => {
      if (settled) return;
      settled = true;
      for (const t of timers) clearTimeout(t);
      clearInterval(idleCheck);
      options.signal?.removeEventListener("abort", onAbort);
      resolve({ ...outcome, durationMs: Date.now() - t0 });
    };
    const killGroup = (sig) => {
      if (child.pid === void 0) return;
      if (options.signalGroup) {
        options.signalGroup(child.pid, sig);
        return;
      }
      try {
        if (process.platform !== "win32") process.kill(-child.pid, sig);
        else child.kill(sig);
      } catch {
        try {
          child.kill(sig);
        } catch {
        }
      }
    };
    const stop = (why) => {
      if (stopped || settled) return;
      stopped = why;
      if (why === "idle") silentMs = Date.now() - lastOutput;
      killGroup("SIGTERM");
      const hard = setTimeout(() => killGroup("SIGKILL"), options.killGraceMs ?? 2e3);
      hard.unref();
      timers.push(hard);
    };
    const onAbort = () => stop("aborted");
    if (options.signal?.aborted) queueMicrotask(onAbort);
    else options.signal?.addEventListener("abort", onAbort, { once: true });
    if (options.timeoutMs !== void 0 && options.timeoutMs > 0) timers.push(setTimeout(() => stop("timeout"), options.timeoutMs));
    const idle = options.idleTimeoutMs;
    const idleCheck = setInterval(
      () => {
        if (idle === void 0 || idle <= 0) return;
        const limit = options.isBusy?.() ? Math.max(idle, options.busyIdleTimeoutMs ?? idle) : idle;
        if (Date.now() - lastOutput >= limit) stop("idle");
      },
      idle !== void 0 && idle > 0 ? Math.max(20, Math.min(1e3, Math.floor(idle / 10))) : 6e4
    );
    const lineReader = (onLine) => {
      let buf = "";
      return {
        data(chunk) {
          lastOutput = Date.now();
          buf += chunk.toString("utf8");
          let nl;
          while ((nl = buf.indexOf("\n")) >= 0) {
            const line = buf.slice(0, nl).replace(/\r$/, "");
            buf = buf.slice(nl + 1);
            onLine?.(line);
          }
          const max = options.maxLineBytes;
          while (max !== void 0 && buf.length > max) {
            onLine?.(buf.slice(0, max));
            buf = buf.slice(max);
          }
        },
        end() {
          if (buf.length > 0) onLine?.(buf);
          buf = "";
        }
      };
    };
    const out = lineReader(options.onStdoutLine);
    const err = lineReader(options.onStderrLine);
    child.stdout.on("data", out.data);
    child.stderr.on("data", err.data);
    child.stdin.on("error", () => void 0);
    child.stdin.end(options.stdin ?? "");
    child.on("error", (e) => finish2({ code: null, signal: null, spawnError: e }));
    child.on("exit", (code2, signal) => {
      const drain = setTimeout(() => {
        killGroup("SIGKILL");
        out.end();
        err.end();
        finish2({ code: code2, signal, ...stopped ? { stopped } : {}, ...silentMs !== void 0 ? { silentMs } : {} });
      }, 2e3);
      drain.unref();
      timers.push(drain);
    });
    child.on("close", (code2, signal) => {
      out.end();
      err.end();
      finish2({ code: code2, signal, ...stopped ? { stopped } : {}, ...silentMs !== void 0 ? { silentMs } : {} });
    });
  });
}

// src/agent/spawn/run.ts
async function runAgentOnce(sc, p) {
  const { options } = sc;
  const remaining = options.timeoutMs !== void 0 ? options.timeoutMs - (Date.now() - sc.started.getTime()) : void 0;
  if (remaining !== void 0 && remaining <= 0) {
    return {
      done: await finish(sc, 21, {
        timedOut: "wall",
        rateLimitRetries: sc.rateLimitRetries,
        error: { code: "timeout", message: "wall-clock limit reached while waiting" }
      })
    };
  }
  const parser = p.adapter.parser(p.invocation);
  const stderrTail = [];
  const runStart = Date.now();
  const isolated = asIsolated(sc, p);
  const env = isolated?.env ?? p.invocation.env;
  if (options.resumeSession && options.resumeFile) await restoreCarried(sc, p, env);
  if (isolated) {
    await handOver(isolated.user, isolated.dirs);
    const why = await unreachableCommand(isolated.user, p.invocation.command, p.invocation.args, env);
    if (why) {
      await takeBack(isolated.user, isolated.dirs);
      return { done: await finish(sc, EXIT_CODES.FAILURE, { error: { code: "spawn_failed", message: why } }) };
    }
  }
  const outcome = await runProcess({
    command: isolated?.command ?? p.invocation.command,
    args: isolated?.args ?? p.invocation.args,
    cwd: p.cwd,
    env,
    ...isolated ? { signalGroup: (pgid, sig) => void signalAgentGroup(isolated.user, pgid, sig) } : {},
    ...p.invocation.stdin !== void 0 ? { stdin: p.invocation.stdin } : {},
    ...remaining !== void 0 ? { timeoutMs: remaining } : {},
    ...options.idleTimeoutMs !== void 0 ? { idleTimeoutMs: options.idleTimeoutMs } : {},
    busyIdleTimeoutMs: options.toolIdleTimeoutMs ?? 10 * 6e4,
    isBusy: () => parser.busy?.() ?? false,
    ...options.signal ? { signal: options.signal } : {},
    onStdoutLine: (line) => {
      if (!isPartialChunk(line)) sc.transcript.write(`${sc.masker.mask(line)}
`);
      for (const d of parser.stdoutLine(line)) {
        sc.turn = parser.turns();
        emit(sc, d);
      }
    },
    onStderrLine: (line) => {
      sc.transcript.write(`[stderr] ${sc.masker.mask(line)}
`);
      stderrTail.push(line);
      if (stderrTail.length > 50) stderrTail.shift();
      for (const d of parser.stderrLine(line)) emit(sc, d);
    }
  });
  if (isolated) await endIsolated(sc, isolated);
  const parsed = parser.finish(outcome.code);
  for (const d of parser.afterExit?.() ?? []) emit(sc, d);
  if (parsed.sessionId && options.adapter !== "command") {
    const carried = await carrySession(options.adapter, env, parsed.sessionId, sc.sessionDir, sc.masker).catch((e) => ({
      why: e.message
    }));
    if (carried.why) emit(sc, { kind: "system", summary: `session ${parsed.sessionId} not carried: ${carried.why}` });
  }
  const common = {
    rateLimitRetries: sc.rateLimitRetries,
    ...parsed.result !== void 0 ? { result: parsed.result } : {},
    ...parsed.model ?? options.model ? { model: parsed.model ?? options.model } : {},
    ...parsed.turns !== void 0 ? { turns: parsed.turns } : {},
    ...parsed.costUsd !== void 0 ? { costUsd: parsed.costUsd } : {},
    ...parsed.sessionId ? { sessionId: parsed.sessionId } : {}
  };
  const written = await reportsWritten(p.reports, runStart - 50);
  return { outcome, parsed, stderrTail, common, written };
}
function asIsolated(sc, p) {
  const user = sc.options.runAs;
  if (!user || process.getuid?.() === user.uid) return void 0;
  const home = path17.join(sc.sessionDir, "home");
  const tmp = path17.join(sc.sessionDir, "tmp");
  mkdirSync6(home, { recursive: true });
  mkdirSync6(tmp, { recursive: true });
  const env = {
    ...p.invocation.env,
    HOME: p.invocation.env.HOME && p.invocation.env.HOME !== process.env.HOME ? p.invocation.env.HOME : home,
    TMPDIR: tmp,
    USER: user.user,
    LOGNAME: user.user
  };
  const socket = env[HIERARCHY_ENV.socket];
  const dirs = [
    p.cwd,
    sc.sessionDir,
    ...Object.values(p.reports).map((f) => path17.dirname(f)),
    ...socket ? [path17.dirname(socket)] : [],
    ...env.HOME !== home ? [env.HOME] : []
  ];
  return { user, ...asAgentUser(user, p.invocation.command, p.invocation.args, env), env, dirs };
}
async function endIsolated(sc, isolated) {
  const left = await killAgentProcesses(isolated.user);
  if (left.length) emit(sc, { kind: "system", summary: `processes of ${isolated.user.user} outlived every kill: ${left.join(", ")}` });
  await takeBack(isolated.user, isolated.dirs);
}
async function reportsWritten(reports, sinceMs) {
  const out = {};
  for (const key of Object.keys(reports)) {
    const s = await stat3(reports[key]).catch(() => void 0);
    if (s && s.isFile() && s.mtimeMs >= sinceMs) out[key] = reports[key];
  }
  return out;
}
async function restoreCarried(sc, p, env) {
  const { resumeSession, resumeFile, adapter } = sc.options;
  if (!resumeSession || !resumeFile) return;
  const buf = await readAgentFile(resumeFile.root, resumeFile.path, { maxBytes: MAX_CARRIED_SESSION_BYTES }).catch(() => void 0);
  const dest = buf ? await restoreSession(adapter, buf, path17.basename(resumeFile.path), env, p.cwd, resumeSession).catch(() => void 0) : void 0;
  emit(sc, {
    kind: "system",
    summary: dest ? `resuming session ${resumeSession} from its carried conversation` : `resuming session ${resumeSession}: no carried conversation restored`
  });
}

// src/agent/spawn/index.ts
async function spawnAgent(options) {
  const model = options.modelSession?.();
  try {
    return await spawnOnce(model ? { ...options, extraEnv: { ...options.extraEnv, ...model.env } } : options);
  } finally {
    model?.end();
  }
}
async function spawnOnce(options) {
  const sc = await openSpawn(options);
  const prepared = await prepare(sc);
  if ("done" in prepared) return prepared.done;
  for (; ; ) {
    const run = await runAgentOnce(sc, prepared);
    if ("done" in run) return run.done;
    const end = await collect(sc, prepared, run);
    if (end !== "again") return end;
  }
}

// src/agent/branches.ts
import { execFile as execFile2 } from "node:child_process";
function git(cwd, args, env) {
  return new Promise((resolve) => {
    execFile2("git", args, { cwd, env: env ?? process.env, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code2 = err ? typeof err.code === "number" ? err.code : 1 : 0;
      resolve({ code: code2, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}
async function gitOk(cwd, args, run = git) {
  const r = await run(cwd, args);
  if (r.code !== 0) throw gitFailed(args, r);
  return r.stdout.trim();
}
function gitFailed(args, result) {
  const tail = (result.stderr || result.stdout).trim().split("\n").slice(-3).join(" | ");
  return new GitError(`git ${args.join(" ")} failed (${result.code}): ${tail}`, args, result.code, result.stderr);
}
async function identity(cwd, run = git) {
  const email = await run(cwd, ["config", "user.email"]);
  return email.code === 0 && email.stdout.trim() ? [] : ["-c", "user.name=Forge", "-c", "user.email=forge@users.noreply.github.com"];
}
function subBranchName(parentBranch, sub) {
  const slug = sub.toLowerCase().replace(/[^a-z0-9._-]+/g, "-").replace(/^[-.]+|[-.]+$/g, "") || "sub";
  return `${parentBranch}-${slug}`;
}
async function currentBranch(cwd, run = git) {
  return gitOk(cwd, ["rev-parse", "--abbrev-ref", "HEAD"], run);
}
async function startSubBranch(cwd, parentBranch, sub, run = git) {
  const name = subBranchName(parentBranch, sub);
  const head = await currentBranch(cwd, run);
  if (head !== parentBranch) throw new Error(`expected ${parentBranch} to be checked out, found ${head}`);
  await gitOk(cwd, ["checkout", "-q", "-B", name], run);
  return name;
}
async function commitAll(cwd, message, run = git) {
  await gitOk(cwd, ["add", "-A"], run);
  const staged = await run(cwd, ["diff", "--cached", "--quiet"]);
  if (staged.code === 0) return null;
  await gitOk(cwd, [...await identity(cwd, run), "commit", "-q", "--no-verify", "-m", message], run);
  return gitOk(cwd, ["rev-parse", "HEAD"], run);
}
async function conflictedFiles(cwd, run = git) {
  const out = await run(cwd, ["diff", "--name-only", "--diff-filter=U"]);
  return out.stdout.split("\n").map((l) => l.trim()).filter(Boolean);
}
async function mergeRef(cwd, ref, message, run = git) {
  const before = await gitOk(cwd, ["rev-parse", "HEAD"], run);
  const r = await run(cwd, [...await identity(cwd, run), "merge", "--no-ff", "--no-edit", ...message ? ["-m", message] : [], ref]);
  if (r.code !== 0) {
    const conflicts = await conflictedFiles(cwd, run);
    if (conflicts.length === 0) throw gitFailed(["merge", ref], r);
    return { merged: false, conflicts };
  }
  const head = await gitOk(cwd, ["rev-parse", "HEAD"], run);
  return { merged: true, head, changed: head !== before };
}
async function concludeMerge(cwd, run = git) {
  await gitOk(cwd, ["add", "-A"], run);
  const left = await conflictedFiles(cwd, run);
  const markers = await run(cwd, ["diff", "--cached", "--check"]);
  if (left.length > 0 || /conflict marker/i.test(markers.stdout)) {
    return { merged: false, conflicts: left.length > 0 ? left : parseMarkerFiles(markers.stdout) };
  }
  await gitOk(cwd, [...await identity(cwd, run), "commit", "-q", "--no-verify", "--no-edit"], run);
  return { merged: true, head: await gitOk(cwd, ["rev-parse", "HEAD"], run), changed: true };
}
function parseMarkerFiles(check) {
  return [
    ...new Set(
      check.split("\n").filter((l) => /conflict marker/i.test(l)).map((l) => l.split(":")[0])
    )
  ];
}
async function abortMerge(cwd, run = git) {
  await run(cwd, ["merge", "--abort"]);
}
async function finishSubBranch(cwd, parentBranch, subBranch, message, run = git) {
  await commitAll(cwd, message, run);
  await gitOk(cwd, ["checkout", "-q", parentBranch], run);
  return mergeRef(cwd, subBranch, `Merge ${subBranch} into ${parentBranch}`, run);
}
async function forgeCheckoutOf(cwd, taskBranch) {
  if (!taskBranch) return void 0;
  const top = await git(cwd, ["rev-parse", "--show-toplevel"]);
  if (top.code !== 0) return void 0;
  const repoDir = top.stdout.trim();
  const branch = await git(repoDir, ["symbolic-ref", "--quiet", "--short", "HEAD"]);
  const name = branch.stdout.trim();
  if (branch.code !== 0 || !(name === taskBranch || name.startsWith(`${taskBranch}-`))) return void 0;
  return { repoDir, branch: name };
}
async function branchExists(cwd, name) {
  return (await git(cwd, ["show-ref", "--verify", "--quiet", `refs/heads/${name}`])).code === 0;
}
async function startSubWorktree(repoDir, parentBranch, sub, worktreeDir, parentMessage) {
  await commitAll(repoDir, parentMessage);
  const base = await gitOk(repoDir, ["rev-parse", "HEAD"]);
  const first = subBranchName(parentBranch, sub);
  let branch = first;
  for (let n = 2; await branchExists(repoDir, branch); n++) branch = `${first}-${n}`;
  await gitOk(repoDir, ["worktree", "add", "--quiet", "-b", branch, worktreeDir, base]);
  return { repoDir, dir: worktreeDir, parentBranch, branch, base };
}
async function finishSubWorktree(wt, message, merge) {
  await commitAll(wt.dir, message).catch(() => null);
  const head = (await git(wt.dir, ["rev-parse", "HEAD"])).stdout.trim() || wt.base;
  await git(wt.repoDir, ["worktree", "remove", "--force", wt.dir]);
  await git(wt.repoDir, ["worktree", "prune"]);
  const report = { branch: wt.branch, parent_branch: wt.parentBranch, head };
  if (!merge.merge) return { ...report, merged: false, error: merge.reason };
  const current = await git(wt.repoDir, ["symbolic-ref", "--quiet", "--short", "HEAD"]);
  if (current.stdout.trim() !== wt.parentBranch) {
    return {
      ...report,
      merged: false,
      error: `the parent's checkout is no longer on ${wt.parentBranch} (found ${current.stdout.trim() || "a detached HEAD"}); merge ${wt.branch} by hand`
    };
  }
  try {
    const m = await mergeRef(wt.repoDir, wt.branch, `Merge ${wt.branch} into ${wt.parentBranch}`);
    if (m.merged) return { ...report, merged: true };
    await abortMerge(wt.repoDir);
    return {
      ...report,
      merged: false,
      conflicts: m.conflicts,
      error: `merging ${wt.branch} into ${wt.parentBranch} conflicted in ${m.conflicts.join(", ")}; the merge was aborted and the work stays on ${wt.branch} (git merge ${wt.branch} to resolve it)`
    };
  } catch (err) {
    return { ...report, merged: false, error: `could not merge ${wt.branch} into ${wt.parentBranch}: ${err.message}` };
  }
}

// src/core/plan/load.ts
import { readFileSync as readFileSync2, readdirSync as readdirSync2, statSync as statSync2 } from "node:fs";
import path18 from "node:path";
var PlanNotFoundError = class extends Error {
  constructor(planDir, message) {
    super(message);
    this.planDir = planDir;
    this.name = "PlanNotFoundError";
  }
  planDir;
};
async function loadPlan(planDir) {
  return parsePlan(await readPlanSource(planDir));
}
async function readPlanSource(planDir) {
  const dir = path18.resolve(planDir);
  const info = statSync2(dir, { throwIfNoEntry: false });
  if (!info) throw new PlanNotFoundError(planDir, `plan folder ${planDir} does not exist`);
  if (!info.isDirectory()) throw new PlanNotFoundError(planDir, `${planDir} is not a folder`);
  const files = /* @__PURE__ */ new Map();
  const dirs = /* @__PURE__ */ new Set();
  const unreadable = [];
  const read = (rel) => {
    try {
      files.set(rel, readFileSync2(path18.join(dir, rel), "utf8"));
    } catch (err) {
      const e = err;
      unreadable.push({ file: rel, message: `cannot be read: ${e.code ?? e.message}` });
    }
  };
  for (const top of listDir(dir, "", unreadable)) {
    if (top.isFile() && (top.name === "plan.md" || top.name === "dag.json")) read(top.name);
    else if (top.isDirectory() && (top.name === "tasks" || top.name === "overlays")) {
      dirs.add(top.name);
      for (const entry of listDir(path18.join(dir, top.name), top.name, unreadable)) {
        const rel = `${top.name}/${entry.name}`;
        if (entry.isDirectory()) dirs.add(rel);
        else if (entry.name.endsWith(".md")) read(rel);
        else files.set(rel, "");
      }
    } else if (top.isDirectory() && top.name === "specs") {
      dirs.add("specs");
      let entries = [];
      try {
        entries = readdirSync2(path18.join(dir, "specs"), { recursive: true, encoding: "utf8" });
      } catch (err) {
        unreadable.push({ file: "specs/", message: `cannot be read: ${err.code ?? String(err)}` });
      }
      for (const rel of entries.sort()) {
        if (statSync2(path18.join(dir, "specs", rel), { throwIfNoEntry: false })?.isFile())
          files.set(`specs/${rel.split(path18.sep).join("/")}`, "");
      }
    }
  }
  return { planId: path18.basename(dir), files, dirs, unreadable };
}
function listDir(dir, rel, unreadable) {
  try {
    return readdirSync2(dir, { withFileTypes: true }).sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  } catch (err) {
    unreadable.push({ file: rel ? `${rel}/` : ".", message: `cannot be listed: ${err.code ?? String(err)}` });
    return [];
  }
}

export {
  Masker,
  sanitizeUntrusted,
  quoteUntrusted,
  isForbiddenEnvName,
  pickEnv,
  prepareAgentUser,
  asAgentUser,
  signalAgentGroup,
  handOver,
  takeBack,
  killAgentProcesses,
  releaseAgentUser,
  readAgentFileSync,
  assertNoLinks,
  findLinks,
  writeInAgentFolder,
  readAgentFile,
  readAgentText,
  GitError,
  gitFailureKind,
  PlanNotFoundError,
  loadPlan,
  ENV,
  traceIdFrom,
  loadSystemPrompt,
  writeFileAtomic,
  writeSignal,
  ADAPTER_NAMES,
  AGENT_KINDS,
  isAgentKind,
  defaultReportPaths,
  AGENT_SESSION_DIR,
  MAX_CARRIED_SESSION_BYTES,
  runProcess,
  spawnAgent,
  git,
  gitOk,
  identity,
  startSubBranch,
  conflictedFiles,
  mergeRef,
  concludeMerge,
  parseMarkerFiles,
  abortMerge,
  finishSubBranch,
  forgeCheckoutOf,
  startSubWorktree,
  finishSubWorktree
};
