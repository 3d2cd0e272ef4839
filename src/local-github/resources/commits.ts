// Git objects as the local GitHub sends them: commit identities, git commits (the Git database API),
// REST commits (get-commit, compare), refs.
import type { CommitInfo } from "../git/index.js";
import type { Repo } from "../state.js";
import { nodeId, type O } from "./ids.js";
import type { Model } from "./index.js";

/**
 * The `verification` of a commit: verified when it carries GitHub's own signature (../signing.ts),
 * "unverified" with another signature (the local GitHub keeps no person's keys), else "unsigned".
 */
export function verification(model: Model, c: CommitInfo): O {
  if (!c.signed) return { verified: false, reason: "unsigned", signature: null, payload: null, verified_at: null };
  const verified = model.verifies(c.signed.signature, c.signed.payload);
  return {
    verified,
    reason: verified ? "valid" : "unknown_key",
    signature: c.signed.signature,
    payload: c.signed.payload,
    verified_at: verified ? c.committer.date : null,
  };
}

export function gitUser(id: { name: string; email: string; date: string }): O {
  return { name: id.name, email: id.email, date: id.date };
}

export function gitCommit(model: Model, repo: Repo, c: CommitInfo): O {
  const base = `${model.api}/repos/${repo.owner.login}/${repo.name}`;
  return {
    sha: c.sha,
    node_id: nodeId("Commit", c.sha),
    url: `${base}/git/commits/${c.sha}`,
    html_url: `${model.web()}/${repo.owner.login}/${repo.name}/commit/${c.sha}`,
    author: model.gitUser(c.author),
    committer: model.gitUser(c.committer),
    tree: { sha: c.tree, url: `${base}/git/trees/${c.tree}` },
    message: c.message.replace(/\n$/, ""),
    parents: c.parents.map((p) => ({
      sha: p,
      url: `${base}/git/commits/${p}`,
      html_url: `${model.web()}/${repo.owner.login}/${repo.name}/commit/${p}`,
    })),
    verification: verification(model, c),
  };
}

/** The REST "commit" object (repos/get-commit, compare). */
export function commit(model: Model, repo: Repo, c: CommitInfo): O {
  const base = `${model.api}/repos/${repo.owner.login}/${repo.name}`;
  return {
    url: `${base}/commits/${c.sha}`,
    sha: c.sha,
    node_id: nodeId("Commit", c.sha),
    html_url: `${model.web()}/${repo.owner.login}/${repo.name}/commit/${c.sha}`,
    comments_url: `${base}/commits/${c.sha}/comments`,
    commit: {
      url: `${base}/git/commits/${c.sha}`,
      author: model.gitUser(c.author),
      committer: model.gitUser(c.committer),
      message: c.message.replace(/\n$/, ""),
      comment_count: 0,
      tree: { sha: c.tree, url: `${base}/git/trees/${c.tree}` },
      verification: verification(model, c),
    },
    author: model.userByEmail(c.author.email),
    committer: model.userByEmail(c.committer.email),
    parents: c.parents.map((p) => ({
      sha: p,
      url: `${base}/commits/${p}`,
      html_url: `${model.web()}/${repo.owner.login}/${repo.name}/commit/${p}`,
    })),
  };
}

export function ref(model: Model, repo: Repo, ref: string, sha: string): O {
  const base = `${model.api}/repos/${repo.owner.login}/${repo.name}`;
  return {
    ref,
    node_id: nodeId("Ref", `${repo.id}:${ref}`),
    url: `${base}/git/${ref}`,
    object: { sha, type: "commit", url: `${base}/git/commits/${sha}` },
  };
}
