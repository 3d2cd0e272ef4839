// Workflow files: those of a commit (`.github/workflows/*.yml`, read by GitHub's own parser, cached
// by tree, with their `on:` and, for a file GitHub refuses, why), those of the default branch as the
// REST API lists them, and the registry that gives each path a stable id.
import { HttpError } from "../auth.js";
import type { SimCore } from "../domain/index.js";
import * as git from "../git/index.js";
import type { RestCtx } from "../rest/index.js";
import { checkWorkflow, warmUpWorkflowParser, type WorkflowError } from "../runner/workflow.js";
import { now, type Repo, type WorkflowFile } from "../state.js";

/** A workflow's `on:` as a map of event → its filters (null when it has none). */
export function triggersOf(doc: Record<string, unknown>): Record<string, unknown> {
  const on = doc.on;
  if (typeof on === "string") return { [on]: null };
  if (Array.isArray(on)) return Object.fromEntries(on.map((k) => [String(k), null]));
  return on && typeof on === "object" ? (on as Record<string, unknown>) : {};
}

/** A workflow file as read at a commit. */
export interface WorkflowAt {
  path: string;
  yaml: string;
  /** The file as data ({} when it is not YAML). */
  doc: Record<string, unknown>;
  triggers: Record<string, unknown>;
  /** Why GitHub refuses the file: a run of it fails at once. */
  error?: WorkflowError;
}

/**
 * A workflow file read as GitHub reads it. A file GitHub refuses still has runs — failed at once,
 * with no jobs — for the events its `on:` names, and for every push when it has no readable `on:`
 * (a file that is not YAML: "You have an error in your yaml syntax on line 12" on each push).
 */
export async function readWorkflowAt(path: string, yaml: string): Promise<WorkflowAt> {
  const c = await checkWorkflow(yaml, path);
  if (c.ok) return { path, yaml, doc: c.workflow.doc, triggers: triggersOf(c.workflow.doc) };
  const doc = c.doc ?? {};
  const triggers = triggersOf(doc);
  return { path, yaml, doc, triggers: Object.keys(triggers).length ? triggers : { push: null }, error: c.error };
}

/** The workflow files the runs and the REST API read. */
export class WorkflowFiles {
  /** Workflow files by the sha of their `.github/workflows` tree. */
  private parsed = new Map<string, WorkflowAt[]>();

  constructor(private readonly core: SimCore) {
    // As a server has its workflow schema loaded before the first push arrives.
    warmUpWorkflowParser();
  }

  /** The workflow files of a commit (`.github/workflows/*.yml`), read as GitHub reads them. */
  async workflowsAt(repo: Repo, sha: string): Promise<WorkflowAt[]> {
    const dir = await git.entryAt(repo.gitDir, sha, ".github/workflows").catch(() => undefined);
    if (!dir || dir.type !== "tree") return [];
    const cached = this.parsed.get(dir.sha);
    if (cached) return cached;
    const out: WorkflowAt[] = [];
    for (const e of await git.lsTree(repo.gitDir, dir.sha)) {
      if (e.type !== "blob" || !/\.ya?ml$/.test(e.path)) continue;
      const yaml = (await git.readBlob(repo.gitDir, e.sha)).toString("utf8");
      out.push(await readWorkflowAt(`.github/workflows/${e.path}`, yaml));
    }
    this.parsed.set(dir.sha, out);
    return out;
  }

  /**
   * The workflow registered for a path (GitHub lists a workflow once a run of it exists, wherever
   * its file is). Named by its `name:`, else its path — as is a file GitHub refuses (pass no doc).
   */
  register(repo: Repo, path: string, doc: Record<string, unknown> | null): WorkflowFile {
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
        const at = await readWorkflowAt(path, (await git.readBlob(repo.gitDir, e.sha)).toString("utf8"));
        // Another call may have registered it while this one read the file: register keeps the first
        // id. An invalid workflow keeps its path as name, as GitHub shows it.
        wf = this.register(repo, path, at.error ? null : at.doc);
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
}
