// Workflow files: those of a commit (`.github/workflows/*.yml`, parsed, cached by tree, with their
// `on:`), those of the default branch as the REST API lists them, and the registry that gives each
// path a stable id.
import { parse as parseYaml } from "yaml";
import { HttpError } from "../auth.js";
import type { SimCore } from "../domain/index.js";
import * as git from "../git/index.js";
import type { RestCtx } from "../rest/index.js";
import { now, type Repo, type WorkflowFile } from "../state.js";

/** A workflow's `on:` as a map of event → its filters (null when it has none). */
export function triggersOf(doc: Record<string, unknown>): Record<string, unknown> {
  // YAML 1.1 parsers read a bare `on:` key as boolean true; the yaml package keeps "on".
  const on = (doc.on ?? doc["true"]) as unknown;
  if (typeof on === "string") return { [on]: null };
  if (Array.isArray(on)) return Object.fromEntries(on.map((k) => [String(k), null]));
  return on && typeof on === "object" ? (on as Record<string, unknown>) : {};
}

/** A workflow file as read at a commit. */
export interface WorkflowAt {
  path: string;
  yaml: string;
  doc: Record<string, unknown>;
  triggers: Record<string, unknown>;
}

/** The workflow files the runs and the REST API read. */
export class WorkflowFiles {
  /** Workflow files by the sha of their `.github/workflows` tree. */
  private parsed = new Map<string, WorkflowAt[]>();

  constructor(private readonly core: SimCore) {}

  /** The workflow files of a commit (`.github/workflows/*.yml`), parsed; files that are not YAML are left out. */
  async workflowsAt(repo: Repo, sha: string): Promise<WorkflowAt[]> {
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
}
