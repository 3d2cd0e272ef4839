// REST operations of the local GitHub: the git database — blobs, trees, commits and refs
// (docs.github.com/rest/git).
import * as git from "../git/index.js";
import type { Repo } from "../state.js";
import { enforceProtection } from "../branch-protection.js";
import { enforceRules } from "../rule-violations.js";
import type { Handler, RestCtx } from "./context.js";
import { act, commitish, identity, invalid, moveRef, notFound, ok, repoOf, str, wrap64 } from "./context.js";

export const gitDatabaseHandlers: Record<string, Handler> = {
  // docs.github.com/rest/git/blobs
  "git/create-blob": async (ctx) => {
    const repo = repoOf(ctx);
    const b = ctx.body!;
    const enc = str(b, "encoding") ?? "utf-8";
    if (enc !== "utf-8" && enc !== "utf8" && enc !== "base64") throw invalid(ctx, `encoding must be 'utf-8' or 'base64'`);
    const sha = await git.hashBlob(repo.gitDir, Buffer.from(str(b, "content") ?? "", enc === "base64" ? "base64" : "utf8"));
    return ok({ url: `${ctx.core.model.api}/repos/${repo.owner.login}/${repo.name}/git/blobs/${sha}`, sha }, 201);
  },
  "git/get-blob": async (ctx) => {
    const repo = repoOf(ctx);
    const sha = ctx.params.file_sha!;
    if ((await git.objectType(repo.gitDir, sha)) !== "blob") throw notFound(ctx);
    const data = await git.readBlob(repo.gitDir, sha);
    return ok({
      content: wrap64(data.toString("base64")),
      encoding: "base64",
      url: `${ctx.core.model.api}/repos/${repo.owner.login}/${repo.name}/git/blobs/${sha}`,
      sha,
      size: data.length,
      node_id: Buffer.from(`Blob:${sha}`).toString("base64"),
    });
  },

  // docs.github.com/rest/git/trees: entries with `content` create blobs; `sha: null` deletes.
  "git/create-tree": async (ctx) => {
    const repo = repoOf(ctx);
    const b = ctx.body!;
    const baseTree = str(b, "base_tree");
    if (baseTree && (await git.objectType(repo.gitDir, baseTree)) !== "tree") throw invalid(ctx, "base_tree is not a valid tree oid");
    const changes: git.TreeChange[] = [];
    for (const e of (b.tree as Array<Record<string, unknown>>) ?? []) {
      const path = String(e.path ?? "");
      const mode = String(e.mode ?? "100644");
      if (!path || path.startsWith("/") || path.endsWith("/"))
        throw invalid(ctx, "GitHub.Tree.InvalidPath", [{ resource: "Tree", field: "path", code: "invalid" }]);
      if (typeof e.content === "string") {
        changes.push({ path, mode, sha: await git.hashBlob(repo.gitDir, Buffer.from(e.content)) });
      } else if (e.sha === null) {
        changes.push({ path, sha: null });
      } else if (typeof e.sha === "string") {
        const type = await git.objectType(repo.gitDir, e.sha);
        if (!type) throw invalid(ctx, `tree.sha ${e.sha} is not a valid ${String(e.type ?? "blob")}`);
        if (type === "tree") {
          changes.push({ path, sha: null });
          for (const sub of await git.lsTree(repo.gitDir, e.sha, true))
            if (sub.type !== "tree") changes.push({ path: `${path}/${sub.path}`, mode: sub.mode, sha: sub.sha });
        } else changes.push({ path, mode, sha: e.sha });
      } else
        throw invalid(ctx, "Must supply either tree.sha or tree.content", [{ resource: "Tree", field: "tree", code: "missing_field" }]);
    }
    const sha = await git.buildTree(repo.gitDir, baseTree, changes);
    return ok(await treeJson(ctx, repo, sha, false), 201);
  },
  "git/get-tree": async (ctx) => {
    const repo = repoOf(ctx);
    let sha = ctx.params.tree_sha!;
    const t = await git.objectType(repo.gitDir, sha);
    if (t === "commit") sha = (await git.readCommit(repo.gitDir, sha)).tree;
    else if (t !== "tree") {
      const c = await commitish(repo, sha);
      if (!c) throw notFound(ctx);
      sha = (await git.readCommit(repo.gitDir, c)).tree;
    }
    const recursive = ctx.query.has("recursive") && !["0", "false"].includes(ctx.query.get("recursive")!);
    return ok(await treeJson(ctx, repo, sha, recursive));
  },

  // docs.github.com/rest/git/commits
  "git/create-commit": async (ctx) => {
    const repo = repoOf(ctx);
    const b = ctx.body!;
    const tree = str(b, "tree")!;
    if ((await git.objectType(repo.gitDir, tree)) !== "tree") throw invalid(ctx, "Tree SHA does not exist");
    const parents = (b.parents as string[] | undefined) ?? [];
    for (const p of parents)
      if ((await git.objectType(repo.gitDir, p)) !== "commit") throw invalid(ctx, "Parent SHA does not exist or is not a commit object");
    const author = identity(ctx, b.author);
    const committer = b.committer ? identity(ctx, b.committer) : author;
    // GitHub signs a commit it creates with no author, committer or signature given (../signing.ts).
    const sign = b.author || b.committer || b.signature ? undefined : ctx.core.sign;
    const sha = await git.commitTree(repo.gitDir, tree, parents, str(b, "message")!, author, committer, sign);
    return ok(ctx.core.model.gitCommit(repo, await git.readCommit(repo.gitDir, sha)), 201);
  },
  "git/get-commit": async (ctx) => {
    const repo = repoOf(ctx);
    const sha = ctx.params.commit_sha!;
    if ((await git.objectType(repo.gitDir, sha)) !== "commit") throw notFound(ctx);
    return ok(ctx.core.model.gitCommit(repo, await git.readCommit(repo.gitDir, sha)));
  },

  // docs.github.com/rest/git/refs
  "git/get-ref": async (ctx) => {
    const repo = repoOf(ctx);
    const ref = `refs/${ctx.params.ref}`;
    const refs = await git.listRefs(repo.gitDir, ref);
    const sha = refs.get(ref);
    if (!sha) throw notFound(ctx);
    return ok(ctx.core.model.ref(repo, ref, sha));
  },
  "git/list-matching-refs": async (ctx) => {
    const repo = repoOf(ctx);
    const prefix = `refs/${ctx.params.ref}`;
    const refs = await git.listRefs(repo.gitDir, "refs/");
    return ok([...refs].filter(([r]) => r.startsWith(prefix)).map(([r, s]) => ctx.core.model.ref(repo, r, s)));
  },
  "git/create-ref": async (ctx) => {
    const repo = repoOf(ctx);
    const ref = str(ctx.body, "ref")!;
    const sha = str(ctx.body, "sha")!;
    // "The name of the fully qualified reference (ie: refs/heads/master). If it doesn't start with
    // 'refs' and have at least two slashes, it will be rejected."
    // A name git refuses (`fix..up`, `cache.lock`) is refused the same way (GitHub: "… is not a valid ref name.").
    if (!ref.startsWith("refs/") || ref.split("/").length < 3 || !(await git.validRefName(repo.gitDir, ref)))
      throw invalid(ctx, `${ref} is not a valid ref name.`);
    if ((await git.objectType(repo.gitDir, sha)) !== "commit" && !ref.startsWith("refs/tags/")) throw invalid(ctx, "Object does not exist");
    if (!(await moveRef(ctx, repo, ref, sha, null)))
      // The ref is there, or a ref is in its way (`a/b` when `a` exists, or `a` when `a/b` does): GitHub
      // says "Reference update failed" for the latter.
      throw invalid(ctx, (await git.listRefs(repo.gitDir, ref)).has(ref) ? "Reference already exists" : "Reference update failed");
    return ok(ctx.core.model.ref(repo, ref, sha), 201);
  },
  // A non-forced update must fast-forward ("Update is not a fast forward", 422); this is what makes
  // a commit whose parent is the tip that was read a compare-and-swap.
  "git/update-ref": async (ctx) => {
    const repo = repoOf(ctx);
    const ref = `refs/${ctx.params.ref}`;
    const sha = str(ctx.body, "sha")!;
    const force = ctx.body?.force === true;
    if ((await git.objectType(repo.gitDir, sha)) !== "commit") throw invalid(ctx, "Object does not exist");
    for (let attempt = 0; attempt < 5; attempt++) {
      const cur = (await git.listRefs(repo.gitDir, ref)).get(ref);
      if (!cur) throw invalid(ctx, "Reference does not exist");
      if (cur === sha) return ok(ctx.core.model.ref(repo, ref, sha));
      if (!force && !(await git.isAncestor(repo.gitDir, cur, sha))) throw invalid(ctx, "Update is not a fast forward");
      const fastForward = (): Promise<boolean> => git.isAncestor(repo.gitDir, cur, sha);
      if (await moveRef(ctx, repo, ref, sha, cur, fastForward)) return ok(ctx.core.model.ref(repo, ref, sha));
    }
    throw invalid(ctx, "Update is not a fast forward");
  },
  "git/delete-ref": async (ctx) => {
    const repo = repoOf(ctx);
    const ref = `refs/${ctx.params.ref}`;
    const cur = (await git.listRefs(repo.gitDir, ref)).get(ref);
    if (!cur) throw invalid(ctx, "Reference does not exist");
    await enforceRules(ctx.core, repo, { ref, before: cur, after: null }, act(ctx), ctx.doc);
    await enforceProtection(repo, { ref, before: cur, after: null }, act(ctx), ctx.doc);
    if (!(await git.deleteRef(repo.gitDir, ref, cur))) throw invalid(ctx, "Reference cannot be deleted");
    await ctx.core.refsChanged(repo, [{ ref, before: cur, after: null }], act(ctx));
    return { status: 204 };
  },
};

async function treeJson(ctx: RestCtx, repo: Repo, sha: string, recursive: boolean): Promise<Record<string, unknown>> {
  const api = `${ctx.core.model.api}/repos/${repo.owner.login}/${repo.name}`;
  const entries = await git.lsTree(repo.gitDir, sha, recursive);
  return {
    sha,
    url: `${api}/git/trees/${sha}`,
    tree: entries.map((e) => ({
      path: e.path,
      mode: e.mode,
      type: e.type,
      sha: e.sha,
      ...(e.type === "blob" ? { size: e.size ?? 0 } : {}),
      url: `${api}/git/${e.type === "tree" ? "trees" : "blobs"}/${e.sha}`,
    })),
    truncated: false,
  };
}
