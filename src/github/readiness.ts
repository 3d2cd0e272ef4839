/**
 * What `forge doctor` reads from GitHub about a repository's readiness for Forge: as the App (its installation on the repository, and that
 * installation's token for what the App may read) and, when given, as a person (a token of a
 * repository admin: the Actions policy, secret names and branch protection need one). Nothing is
 * written. Each read that fails says why, and its check is skipped rather than guessed.
 */
import { Octokit } from "@octokit/rest";
import { Probot } from "probot";
import {
  readBranchRuleFacts,
  readProtection,
  readProtectionSummary,
  readWorkflowFiles,
  readWorkflowPermissions,
  type ProtectionFact,
  type RuleFact,
  type WorkflowFile,
} from "./rules-readiness.js";

export type { Bypass, ProtectionFact, RuleFact, WorkflowFile } from "./rules-readiness.js";

/** Something read, or why it could not be. */
export type Read<T> = { ok: true; value: T } | { ok: false; reason: string };

export interface ReadinessInput {
  owner: string;
  repo: string;
  apiUrl: string;
  app?: { appId: string; privateKey: string };
  token?: string;
  /** The agent workflow's path. */
  workflowPath: string;
  /** Secrets whose existence is checked (names only). */
  secretNames(workflow: string | null): string[];
  /** Forge's config file's path on the default branch. */
  configPath: string;
  /** The branches Forge would use, from its config's text (null: no config file) and the default branch. */
  branches(config: string | null, defaultBranch: string): ForgeBranches;
}

/** A branch of each kind Forge creates, pushes, merges into or opens its final pull request on. */
export interface ForgeBranches {
  /** a run's journal */
  state: string;
  /** a task attempt's (task, refinery, follow-up and Captain branches are named alike) */
  task: string;
  /** the run's integration branch, which task pull requests target */
  integration: string;
  /** the final pull request's base */
  base: string;
}

export interface Readiness {
  repo: string;
  defaultBranch: string;
  /** The installation on the repository (needs the App's credentials); null: not installed. */
  installation: Read<{ permissions: Record<string, string>; events: string[]; appSlug: string; settingsUrl?: string } | null>;
  /** The agent workflow's text on the default branch; null: absent. */
  workflow: Read<string | null>;
  actions: Read<{ enabled: boolean; allowedActions: string; patterns?: string[]; githubOwnedAllowed?: boolean }>;
  /** Forge's config file on the default branch; null: absent. */
  config: Read<string | null>;
  /** The branches whose rules were read. */
  branches: ForgeBranches;
  /**
   * The active rules of each branch and the push rulesets' rules; `asApp`: read with the App's
   * installation token, so each rule's `appBypass` is the App's.
   */
  rules: Read<Record<keyof ForgeBranches, RuleFact[]> & { push: RuleFact[]; asApp: boolean }>;
  /** Which of the secrets the workflow names exist (names only). */
  secrets: Read<Record<string, boolean>>;
  /** The final pull request's base's protection; null: none. */
  protection: Read<ProtectionFact | null>;
  /** The repository's merge settings (GitHub shows them to readers who may push only: undefined otherwise). */
  settings: Read<{ allowMergeCommit?: boolean; allowSquashMerge?: boolean; allowRebaseMerge?: boolean }>;
  /** Actions' workflow permissions (needs the Administration permission). */
  workflowPermissions: Read<{ defaultPermissions: "read" | "write"; canApprovePullRequests: boolean }>;
  /** The workflow files on the default branch. */
  workflows: Read<WorkflowFile[]>;
}

/** A 404 is an answer here (no secret, no protection): nothing is logged, each failure is reported by its check. */
const QUIET = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

const status = (e: unknown): number | undefined => (e as { status?: number }).status;

/**
 * Why a read failed, in words: a refused credential (401), GitHub out of reach (Octokit reports a
 * request that got no answer as status 500 with no response: "fetch failed", ECONNREFUSED…), or what
 * GitHub answered.
 */
