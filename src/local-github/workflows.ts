// GitHub Actions as the local GitHub exposes it: workflow files, `workflow_dispatch`, runs started by
// `push` and `pull_request` (the repository's own CI), jobs, logs, cancel, the GITHUB_TOKEN, and the
// workflow_run / workflow_job webhooks.
//
// The simulator does not execute steps itself: a *job executor* registers with
// `sim.onWorkflowDispatch(handler)` and drives every run — dispatched or triggered — through the
// `DispatchedRun` it receives (start/complete jobs, append logs, mint the token). Without one, runs
// stay queued, unless the simulator was created with `workflowExecutor: "noop"`, which completes
// every job successfully.
import { crc32 } from "node:zlib";
import { parse as parseYaml } from "yaml";
import { DISPATCH_LIMITS } from "../core/dispatch-inputs.js";
import { ACTIONS_DISABLED, actionsEnabled, disallowedActionsError } from "./actions-permissions.js";
import { HttpError, newToken } from "./auth.js";
import { ACTIONS_APP_ID, type SimCore } from "./core.js";
import * as git from "./git.js";
import type { Handler, RestCtx, Result } from "./rest/index.js";
import { secretValues } from "./secrets.js";
import { now, type Job, type Level, type Permissions, type Repo, type User, type WorkflowFile, type WorkflowRun } from "./state.js";
import type { EmittedEvent } from "./webhooks.js";

export interface WorkflowInputSpec {
  description?: string;
  required?: boolean;
  default?: string | boolean | number;
  type?: "string" | "boolean" | "choice" | "number" | "environment";
  options?: string[];
}

export interface DispatchedRun {
  run: WorkflowRun;
  repo: Repo;
  /** the workflow file's text at the run's commit */
  yaml: string;
  /** parsed YAML */
  workflow: Record<string, unknown>;
  /** `workflow_dispatch` inputs (none for other events) */
  inputs: Record<string, string>;
  /** what started the run: `workflow_dispatch`, `push` or `pull_request` (= `run.event`) */
  event: string;
  /** the triggering event's webhook payload for GITHUB_EVENT_PATH; undefined for workflow_dispatch */
  eventPayload: Record<string, unknown> | undefined;
  /** a pull request from a fork: its token is read-only and secrets are not passed (GitHub's rule) */
  fromFork: boolean;
  /** the repository's Actions secrets (`secrets.*`) as stored through the REST API or the control API; none for a fork's pull request */
  secrets: Record<string, string>;
  /** GITHUB_REF and GITHUB_SHA: the dispatched ref (refs/heads/x) or pushed ref and its commit; for pull_request refs/pull/N/merge and its test merge commit */
  ref: string;
  sha: string;
  serverUrl: string;
  apiUrl: string;
  /** clone URL without credentials (use the token as actions/checkout does) */
  cloneUrl: string;
  actor: User;
  /** aborted when the run is cancelled */
  signal: AbortSignal;
  /** mints a GITHUB_TOKEN scoped by the job's (else the workflow's) `permissions` */
  token(jobName?: string): string;
  startJob(jobName: string, steps?: string[]): Job;
  step(jobName: string, stepNumber: number, status: "in_progress" | "completed", conclusion?: string): void;
  log(jobName: string, text: string): void;
  /** `annotations`: the job's `::error::`/`::warning::`/`::notice::` workflow commands, shown on its check run. */
  completeJob(
    jobName: string,
    conclusion: "success" | "failure" | "cancelled" | "skipped" | "timed_out",
    annotations?: Array<{ level: "error" | "warning" | "notice"; message: string; properties: Record<string, string> }>,
  ): void;
  /** completes the run; the conclusion defaults to the worst job conclusion */
  complete(conclusion?: string): void;
}

export type DispatchHandler = (d: DispatchedRun) => void | Promise<void>;

/** Default GITHUB_TOKEN permissions for a repository with the "restricted" default (docs: "Permissions for the GITHUB_TOKEN"). */
const RESTRICTED: Permissions = { contents: "read", packages: "read", metadata: "read" };
const ALL_SCOPES = [
  "actions",
  "attestations",
  "checks",
  "contents",
  "deployments",
  "discussions",
  "id_token",
  "issues",
  "models",
  "packages",
  "pages",
  "pull_requests",
  "repository_projects",
  "security_events",
  "statuses",
];

/** Turns a workflow/job `permissions:` value into token permissions. */
export function tokenPermissions(spec: unknown): Permissions {
  if (spec === undefined || spec === null) return { ...RESTRICTED };
  const out: Permissions = { metadata: "read" };
  if (spec === "read-all" || spec === "write-all") {
    for (const s of ALL_SCOPES) out[s] = spec === "read-all" ? "read" : "write";
    return out;
  }
  if (typeof spec === "object") {
    for (const [k, v] of Object.entries(spec as Record<string, string>)) {
      if (v === "read" || v === "write") out[k.replace(/-/g, "_")] = v as Level;
    }
  }
  return out;
}

/**
 * The run's display title: `run-name` with the few expressions a dispatch can use there
 * (`inputs.*`, `github.event.inputs.*`, `github.actor`, `github.ref_name`) evaluated; GitHub falls
 * back to the workflow's name, then its path ("Workflow syntax": run-name).
 */
