// Authentication and authorization as GitHub applies them to Apps, installation tokens, workflow
// GITHUB_TOKENs and people.
import { createPublicKey, randomBytes, verify } from "node:crypto";
import type { App, Level, Permissions, Repo, Role, SimState, Token, User } from "./state.js";

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly doc = "https://docs.github.com/rest",
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

function b64urlJson(part: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(part, "base64url").toString("utf8")) as Record<string, unknown>;
}

/**
 * Verifies a GitHub App JWT. GitHub requires RS256, `iss` = the App's id (or client id),
 * `iat` not in the future (they advise back-dating 60 s for drift) and `exp` at most 10 minutes
 * after `iat` — "Generating a JSON Web Token (JWT) for a GitHub App", docs.github.com.
 */
// eslint-disable-next-line no-restricted-properties -- a JWT is made on the real clock (Octokit's auth)
export function verifyAppJwt(state: SimState, jwt: string, nowSec = Math.floor(Date.now() / 1000)): App {
  const doc = "https://docs.github.com/rest";
  const parts = jwt.split(".");
  if (parts.length !== 3) throw new HttpError(401, "A JSON web token could not be decoded", doc);
  let header: Record<string, unknown>;
  let payload: Record<string, unknown>;
  try {
    header = b64urlJson(parts[0]!);
    payload = b64urlJson(parts[1]!);
  } catch {
    throw new HttpError(401, "A JSON web token could not be decoded", doc);
  }
  if (header.alg !== "RS256") throw new HttpError(401, "A JSON web token could not be decoded", doc);
  const iss = payload.iss;
  const app = [...state.apps.values()].find((a) => String(a.id) === String(iss) || a.clientId === iss);
  if (!app) throw new HttpError(401, "Integration not found", doc);
  const ok = verify(
    "RSA-SHA256",
    Buffer.from(`${parts[0]}.${parts[1]}`),
    createPublicKey(app.publicKeyPem),
    Buffer.from(parts[2]!, "base64url"),
  );
  if (!ok) throw new HttpError(401, "A JSON web token could not be decoded", doc);
  const { iat, exp } = payload;
  if (typeof iat !== "number" || !Number.isInteger(iat))
    throw new HttpError(401, "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued.", doc);
  if (typeof exp !== "number" || !Number.isInteger(exp))
    throw new HttpError(
      401,
      "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires.",
      doc,
    );
  if (iat > nowSec + 60)
    throw new HttpError(401, "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued.", doc);
  if (exp <= nowSec)
    throw new HttpError(
      401,
      "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires.",
      doc,
    );
  if (exp - iat > 600) throw new HttpError(401, "'Expiration time' claim ('exp') is too far in the future", doc);
  return app;
}

export function newToken(prefix: "ghs" | "ghp" | "gho"): string {
  return `${prefix}_${randomBytes(27).toString("base64url").replace(/[-_]/g, "x").slice(0, 36)}`;
}

/** GitHub's answer to a suspended installation's tokens, and to a new token for it. */
export const SUSPENDED = "This installation has been suspended";

export type Credential = { kind: "none" } | { kind: "jwt"; app: App } | { kind: "token"; token: Token };

/** Reads `Authorization: token X`, `Bearer X` (JWT or token) or `Basic base64(user:X)`. */
export function authenticate(state: SimState, header: string | undefined): Credential {
  if (!header) return { kind: "none" };
  const m = /^(\w+)\s+(.+)$/.exec(header.trim());
  if (!m) throw new HttpError(401, "Bad credentials");
  const scheme = m[1]!.toLowerCase();
  let secret = m[2]!.trim();
  if (scheme === "basic") {
    const decoded = Buffer.from(secret, "base64").toString("utf8");
    secret = decoded.slice(decoded.indexOf(":") + 1);
  } else if (scheme !== "token" && scheme !== "bearer") {
    throw new HttpError(401, "Bad credentials");
  }
  if (secret.split(".").length === 3 && scheme === "bearer") return { kind: "jwt", app: verifyAppJwt(state, secret) };
  const token = state.tokens.get(secret);
  if (!token) throw new HttpError(401, "Bad credentials");
  // eslint-disable-next-line no-restricted-properties -- credentials expire in real time: the clients holding them read the real clock
  if (token.expiresAt <= Date.now()) throw new HttpError(401, "Bad credentials");
  if (token.kind === "installation" && state.installations.get(token.installationId!)?.suspended)
    throw new HttpError(403, SUSPENDED, "https://docs.github.com/apps/maintaining-github-apps/suspending-a-github-app-installation");
  return { kind: "token", token };
}