export function readFailure(e: unknown, apiUrl: string): string {
  const s = status(e);
  const msg = (e as Error).message?.split("\n")[0]?.slice(0, 160) ?? String(e);
  if (s === 401) return `GitHub answered 401: the credentials were refused (${msg})`;
  if ((s === undefined || s === 500) && !(e as { response?: unknown }).response) return `${apiUrl} could not be reached (${msg})`;
  return s ? `GitHub answered ${s} (${msg})` : msg;
}

async function read<T>(f: () => Promise<T>, apiUrl: string): Promise<Read<T>> {
  try {
    return { ok: true, value: await f() };
  } catch (e) {
    return { ok: false, reason: readFailure(e, apiUrl) };
  }
}

/** The first reader that answers; the reasons of all when none does. */
async function firstOf<T>(readers: (() => Promise<T>)[], none: string, apiUrl: string): Promise<Read<T>> {
  if (!readers.length) return { ok: false, reason: none };
  const reasons: string[] = [];
  for (const r of readers) {
    const got = await read(r, apiUrl);
    if (got.ok) return got;
    reasons.push(got.reason);
  }
  return { ok: false, reason: [...new Set(reasons)].join("; ") };
}

/** A file's text on `ref`; null when there is none. */
async function fileText(o: Octokit, r: { owner: string; repo: string }, path: string, ref: string): Promise<string | null> {
  try {
    const { data } = await o.rest.repos.getContent({ ...r, path, ref });
    if (Array.isArray(data) || data.type !== "file" || typeof data.content !== "string") return null;
    return Buffer.from(data.content, "base64").toString("utf8");
  } catch (e) {
    if (status(e) === 404) return null;
    throw e;
  }
}

/**
 * Nothing about the repository could be read (`reason`): every read says why, rather than a 404
 * read as "no workflow" or "no secret". A repository GitHub does not show these credentials is not
 * said to be without the App either.
 */
function unreadable(input: ReadinessInput, reason: string, anyReader: boolean, installation: Readiness["installation"]): Readiness {
  const { owner, repo } = input;
  const missing = /\banswered 404\b/.test(reason);
  const unread = {
    ok: false as const,
    reason: missing
      ? `no repository ${owner}/${repo} that these credentials can see (GitHub answered 404)`
      : anyReader
        ? `${owner}/${repo} could not be read: ${reason}`
        : reason,
  };
  return {
    repo: `${owner}/${repo}`,
    defaultBranch: "main",
    installation: missing && installation.ok && installation.value === null ? unread : installation,
    workflow: unread,
    actions: unread,
    config: unread,
    branches: input.branches(null, "main"),
    rules: unread,
    secrets: unread,
    protection: unread,
    settings: unread,
    workflowPermissions: unread,
    workflows: unread,
  };
}