export function displayTitle(
  doc: Record<string, unknown>,
  path: string,
  inputs: Record<string, string>,
  actor: string,
  ref: string,
): string {
  const fallback = typeof doc.name === "string" ? doc.name : path;
  const template = doc["run-name"];
  if (typeof template !== "string") return fallback;
  let ok = true;
  const out = template.replace(/\$\{\{\s*([^}]+?)\s*\}\}/g, (_, expr: string) => {
    const m = /^(?:inputs|github\.event\.inputs)\.([A-Za-z_][\w-]*)$/.exec(expr);
    if (m) return inputs[m[1]!] ?? "";
    if (expr === "github.actor") return actor;
    if (expr === "github.ref_name") return ref.replace(/^refs\/(heads|tags)\//, "");
    ok = false;
    return "";
  });
  return ok ? out : fallback;
}

/** What a new run is: its event, the ref and commit its jobs see, its head, its actor. */
interface RunSpec {
  event: "workflow_dispatch" | "push" | "pull_request";
  /** GITHUB_REF, GITHUB_SHA */
  ref: string;
  sha: string;
  /** `head_branch`, `head_sha`, `head_repository` of the run */
  headBranch: string;
  headSha: string;
  headRepoId: number;
  actor: User;
  inputs: Record<string, string>;
  displayTitle: string;
  eventPayload?: Record<string, unknown>;
}

/** A workflow's `on:` as a map of event → its filters (null when it has none). */
export function triggersOf(doc: Record<string, unknown>): Record<string, unknown> {
  // YAML 1.1 parsers read a bare `on:` key as boolean true; the yaml package keeps "on".
  const on = (doc.on ?? doc["true"]) as unknown;
  if (typeof on === "string") return { [on]: null };
  if (Array.isArray(on)) return Object.fromEntries(on.map((k) => [String(k), null]));
  return on && typeof on === "object" ? (on as Record<string, unknown>) : {};
}

/**
 * One filter pattern as a regular expression, per GitHub's "Filter pattern cheat sheet": `*` any
 * characters but `/`, `**` any characters, `?` zero or one of the preceding character, `+` one or
 * more of it, `[…]` a character class; everything else is literal.
 */
function patternRegExp(pattern: string): RegExp {
  let out = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "*") {
      if (pattern[i + 1] === "*") {
        out += ".*";
        i++;
      } else out += "[^/]*";
    } else if (c === "?" || c === "+") out += c;
    else if (c === "[") {
      const close = pattern.indexOf("]", i + 1);
      if (close < 0) out += "\\[";
      else {
        out += pattern.slice(i, close + 1);
        i = close;
      }
    } else out += c.replace(/[.^${}()|\\/]/g, "\\$&");
  }
  return new RegExp(`^${out}$`);
}

/**
 * Whether `name` passes a `branches`/`tags` list: patterns apply in order, a `!pattern` excluding
 * what earlier ones matched ("Using filters": "the order that you define patterns matters").
 */
export function filterMatches(patterns: unknown, name: string): boolean {
  const list = Array.isArray(patterns) ? patterns.map(String) : typeof patterns === "string" ? [patterns] : [];
  let matched = false;
  for (const p of list) {
    if (p.startsWith("!")) {
      if (patternRegExp(p.slice(1)).test(name)) matched = false;
    } else if (patternRegExp(p).test(name)) matched = true;
  }
  return matched;
}

/**
 * Whether a ref passes an event's `branches`/`branches-ignore` (and, for push, `tags`/`tags-ignore`)
 * filters. GitHub: with only branch filters a tag push runs nothing, and the reverse.
 */
export function refPasses(filters: unknown, kind: "branch" | "tag", name: string): boolean {
  if (!filters || typeof filters !== "object") return true;
  const f = filters as Record<string, unknown>;
  const [only, ignore, otherOnly, otherIgnore] =
    kind === "branch" ? ["branches", "branches-ignore", "tags", "tags-ignore"] : ["tags", "tags-ignore", "branches", "branches-ignore"];
  const own = f[only] !== undefined || f[ignore] !== undefined;
  if (!own) return f[otherOnly] === undefined && f[otherIgnore] === undefined;
  if (f[only] !== undefined) return filterMatches(f[only], name);
  return !filterMatches(f[ignore], name);
}

/** A pull_request workflow's activity types: opened, synchronize and reopened unless it names others. */
export function pullRequestTypes(filters: unknown): string[] {
  const types = filters && typeof filters === "object" ? (filters as { types?: unknown }).types : undefined;
  if (Array.isArray(types)) return types.map(String);
  if (typeof types === "string") return [types];
  return ["opened", "synchronize", "reopened"];
}

/** A workflow file as read at a commit. */
interface WorkflowAt {
  path: string;
  yaml: string;
  doc: Record<string, unknown>;
  triggers: Record<string, unknown>;
}