const levelRank: Record<Level, number> = { read: 1, write: 2, admin: 3 };
const roleRank: Record<Role, number> = { read: 1, triage: 2, write: 3, maintain: 4, admin: 5 };

/** What an operation needs: one of these permissions at this level (installation/workflow tokens). */
export interface Requirement {
  any: Array<[string, Level]>;
  /** level a person needs on the repository */
  role: Role;
}

/**
 * Permission each implemented operation requires, per the "Permissions required for GitHub Apps"
 * reference (docs.github.com/rest/authentication/permissions-required-for-github-apps).
 * Issue endpoints used on pull requests accept either `issues` or `pull_requests`.
 */
/** Operations under the repository's Administration permission. */
const ADMINISTRATION = new Set([
  "actions/get-github-actions-permissions-repository",
  "actions/set-github-actions-permissions-repository",
  "actions/get-allowed-actions-repository",
  "actions/set-allowed-actions-repository",
  "actions/get-github-actions-default-workflow-permissions-repository",
  "actions/set-github-actions-default-workflow-permissions-repository",
  "repos/update",
  "repos/get-branch-protection",
  "repos/update-branch-protection",
  "repos/delete-branch-protection",
]);

export function requirement(operationId: string): Requirement | "jwt" | "installation" | "public" {
  const [group, name] = operationId.split("/") as [string, string];
  const write = /^(create|update|delete|merge|add|set|remove|cancel|rerequest|reprioritize)/.test(name);
  const lvl: Level = write ? "write" : "read";
  const role: Role = write ? "write" : "read";
  // GET /installation/repositories is called with an installation token ("installation");
  // every other App endpoint Forge uses is authenticated as the App itself (JWT).
  if (operationId === "apps/list-repos-accessible-to-installation") return "installation";
  // The manifest conversion is authenticated by its one-time code alone.
  if (operationId === "apps/create-from-manifest") return "public";
  if (group === "apps") return "jwt";
  if (group === "meta" || group === "rate-limit") return "public";
  // Administration ("Repository permissions for Administration"): Actions permissions and branch
  // protection, read and write; a person needs the admin role ("Protecting a branch requires admin
  // or owner permissions to the repository").
  if (ADMINISTRATION.has(operationId)) return { any: [["administration", lvl]], role: "admin" };
  // Secrets ("Repository permissions for Secrets"): a person needs admin, except for the public
  // key — "Anyone with read access to the repository can use this endpoint."
  if (operationId === "actions/get-repo-public-key") return { any: [["secrets", "read"]], role: "read" };
  if (/^actions\/.*-repo-secrets?$/.test(operationId)) return { any: [["secrets", lvl]], role: "admin" };
  // "People with at least triage permissions for a repository can add sub-issues"
  // (docs.github.com/issues/tracking-your-work-with-issues/using-issues/adding-sub-issues).
  if (group === "issues" && write && /sub-issue/.test(name)) return { any: [["issues", "write"]], role: "triage" };
  switch (group) {
    case "repos":
      if (operationId === "repos/get" || operationId === "repos/get-collaborator-permission-level")
        return { any: [["metadata", "read"]], role: "read" };
      if (operationId.includes("status")) return { any: [["statuses", lvl]], role };
      // Rulesets: anyone who can read the repository reads them; creating, updating or deleting one is administration.
      if (/^repos\/(create|update|delete)-repo-ruleset$/.test(operationId)) return { any: [["administration", "write"]], role: "admin" };
      if (operationId.includes("rule")) return { any: [["metadata", "read"]], role: "read" };
      return { any: [["contents", operationId === "repos/merge" ? "write" : lvl]], role };
    case "git":
      return { any: [["contents", lvl]], role };
    case "pulls":
      if (operationId === "pulls/merge" || operationId === "pulls/merge-async") return { any: [["contents", "write"]], role: "write" };
      // "Anyone with read permissions to a repository can create a pull request" (GitHub Docs, "Creating a pull request").
      return {
        any: [["pull_requests", lvl]],
        role: operationId === "pulls/create-review" || operationId === "pulls/create" ? "read" : role,
      };
    case "issues":
    case "reactions":
      // Opening issues and commenting needs only read access for a person on a public repo.
      // (`pull_requests` is accepted instead of `issues` when the target is a pull request; see authorize.)
      return {
        any: [["issues", lvl]],
        role: ["issues/create", "issues/create-comment", "reactions/create-for-issue", "reactions/create-for-issue-comment"].includes(
          operationId,
        )
          ? "read"
          : // "Issue owners and users with push access or Triage role can edit an issue"
            // (docs.github.com/rest/issues/issues#update-an-issue): its author needs only read access;
            // who may change what is checked in rest/issues.ts.
            operationId === "issues/update"
            ? "read"
            : role,
      };
    case "checks":
      return {
        any: [["checks", operationId === "checks/rerequest-run" || operationId === "checks/rerequest-suite" ? "write" : lvl]],
        role,
      };
    case "actions":
      return { any: [["actions", lvl]], role };
    default:
      return { any: [["metadata", "read"]], role: "read" };
  }
}