export async function readReadiness(input: ReadinessInput): Promise<Readiness> {
  const { owner, repo, apiUrl } = input;
  const r = { owner, repo };
  const person = input.token ? new Octokit({ auth: input.token, baseUrl: apiUrl, log: QUIET }) : undefined;

  // As the App: its installation on the repository, then that installation's token.
  let installed: Octokit | undefined;
  let installation: Readiness["installation"] = { ok: false, reason: "no App credentials (APP_ID and PRIVATE_KEY)" };
  if (input.app) {
    const probot = new Probot({ appId: input.app.appId, privateKey: input.app.privateKey, baseUrl: apiUrl, logLevel: "fatal" });
    installation = await read(async () => {
      const asApp = (await probot.auth()) as unknown as Octokit;
      const slug = (await asApp.rest.apps.getAuthenticated()).data?.slug ?? "the App";
      let inst;
      try {
        inst = (await asApp.rest.apps.getRepoInstallation(r)).data;
      } catch (e) {
        if (status(e) === 404) return null;
        throw e;
      }
      installed = (await probot.auth(inst.id)) as unknown as Octokit;
      return {
        permissions: inst.permissions as Record<string, string>,
        events: inst.events,
        appSlug: slug,
        ...(inst.html_url ? { settingsUrl: inst.html_url } : {}),
      };
    }, apiUrl);
  }
  const readers = [installed, person].filter((o): o is Octokit => !!o);
  const anyone = "no token: give the App's credentials or --token";

  const repoInfo = await firstOf(
    readers.map((o) => async () => (await o.rest.repos.get(r)).data),
    anyone,
    apiUrl,
  );
  if (!repoInfo.ok) return unreadable(input, repoInfo.reason, readers.length > 0, installation);
  const defaultBranch = repoInfo.value.default_branch;
  const workflow: Readiness["workflow"] = await firstOf(
    readers.map((o) => () => fileText(o, r, input.workflowPath, defaultBranch)),
    anyone,
    apiUrl,
  );
  const config: Readiness["config"] = await firstOf(
    readers.map((o) => () => fileText(o, r, input.configPath, defaultBranch)),
    anyone,
    apiUrl,
  );
  const branches = input.branches(config.ok ? config.value : null, defaultBranch);
  const rules: Readiness["rules"] = await firstOf(
    readers.map((o) => async () => {
      const read = await readBranchRuleFacts(o, r, branches, o === installed);
      return { ...read.branches, push: read.push, asApp: o === installed };
    }),
    anyone,
    apiUrl,
  );
  const settings: Readiness["settings"] = repoInfo.ok
    ? {
        ok: true,
        value: {
          ...(typeof repoInfo.value.allow_merge_commit === "boolean" ? { allowMergeCommit: repoInfo.value.allow_merge_commit } : {}),
          ...(typeof repoInfo.value.allow_squash_merge === "boolean" ? { allowSquashMerge: repoInfo.value.allow_squash_merge } : {}),
          ...(typeof repoInfo.value.allow_rebase_merge === "boolean" ? { allowRebaseMerge: repoInfo.value.allow_rebase_merge } : {}),
        },
      }
    : repoInfo;
  const workflows: Readiness["workflows"] = await firstOf(
    readers.map((o) => () => readWorkflowFiles(o, r, defaultBranch)),
    anyone,
    apiUrl,
  );

  // As a person (an admin): the Actions policy, secret names, branch protection.
  const admin = "needs a token of a repository admin (--token, GITHUB_TOKEN or GH_TOKEN)";
  const adminReaders = person ? [person] : [];
  const actions = await firstOf(
    adminReaders.map((o) => async () => {
      const { data } = await o.rest.actions.getGithubActionsPermissionsRepository(r);
      if (data.allowed_actions !== "selected") return { enabled: data.enabled, allowedActions: data.allowed_actions ?? "all" };
      const sel = (await o.rest.actions.getAllowedActionsRepository(r)).data;
      return {
        enabled: data.enabled,
        allowedActions: "selected",
        patterns: sel.patterns_allowed ?? [],
        githubOwnedAllowed: sel.github_owned_allowed ?? false,
      };
    }),
    admin,
    apiUrl,
  );
  const names = input.secretNames(workflow.ok ? workflow.value : null);
  const secrets = await firstOf(
    adminReaders.map((o) => async () => {
      const found: Record<string, boolean> = {};
      for (const name of names) {
        try {
          await o.rest.actions.getRepoSecret({ ...r, secret_name: name });
          found[name] = true;
        } catch (e) {
          if (status(e) !== 404) throw e;
          found[name] = false;
        }
      }
      return found;
    }),
    admin,
    apiUrl,
  );
  // The base's protection in full with an admin's token, else the part any reader sees.
  const protection = await firstOf(
    [
      ...adminReaders.map((o) => () => readProtection(o, r, branches.base)),
      ...readers.map((o) => () => readProtectionSummary(o, r, branches.base)),
    ],
    anyone,
    apiUrl,
  );
  const workflowPermissions = await firstOf(
    adminReaders.map((o) => () => readWorkflowPermissions(o, r)),
    admin,
    apiUrl,
  );
  return {
    repo: `${owner}/${repo}`,
    defaultBranch,
    installation,
    workflow,
    actions,
    config,
    branches,
    rules,
    secrets,
    protection,
    settings,
    workflowPermissions,
    workflows,
  };
}