function zip(files: Array<{ name: string; data: Buffer }>): Buffer {
  // A minimal "stored" (uncompressed) zip archive, enough for log downloads.
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const f of files) {
    const name = Buffer.from(f.name);
    const crc = crc32(f.data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(crc >>> 0, 14);
    local.writeUInt32LE(f.data.length, 18);
    local.writeUInt32LE(f.data.length, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt32LE(crc >>> 0, 16);
    central.writeUInt32LE(f.data.length, 20);
    central.writeUInt32LE(f.data.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, f.data);
    centrals.push(central, name);
    offset += local.length + name.length + f.data.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(files.length, 8);
  end.writeUInt16LE(files.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

export class Workflows {
  private handler: DispatchHandler | undefined;
  private aborts = new Map<number, AbortController>();
  /** Events being turned into runs, per repository, one after another in the order they happened. */
  private triggers = new Map<number, Promise<void>>();
  private pending = new Set<Promise<void>>();
  /** Runs waiting out the runner queue time of the latency profile. */
  private queued = new Set<NodeJS.Timeout>();
  /** Workflow files by the sha of their `.github/workflows` tree. */
  private parsed = new Map<string, WorkflowAt[]>();

  constructor(
    private readonly core: SimCore,
    private readonly executor: "none" | "noop" = "none",
  ) {
    core.bus.onEvent((e) => this.onEvent(e));
  }

  onDispatch(h: DispatchHandler | undefined): void {
    this.handler = h;
  }

  /** Resolves once every event so far has started the runs it starts. */
  async idle(): Promise<void> {
    while (this.pending.size) await Promise.allSettled([...this.pending]);
  }

  /** Whether events are still being turned into runs. */
  busy(): boolean {
    return this.pending.size > 0;
  }

  /**
   * Events that start workflows, as GitHub's "Events that trigger workflows" describes them: a
   * `push` runs the pushed commit's workflows that have `on: push` (branch and tag filters
   * applied); a pull request opened, synchronized or reopened (or another activity type a workflow
   * names) runs the `on: pull_request` workflows of its test merge commit (base filters applied).
   * Events caused by a workflow's GITHUB_TOKEN start nothing, and a fork runs no workflows of its
   * own (Actions is off in forks until their owner turns it on).
   */
  private onEvent(e: EmittedEvent): void {
    const repo = e.repo;
    if (!repo || !e.startsWorkflows || repo.forkOf !== undefined || this.core.closed) return;
    // A repository whose Actions permissions say disabled runs nothing.
    if (!actionsEnabled(repo)) return;
    if (e.event !== "push" && !(e.event === "pull_request" && e.action && e.action !== "closed")) return;
    // The triggering event's payload, as the job reads it at GITHUB_EVENT_PATH.
    const payload = e.payload;
    const prev = this.triggers.get(repo.id) ?? Promise.resolve();
    const work = prev
      .then(() => (e.event === "push" ? this.onPush(repo, payload) : this.onPullRequest(repo, e.action!, payload)))
      .catch((err: unknown) => {
        if (!this.core.closed)
          this.core.violation({
            kind: "response",
            id: `workflows/${e.event}`,
            status: 500,
            errors: `simulator error: ${(err as Error).message}`,
          });
      });
    this.triggers.set(repo.id, work);
    this.pending.add(work);
    void work.finally(() => {
      this.pending.delete(work);
      if (this.triggers.get(repo.id) === work) this.triggers.delete(repo.id);
    });
  }

  private actorOf(payload: Record<string, unknown>): User | undefined {
    const login = (payload.sender as { login?: string } | undefined)?.login;
    return login ? this.core.state.users.get(login) : undefined;
  }

  private async onPush(repo: Repo, payload: Record<string, unknown>): Promise<void> {
    const ref = String(payload.ref);
    const after = String(payload.after);
    const actor = this.actorOf(payload);
    if (payload.deleted === true || !actor) return;
    const kind = ref.startsWith("refs/heads/") ? "branch" : ref.startsWith("refs/tags/") ? "tag" : undefined;
    if (!kind) return;
    const name = ref.replace(/^refs\/(heads|tags)\//, "");
    const head = (payload.head_commit as { message?: string } | null)?.message ?? "";
    for (const wf of await this.workflowsAt(repo, after)) {
      if (!("push" in wf.triggers) || !refPasses(wf.triggers.push, kind, name)) continue;
      await this.startTriggered(repo, wf, {
        event: "push",
        ref,
        sha: after,
        headBranch: name,
        headSha: after,
        headRepoId: repo.id,
        actor,
        inputs: {},
        // GitHub titles a push run with its head commit's message (unless run-name says otherwise).
        displayTitle: head.split("\n")[0] || wf.path,
        eventPayload: payload,
      });
    }
  }

  private async onPullRequest(repo: Repo, action: string, payload: Record<string, unknown>): Promise<void> {
    const issue = this.core.state.issue(repo.id, Number(payload.number));
    const p = issue?.pull;
    const actor = this.actorOf(payload);
    if (!issue || !p || !actor) return;
    const wants = (list: WorkflowAt[]) =>
      list.some((w) => "pull_request" in w.triggers && pullRequestTypes(w.triggers.pull_request).includes(action));
    const base = await git.resolveRef(repo.gitDir, `refs/heads/${p.baseRef}`);
    if (!base) return;
    // Nothing to do unless some workflow, in the base or in the head, asks for this activity.
    if (!wants(await this.workflowsAt(repo, base)) && !wants(await this.workflowsAt(repo, p.headSha))) return;
    // GITHUB_REF is refs/pull/<n>/merge and GITHUB_SHA its test merge commit; "workflows will not
    // run on pull_request activity if the pull request has a merge conflict".
    const tree = await git.mergeTrees(repo.gitDir, base, p.headSha);
    if (!tree) return;
    const who = { name: "GitHub", email: "noreply@github.com", date: now() };
    const merge = await git.commitTree(repo.gitDir, tree, [base, p.headSha], `Merge ${p.headSha} into ${base}\n`, who, who);
    const ref = `refs/pull/${issue.number}/merge`;
    await git.updateRef(repo.gitDir, ref, merge, "");
    for (const wf of await this.workflowsAt(repo, merge)) {
      if (!("pull_request" in wf.triggers) || !pullRequestTypes(wf.triggers.pull_request).includes(action)) continue;
      if (!refPasses(wf.triggers.pull_request, "branch", p.baseRef)) continue;
      await this.startTriggered(repo, wf, {
        event: "pull_request",
        ref,
        sha: merge,
        headBranch: p.headRef,
        headSha: p.headSha,
        headRepoId: p.headRepoId ?? repo.id,
        actor,
        inputs: {},
        displayTitle: issue.title,
        eventPayload: payload,
      });
    }
  }

  private async startTriggered(repo: Repo, at: WorkflowAt, spec: RunSpec): Promise<void> {
    if (this.core.closed) return;
    const wf = this.register(repo, at.path, at.doc);
    const title =
      typeof at.doc["run-name"] === "string" ? displayTitle(at.doc, at.path, {}, spec.actor.login, spec.ref) : spec.displayTitle;
    const run = this.newRun(repo, wf, at.doc, at.yaml, { ...spec, displayTitle: title });
    await this.start(repo, run, at.doc);
  }

  /** The workflow files of a commit (`.github/workflows/*.yml`), parsed; files that are not YAML are left out. */
  private async workflowsAt(repo: Repo, sha: string): Promise<WorkflowAt[]> {
    const dir = await git.entryAt(repo.gitDir, sha, ".github/workflows").catch(() => undefined);
    if (!dir || dir.type !== "tree") return [];
    const cached = this.parsed.get(dir.sha);
    if (cached) return cached;
    const out: WorkflowAt[] = [];
    for (const e of await git.lsTree(repo.gitDir, dir.sha)) {
      if (e.type !== "blob" || !/\.ya?ml$/.test(e.path)) continue;
      const yaml = (await git.readBlob(repo.gitDir, e.sha)).toString("utf8");
      let doc: Record<string, unknown>;
      try {
        doc = (parseYaml(yaml) ?? {}) as Record<string, unknown>;
      } catch {
        continue;
      }
      if (typeof doc !== "object" || Array.isArray(doc)) continue;
      out.push({ path: `.github/workflows/${e.path}`, yaml, doc, triggers: triggersOf(doc) });
    }
    this.parsed.set(dir.sha, out);
    return out;
  }

  /** The workflow registered for a path (GitHub lists a workflow once a run of it exists, wherever its file is). */
  private register(repo: Repo, path: string, doc: Record<string, unknown> | null): WorkflowFile {
    const key = `${repo.id}:${path}`;
    let wf = this.core.state.workflows.get(key);
    if (!wf) {
      wf = { id: this.core.state.id(), repoId: repo.id, path, name: typeof doc?.name === "string" ? doc.name : path, createdAt: now() };
      this.core.state.workflows.set(key, wf);
    }
    return wf;
  }

  /** Workflow files on the default branch, registered with stable ids. */
  async list(repo: Repo): Promise<WorkflowFile[]> {
    const tip = await git.resolveRef(repo.gitDir, `refs/heads/${repo.defaultBranch}`);
    if (!tip) return [];
    const dir = await git.entryAt(repo.gitDir, tip, ".github/workflows");
    if (!dir || dir.type !== "tree") return [];
    const out: WorkflowFile[] = [];
    for (const e of await git.lsTree(repo.gitDir, dir.sha)) {
      if (!/\.ya?ml$/.test(e.path)) continue;
      const path = `.github/workflows/${e.path}`;
      let wf = this.core.state.workflows.get(`${repo.id}:${path}`);
      if (!wf) {
        let doc: Record<string, unknown> | null = null;
        try {
          doc = parseYaml((await git.readBlob(repo.gitDir, e.sha)).toString("utf8")) as Record<string, unknown> | null;
        } catch {
          /* an invalid workflow keeps its path as name, as GitHub shows it */
        }
        // Another call may have registered it while this one read the file: register keeps the first id.
        wf = this.register(repo, path, doc);
      }
      out.push(wf);
    }
    return out;
  }

  async find(ctx: RestCtx, repo: Repo, idOrFile: string): Promise<WorkflowFile> {
    const all = await this.list(repo);
    const wf = all.find((w) => String(w.id) === idOrFile || w.path.split("/").pop() === idOrFile);
    if (!wf) throw new HttpError(404, "Not Found", ctx.doc);
    return wf;
  }

  private mintToken(run: WorkflowRun, repo: Repo, perms: Permissions): string {
    const app = this.core.state.apps.get(ACTIONS_APP_ID)!;
    const token = newToken("ghs");
    this.core.state.tokens.set(token, {
      token,
      kind: "workflow",
      actor: app.bot,
      appId: ACTIONS_APP_ID,
      repoIds: [repo.id],
      permissions: perms,
      // GITHUB_TOKEN expires when the job finishes or after 24 h at most.
      expiresAt: Date.now() + 24 * 3600_000,
      workflowRunId: run.id,
    });
    return token;
  }

  private expireTokens(runId: number): void {
    for (const t of this.core.state.tokens.values()) if (t.workflowRunId === runId) t.expiresAt = 0;
  }

  /**
   * docs.github.com/rest/actions/workflows#create-a-workflow-dispatch-event: 204, or 200 with
   * `workflow_run_id`, `run_url`, `html_url` when `return_run_details` is true. Inputs must be
   * declared by the workflow's `on.workflow_dispatch.inputs`; unknown or missing required → 422.
   */
  async dispatch(ctx: RestCtx, repo: Repo, wf: WorkflowFile, body: Record<string, unknown>): Promise<WorkflowRun> {
    // What GitHub answers a dispatch while Actions is disabled for the repository.
    if (!actionsEnabled(repo)) throw new HttpError(422, ACTIONS_DISABLED, ctx.doc);
    const refIn = String(body.ref);
    const ref = refIn.startsWith("refs/")
      ? refIn
      : (await git.resolveRef(repo.gitDir, `refs/heads/${refIn}`))
        ? `refs/heads/${refIn}`
        : `refs/tags/${refIn}`;
    const sha = await git.resolveRef(repo.gitDir, ref);
    if (!sha) throw new HttpError(422, `No ref found for: ${refIn}`, ctx.doc);
    const entry = await git.entryAt(repo.gitDir, sha, wf.path);
    if (!entry || entry.type !== "blob") throw new HttpError(404, "Not Found", ctx.doc);
    const yaml = (await git.readBlob(repo.gitDir, entry.sha)).toString("utf8");
    let doc: Record<string, unknown>;
    try {
      doc = (parseYaml(yaml) ?? {}) as Record<string, unknown>;
    } catch (e) {
      throw new HttpError(422, `Invalid workflow file: ${(e as Error).message}`, ctx.doc);
    }
    const triggers = triggersOf(doc);
    if (!("workflow_dispatch" in triggers)) throw new HttpError(422, "Workflow does not have 'workflow_dispatch' trigger", ctx.doc);
    const declared = ((triggers.workflow_dispatch as { inputs?: Record<string, WorkflowInputSpec> } | null)?.inputs ?? {}) as Record<
      string,
      WorkflowInputSpec
    >;
    const given = (body.inputs ?? {}) as Record<string, unknown>;
    // GitHub's limit on the inputs of one dispatch: 65,535 characters in all (their number, 25, is
    // in the request's schema) — docs.github.com/actions/reference/workflows-and-actions/events-that-trigger-workflows#workflow_dispatch.
    if (JSON.stringify(given).length > DISPATCH_LIMITS.characters)
      throw new HttpError(422, `inputs are too large: the maximum payload for inputs is ${DISPATCH_LIMITS.characters} characters`, ctx.doc);
    const unexpected = Object.keys(given).filter((k) => !(k in declared));
    if (unexpected.length) throw new HttpError(422, `Unexpected inputs provided: ${JSON.stringify(unexpected)}`, ctx.doc);
    const inputs: Record<string, string> = {};
    for (const [name, spec] of Object.entries(declared)) {
      const v = given[name];
      if (v === undefined || v === null || v === "") {
        if (spec?.default !== undefined) inputs[name] = String(spec.default);
        else if (spec?.required) throw new HttpError(422, `Required input '${name}' not provided`, ctx.doc);
        else inputs[name] = spec?.type === "boolean" ? "false" : "";
        continue;
      }
      const s = String(v);
      if (spec?.type === "choice" && spec.options && !spec.options.includes(s))
        throw new HttpError(422, `Provided value '${s}' for input '${name}' not in the list of allowed values`, ctx.doc);
      if (spec?.type === "boolean" && s !== "true" && s !== "false")
        throw new HttpError(422, `Provided value '${s}' for input '${name}' is not a valid boolean`, ctx.doc);
      if (spec?.type === "number" && Number.isNaN(Number(s)))
        throw new HttpError(422, `Provided value '${s}' for input '${name}' is not a valid number`, ctx.doc);
      inputs[name] = s;
    }

    const run = this.newRun(repo, wf, doc, yaml, {
      event: "workflow_dispatch",
      ref,
      sha,
      headBranch: ref.replace(/^refs\/(heads|tags)\//, ""),
      headSha: sha,
      headRepoId: repo.id,
      actor: ctx.actor,
      inputs,
      displayTitle: displayTitle(doc, wf.path, inputs, ctx.actor.login, ref),
    });
    const causedByWorkflowRun = ctx.token?.workflowRunId;
    this.core.bus.emit(
      "workflow_dispatch",
      null,
      {
        inputs: Object.keys(inputs).length ? inputs : null,
        ref,
        repository: this.core.model.repo(repo),
        sender: this.core.model.user(ctx.actor),
        workflow: wf.path,
      },
      { repo, causedByWorkflowRun },
    );
    await this.start(repo, run, doc);
    return run;
  }

  /** A queued run of `wf` with one queued job (and its check run) per job of the workflow, in a check suite of its own. */
  private newRun(repo: Repo, wf: WorkflowFile, doc: Record<string, unknown>, yaml: string, spec: RunSpec): WorkflowRun {
    const t = now();
    const runNumber = (this.core.state.runCounters.get(wf.id) ?? 0) + 1;
    this.core.state.runCounters.set(wf.id, runNumber);
    const suite = this.core.newSuite(repo, ACTIONS_APP_ID, spec.headSha, spec.headBranch);
    const run: WorkflowRun = {
      id: this.core.state.id(),
      repoId: repo.id,
      workflowId: wf.id,
      name: (doc.name as string | undefined) ?? wf.path,
      path: wf.path,
      runNumber,
      runAttempt: 1,
      event: spec.event,
      status: "queued",
      conclusion: null,
      headBranch: spec.headBranch,
      headSha: spec.headSha,
      headRepoId: spec.headRepoId,
      ref: spec.ref,
      sha: spec.sha,
      ...(spec.eventPayload ? { eventPayload: spec.eventPayload } : {}),
      actor: spec.actor,
      triggeringActor: spec.actor,
      inputs: spec.inputs,
      yaml,
      displayTitle: spec.displayTitle,
      createdAt: t,
      updatedAt: t,
      runStartedAt: t,
      checkSuiteId: suite.id,
      jobs: [],
      cancelRequested: false,
    };
    for (const [jobKey, jobDef] of Object.entries(
      (doc.jobs ?? {}) as Record<string, { name?: string; steps?: Array<{ name?: string; run?: string; uses?: string }> }>,
    )) {
      const jobName = typeof jobDef?.name === "string" && !jobDef.name.includes("${{") ? jobDef.name : jobKey;
      const checkRun = this.newJobCheckRun(repo, suite.id, spec.headSha, jobName);
      run.jobs.push({
        id: checkRun,
        runId: run.id,
        name: jobName,
        status: "queued",
        conclusion: null,
        createdAt: t,
        startedAt: t,
        completedAt: null,
        steps: [],
        log: "",
        checkRunId: checkRun,
      });
    }
    this.core.state.runs.set(run.id, run);
    return run;
  }

  /** The run's requested/queued webhooks, then its execution: the registered executor, the noop one, or none (queued). */
  private async start(repo: Repo, run: WorkflowRun, doc: Record<string, unknown>): Promise<void> {
    await this.emitRun(repo, run, "requested");
    for (const j of run.jobs) this.emitJob(repo, run, j, "queued");

    const abort = new AbortController();
    this.aborts.set(run.id, abort);
    const dispatched = this.dispatchedRun(repo, run, doc, abort);
    // An action the repository's Actions permissions do not allow: GitHub rejects the workflow
    // before any job runs (a startup failure). Its jobs fail at their start with GitHub's message,
    // and no executor sees the run.
    const refused = disallowedActionsError(repo, doc);
    if (refused) {
      setImmediate(() => {
        for (const j of run.jobs) {
          dispatched.startJob(j.name);
          dispatched.log(j.name, `##[error]${refused}\n`);
          dispatched.completeJob(j.name, "failure");
        }
        dispatched.complete("startup_failure");
      });
      return;
    }
    if (this.handler) {
      const h = this.handler;
      this.afterRunnerQueue(run, dispatched, () => {
        Promise.resolve(h(dispatched)).catch((e: unknown) => {
          for (const j of run.jobs)
            if (j.status !== "completed") {
              dispatched.log(j.name, `executor error: ${(e as Error).message}\n`);
              dispatched.completeJob(j.name, "failure");
            }
          dispatched.complete("failure");
        });
      });
    } else if (this.executor === "noop") {
      this.afterRunnerQueue(run, dispatched, () => {
        for (const j of run.jobs) {
          if (run.cancelRequested) break;
          dispatched.startJob(j.name);
          dispatched.log(j.name, "noop executor: job completed without running steps\n");
          dispatched.completeJob(j.name, "success");
        }
        dispatched.complete();
      });
    }
  }

  /**
   * Starts the run's jobs once a runner would have picked them up: at once without a latency
   * profile, after the profile's runner queue time with one. A run cancelled while it waited ends
   * cancelled without reaching a runner, as on GitHub.
   */
  private afterRunnerQueue(run: WorkflowRun, dispatched: DispatchedRun, start: () => void): void {
    const queuedMs = this.core.latency.sample("runnerQueue");
    if (queuedMs <= 0) {
      setImmediate(start);
      return;
    }
    const timer = setTimeout(() => {
      this.queued.delete(timer);
      if (!run.cancelRequested) return start();
      for (const j of run.jobs) dispatched.completeJob(j.name, "cancelled");
      dispatched.complete("cancelled");
    }, queuedMs);
    this.queued.add(timer);
  }

  /** Jobs waiting for a runner (latency profile) never start once the local GitHub is closing. */
  stop(): void {
    for (const t of this.queued) clearTimeout(t);
    this.queued.clear();
  }

  private newJobCheckRun(repo: Repo, suiteId: number, sha: string, name: string): number {
    const id = this.core.state.id();
    this.core.state.checkRuns.set(id, {
      id,
      repoId: repo.id,
      suiteId,
      appId: ACTIONS_APP_ID,
      name,
      headSha: sha,
      status: "queued",
      conclusion: null,
      startedAt: now(),
      completedAt: null,
      externalId: null,
      detailsUrl: null,
      output: { title: null, summary: null, text: null, annotations_count: 0 },
      actions: [],
    });
    return id;
  }

  private async emitRun(repo: Repo, run: WorkflowRun, action: "requested" | "in_progress" | "completed"): Promise<void> {
    const wf = [...this.core.state.workflows.values()].find((w) => w.id === run.workflowId)!;
    let head;
    try {
      head = await git.readCommit(repo.gitDir, run.headSha);
    } catch (e) {
      // An executor finishing after the simulator closed has nobody left to tell.
      if (this.core.closed) return;
      throw e;
    }
    this.core.bus.emit(
      "workflow_run",
      action,
      {
        workflow_run: this.core.model.run(repo, run, head),
        workflow: this.core.model.workflow(repo, wf),
        repository: this.core.model.repo(repo),
        sender: this.core.model.user(run.triggeringActor),
      },
      { repo },
    );
    this.core.bus.flush();
  }

  private emitJob(repo: Repo, run: WorkflowRun, job: Job, action: "queued" | "in_progress" | "completed"): void {
    this.core.bus.emit(
      "workflow_job",
      action,
      {
        workflow_job: this.core.model.job(repo, run, job),
        repository: this.core.model.repo(repo),
        sender: this.core.model.user(run.triggeringActor),
      },
      { repo },
    );
    this.core.bus.flush();
  }

  private dispatchedRun(repo: Repo, run: WorkflowRun, doc: Record<string, unknown>, abort: AbortController): DispatchedRun {
    const core = this.core;
    const jobOf = (name: string) => {
      const j = run.jobs.find((x) => x.name === name);
      if (!j) throw new Error(`workflow run ${run.id} has no job ${name}`);
      return j;
    };
    const jobsDoc = (doc.jobs ?? {}) as Record<string, { name?: string; permissions?: unknown }>;
    const setCheck = (j: Job) => {
      const cr = core.state.checkRuns.get(j.checkRunId);
      if (!cr) return;
      cr.status = j.status === "completed" ? "completed" : j.status === "in_progress" ? "in_progress" : "queued";
      cr.conclusion = j.conclusion;
      cr.startedAt = j.startedAt;
      cr.completedAt = j.completedAt;
    };
    // The returned object has methods of its own; they reach the Workflows instance through `self`.
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const self = this;
    return {
      run,
      repo,
      yaml: run.yaml,
      workflow: doc,
      inputs: { ...run.inputs },
      event: run.event,
      eventPayload: run.eventPayload,
      fromFork: run.headRepoId !== repo.id,
      // "With the exception of GITHUB_TOKEN, secrets are not passed to the runner when a workflow is
      // triggered from a forked repository."
      secrets: run.headRepoId !== repo.id ? {} : secretValues(repo),
      ref: run.ref,
      sha: run.sha,
      serverUrl: core.baseUrl,
      apiUrl: core.model.api,
      cloneUrl: `${core.baseUrl}/${repo.owner.login}/${repo.name}.git`,
      actor: run.actor,
      signal: abort.signal,
      token(jobName?: string) {
        const key = Object.keys(jobsDoc).find((k) => k === jobName || jobsDoc[k]?.name === jobName);
        const jobPerms = key ? jobsDoc[key]?.permissions : undefined;
        const perms = tokenPermissions(jobPerms ?? doc.permissions);
        // "The GITHUB_TOKEN has read-only permissions in pull requests from forked repositories."
        if (run.headRepoId !== repo.id) for (const k of Object.keys(perms)) perms[k] = "read";
        return self.mintToken(run, repo, perms);
      },
      startJob(jobName, steps = []) {
        const j = jobOf(jobName);
        const t = now();
        if (run.status === "queued") {
          run.status = "in_progress";
          run.runStartedAt = t;
          run.updatedAt = t;
          void self.emitRun(repo, run, "in_progress");
        }
        j.status = "in_progress";
        j.startedAt = t;
        j.steps = steps.map((name, i) => ({
          name,
          status: "queued",
          conclusion: null,
          number: i + 1,
          started_at: null,
          completed_at: null,
        }));
        setCheck(j);
        self.emitJob(repo, run, j, "in_progress");
        return j;
      },
      step(jobName, n, status, conclusion) {
        const s = jobOf(jobName).steps.find((x) => x.number === n);
        if (!s) return;
        s.status = status;
        if (status === "in_progress") s.started_at = now();
        else {
          s.completed_at = now();
          s.conclusion = conclusion ?? "success";
        }
      },
      log(jobName, text) {
        jobOf(jobName).log += text;
      },
      completeJob(jobName, conclusion, annotations = []) {
        const j = jobOf(jobName);
        if (j.status === "completed") return;
        j.status = "completed";
        j.conclusion = conclusion;
        j.completedAt = now();
        setCheck(j);
        const cr = core.state.checkRuns.get(j.checkRunId);
        if (cr && annotations.length) {
          // A workflow command without `file` is annotated on `.github` (as GitHub shows it).
          cr.annotations = annotations.map((a) => {
            const line = Number(a.properties.line ?? 1) || 1;
            return {
              path: a.properties.file ?? ".github",
              startLine: line,
              endLine: Number(a.properties.endLine ?? line) || line,
              level: a.level === "error" ? "failure" : a.level,
              message: a.message,
              title: a.properties.title ?? null,
            };
          });
          cr.output = { ...cr.output, annotations_count: cr.annotations.length };
        }
        self.emitJob(repo, run, j, "completed");
      },
      complete(conclusion) {
        if (run.status === "completed") return;
        const order = ["failure", "timed_out", "cancelled", "action_required", "neutral", "skipped", "success"];
        const worst = run.jobs.map((j) => j.conclusion ?? "cancelled").sort((a, b) => order.indexOf(a) - order.indexOf(b))[0] ?? "success";
        run.status = "completed";
        run.conclusion = conclusion ?? (run.cancelRequested ? "cancelled" : worst === "skipped" ? "success" : worst);
        run.updatedAt = now();
        const suite = core.state.suites.get(run.checkSuiteId);
        if (suite) {
          suite.status = "completed";
          suite.conclusion = run.conclusion;
          suite.updatedAt = run.updatedAt;
        }
        self.expireTokens(run.id);
        self.aborts.delete(run.id);
        void self.emitRun(repo, run, "completed");
      },
    };
  }

  cancel(ctx: RestCtx, run: WorkflowRun): void {
    if (run.status === "completed") throw new HttpError(409, "Cannot cancel a workflow run that is completed.", ctx.doc);
    run.cancelRequested = true;
    const abort = this.aborts.get(run.id);
    abort?.abort();
    if (!this.handler) {
      // Nothing is executing: cancel immediately.
      const repo = this.core.state.repos.get(run.repoId)!;
      for (const j of run.jobs) {
        if (j.status === "completed") continue;
        j.status = "completed";
        j.conclusion = "cancelled";
        j.completedAt = now();
        this.emitJob(repo, run, j, "completed");
      }
      run.status = "completed";
      run.conclusion = "cancelled";
      run.updatedAt = now();
      this.expireTokens(run.id);
      void this.emitRun(repo, run, "completed");
    }
  }

  logsZip(run: WorkflowRun): Buffer {
    return zip(run.jobs.map((j, i) => ({ name: `${i}_${j.name.replace(/[/\\]/g, "_")}.txt`, data: Buffer.from(j.log) })));
  }

  handlers(): Record<string, Handler> {
    const runOf = (ctx: RestCtx): WorkflowRun => {
      const r = this.core.state.runs.get(Number(ctx.params.run_id));
      if (!r || r.repoId !== ctx.repo?.id) throw new HttpError(404, "Not Found", ctx.doc);
      return r;
    };
    const jobOf = (ctx: RestCtx): { run: WorkflowRun; job: Job } => {
      for (const run of this.core.state.runs.values()) {
        if (run.repoId !== ctx.repo?.id) continue;
        const job = run.jobs.find((j) => j.id === Number(ctx.params.job_id));
        if (job) return { run, job };
      }
      throw new HttpError(404, "Not Found", ctx.doc);
    };
    const runJson = async (repo: Repo, r: WorkflowRun) => this.core.model.run(repo, r, await git.readCommit(repo.gitDir, r.headSha));
    const listRuns = async (ctx: RestCtx, wfId?: number): Promise<Result> => {
      const repo = ctx.repo!;
      const q = ctx.query;
      let runs = [...this.core.state.runs.values()].filter((r) => r.repoId === repo.id && (wfId === undefined || r.workflowId === wfId));
      if (q.get("actor")) runs = runs.filter((r) => r.actor.login === q.get("actor"));
      if (q.get("branch")) runs = runs.filter((r) => r.headBranch === q.get("branch"));
      if (q.get("event")) runs = runs.filter((r) => r.event === q.get("event"));
      if (q.get("head_sha")) runs = runs.filter((r) => r.headSha === q.get("head_sha"));
      // `status` accepts statuses and conclusions alike.
      if (q.get("status")) runs = runs.filter((r) => r.status === q.get("status") || r.conclusion === q.get("status"));
      runs.sort((a, b) => b.id - a.id);
      const page = ctx.page(runs);
      return { status: 200, body: { total_count: runs.length, workflow_runs: await Promise.all(page.map((r) => runJson(repo, r))) } };
    };
    return {
      "actions/list-repo-workflows": async (ctx) => {
        const repo = ctx.repo!;
        const all = await this.list(repo);
        return { status: 200, body: { total_count: all.length, workflows: ctx.page(all).map((w) => this.core.model.workflow(repo, w)) } };
      },
      "actions/get-workflow": async (ctx) => ({
        status: 200,
        body: this.core.model.workflow(ctx.repo!, await this.find(ctx, ctx.repo!, ctx.params.workflow_id!)),
      }),
      "actions/create-workflow-dispatch": async (ctx) => {
        const repo = ctx.repo!;
        const wf = await this.find(ctx, repo, ctx.params.workflow_id!);
        const run = await this.dispatch(ctx, repo, wf, ctx.body ?? {});
        if (ctx.body?.return_run_details === true) {
          const json = this.core.model.run(repo, run, null);
          return { status: 200, body: { workflow_run_id: run.id, run_url: json.url, html_url: json.html_url } };
        }
        return { status: 204 };
      },
      "actions/list-workflow-runs": async (ctx) => listRuns(ctx, (await this.find(ctx, ctx.repo!, ctx.params.workflow_id!)).id),
      "actions/list-workflow-runs-for-repo": async (ctx) => listRuns(ctx),
      "actions/get-workflow-run": async (ctx) => ({ status: 200, body: await runJson(ctx.repo!, runOf(ctx)) }),
      "actions/cancel-workflow-run": async (ctx) => {
        this.cancel(ctx, runOf(ctx));
        return { status: 202, body: {} };
      },
      "actions/list-jobs-for-workflow-run": async (ctx) => {
        const run = runOf(ctx);
        return {
          status: 200,
          body: { total_count: run.jobs.length, jobs: ctx.page(run.jobs).map((j) => this.core.model.job(ctx.repo!, run, j)) },
        };
      },
      "actions/get-job-for-workflow-run": async (ctx) => {
        const { run, job } = jobOf(ctx);
        return { status: 200, body: this.core.model.job(ctx.repo!, run, job) };
      },
      // Both log downloads answer 302 with a short-lived URL (docs: "Download workflow run logs").
      "actions/download-workflow-run-logs": async (ctx) => {
        const run = runOf(ctx);
        return { status: 302, headers: { location: `${this.core.baseUrl}/_sim/logs/runs/${run.id}.zip` } };
      },
      "actions/download-job-logs-for-workflow-run": async (ctx) => {
        const { job } = jobOf(ctx);
        return { status: 302, headers: { location: `${this.core.baseUrl}/_sim/logs/jobs/${job.id}.txt` } };
      },
    };
  }
}