export function hasPermission(perms: Permissions, name: string, level: Level): boolean {
  const have = perms[name];
  return !!have && levelRank[have] >= levelRank[level];
}

export function roleAtLeast(role: Role | undefined, need: Role): boolean {
  return !!role && roleRank[role] >= roleRank[need];
}

/** Effective role of a user on a repository (owner = admin). */
export function roleOf(repo: Repo, user: User): Role | undefined {
  if (user.id === repo.owner.id) return "admin";
  // An organisation's owners administer every repository it owns.
  if (repo.owner.org?.owners.has(user.login.toLowerCase())) return "admin";
  return repo.collaborators.get(user.login);
}

/**
 * Authorizes a token for an operation on a repository. A repository the token cannot see answers
 * 404 (GitHub hides private repositories); a visible one with a missing permission answers 403
 * "Resource not accessible by integration".
 */
export function authorize(
  state: SimState,
  cred: Credential,
  op: string,
  repo: Repo | undefined,
  docUrl: string,
  targetIsPull = false,
): void {
  const req = requirement(op);
  if (typeof req === "object" && targetIsPull && req.any.some(([n]) => n === "issues")) {
    req.any.push(["pull_requests", req.any.find(([n]) => n === "issues")![1]]);
  }
  if (req === "public") return;
  if (req === "installation") {
    if (cred.kind !== "token" || cred.token.kind !== "installation")
      throw new HttpError(
        403,
        "You must authenticate with an installation access token in order to list repositories for an installation.",
        docUrl,
      );
    return;
  }
  if (req === "jwt") {
    if (cred.kind !== "jwt") {
      throw new HttpError(401, "A JSON web token could not be decoded", docUrl);
    }
    return;
  }
  if (cred.kind === "jwt") throw new HttpError(403, "Resource not accessible by integration", docUrl);
  if (cred.kind === "none") {
    // Anyone may read a public repository — not what only its administrators see.
    if (repo && !repo.private && req.role !== "admin" && req.any.some(([, l]) => l === "read")) return;
    throw new HttpError(401, "Requires authentication", docUrl);
  }
  const t = cred.token;
  if (!repo) return;
  if (t.kind === "user") {
    const role = roleOf(repo, t.actor);
    if (!role && repo.private) throw new HttpError(404, "Not Found", docUrl);
    if (!roleAtLeast(role ?? "read", req.role)) {
      if (!role && repo.private) throw new HttpError(404, "Not Found", docUrl);
      throw new HttpError(
        403,
        req.role === "admin"
          ? "Must have admin rights to Repository."
          : `Must have ${req.role === "read" ? "pull" : req.role === "write" ? "push" : req.role} access to repository`,
        docUrl,
      );
    }
    return;
  }
  if (t.repoIds && !t.repoIds.includes(repo.id)) throw new HttpError(404, "Not Found", docUrl);
  if (t.kind === "installation") {
    const inst = state.installations.get(t.installationId!);
    if (!inst || !state.installationsFor(repo).includes(inst)) throw new HttpError(404, "Not Found", docUrl);
  }
  if (!req.any.some(([name, level]) => hasPermission(t.permissions, name, level))) {
    throw new HttpError(
      403,
      "Resource not accessible by integration",
      docUrl,
      {},
      {
        "x-accepted-github-permissions": req.any.map(([n, l]) => `${n}=${l}`).join("; "),
      },
    );
  }
}
