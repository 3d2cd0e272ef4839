// What the repository's rulesets (its own and its organisation's, rulesets.ts) say of one write of a
// ref — a push (judged by the pre-receive hook, push-hook.ts), a REST ref write (refs, contents,
// branch merges) or the commit a pull request merge makes — as GitHub words it
// (docs.github.com/repositories/configuring-branches-and-merges-in-your-repository/managing-rulesets/available-rules-for-rulesets):
// - creation, update, deletion, non_fast_forward: the ref's move itself;
// - required_linear_history: no merge commit among the write's new commits;
// - pull_request, merge_queue: no direct update ("Changes must be made through a pull request." /
//   "… through the merge queue"); a pull request's merge meets their requirements in merge-rules.ts;
// - required_signatures: every new commit verified ("Commits must have verified signatures." with
//   the commits found) — GitHub's own commits are (./signing.ts);
// - commit_message_pattern, commit_author_email_pattern, committer_email_pattern (each new commit),
//   branch_name_pattern, tag_name_pattern (the ref's name): operator starts_with / ends_with /
//   contains / regex, `negate`;
// - file_path_restriction, file_extension_restriction, max_file_path_length, max_file_size (push
//   rules): the files the new commits add or change.
// An actor on a ruleset's bypass list is exempt from it.
import { HttpError } from "./auth.js";
import type { ActContext, SimCore } from "./domain/index.js";
import {
  commitFacts,
  extensionRestricted,
  fileFacts,
  newCommits,
  pathRestricted,
  patternHolds,
  patternMessage,
  type CommitFacts,
  type FileFacts,
  type GitView,
  type PatternParams,
} from "./rule-facts.js";
import { canBypass, rulesetsOn, type Ruleset } from "./rulesets.js";
import type { Repo } from "./state.js";

export interface RefWrite {
  ref: string;
  before: string | null;
  after: string | null;
  /** whether `after` contains `before` (asked only when a non_fast_forward rule applies; none: it does) */
  fastForward?: () => Promise<boolean>;
  /** where the write's commits are read: a push's quarantine; the repository itself by default */
  view?: GitView;
}

export interface RuleViolation {
  type: string;
  message: string;
  ruleset: Ruleset;
  /** the commits or files found breaking it */
  found: string[];
}

/** What GitHub says of each rule a ref write breaks (the texts of its GH013 messages). */
export const RULE_MESSAGES: Record<string, string> = {
  creation: "Cannot create ref due to creations being restricted.",
  update: "Cannot update this protected ref.",
  deletion: "Cannot delete this protected ref.",
  non_fast_forward: "Cannot force-push to this branch",
  // A push's "remote: error:" line, and a pull request merge's 405 (github.com/chdsbd/kodiak/issues/295).
  required_linear_history: "This branch must not contain merge commits.",
  // GH013 of a direct push to a branch that requires pull requests (e.g. github.com/yshavit/mdq/pull/255).
  pull_request: "Changes must be made through a pull request.",
  // 405 of a pull request merge and 422 of a direct update of a branch that requires a merge queue.
  merge_queue: "Changes must be made through the merge queue",
  // GH013 of a push with unsigned commits (e.g. github.com/vercel/sandbox/pull/169).
  required_signatures: "Commits must have verified signatures.",
  // The push rules' texts are the local GitHub's: GitHub has published none.
  file_path_restriction: "Changes to restricted file paths are not allowed.",
  file_extension_restriction: "Files with restricted file extensions are not allowed.",
};

const MB = 1024 * 1024;

/** The commits and files of a write, read once and only when a rule asks. */
class WriteFacts {
  #shas?: Promise<string[]>;
  #commits?: Promise<CommitFacts[]>;
  #files?: Promise<FileFacts[]>;
  constructor(
    private readonly core: SimCore,
    private readonly view: GitView,
    private readonly write: RefWrite,
  ) {}
  shas(): Promise<string[]> {
    const { before, after } = this.write;
    return (this.#shas ??= after ? newCommits(this.view, before, after) : Promise.resolve([]));
  }
  commits(): Promise<CommitFacts[]> {
    return (this.#commits ??= this.shas().then((s) => commitFacts(this.view, s, this.core.signer)));
  }
  files(): Promise<FileFacts[]> {
    return (this.#files ??= this.shas().then((s) => fileFacts(this.view, s)));
  }
}

/** The violation of one rule by a write, or undefined when it holds. */
async function judge(
  rule: Ruleset["rules"][number],
  write: RefWrite,
  facts: WriteFacts,
  viaPullRequest: boolean,
): Promise<{ message: string; found: string[] } | undefined> {
  const { before, after, ref } = write;
  const params = (rule.parameters ?? {}) as Record<string, unknown>;
  const updated = before !== null && after !== null;
  const plain = (broken: boolean) => (broken ? { message: RULE_MESSAGES[rule.type]!, found: [] } : undefined);
  const listed = (message: string, found: string[]) => (found.length ? { message, found } : undefined);
  switch (rule.type) {
    case "creation":
      return plain(before === null && after !== null);
    case "deletion":
      return plain(after === null && before !== null);
    case "update":
      return plain(updated);
    case "non_fast_forward":
      return plain(updated && !(await (write.fastForward?.() ?? Promise.resolve(true))));
    case "pull_request":
    case "merge_queue":
      return plain(updated && !viaPullRequest);
    case "required_linear_history":
      return listed(
        RULE_MESSAGES.required_linear_history!,
        (await facts.commits()).filter((c) => c.parents > 1).map((c) => c.sha),
      );
    case "required_signatures":
      return listed(
        RULE_MESSAGES.required_signatures!,
        (await facts.commits()).filter((c) => !c.verified).map((c) => c.sha),
      );
    case "commit_message_pattern":
    case "commit_author_email_pattern":
    case "committer_email_pattern": {
      const p = params as unknown as PatternParams;
      const field = (c: CommitFacts) =>
        rule.type === "commit_message_pattern"
          ? c.message.replace(/\n+$/, "")
          : rule.type === "commit_author_email_pattern"
            ? c.authorEmail
            : c.committerEmail;
      return listed(
        patternMessage(rule.type, p),
        (await facts.commits()).filter((c) => !patternHolds(p, field(c))).map((c) => c.sha),
      );
    }
    case "branch_name_pattern":
    case "tag_name_pattern": {
      const prefix = rule.type === "branch_name_pattern" ? "refs/heads/" : "refs/tags/";
      if (after === null || !ref.startsWith(prefix)) return undefined;
      const p = params as unknown as PatternParams;
      return patternHolds(p, ref.slice(prefix.length)) ? undefined : { message: patternMessage(rule.type, p), found: [] };
    }
    case "file_path_restriction": {
      const paths = (params.restricted_file_paths as string[] | undefined) ?? [];
      return listed(
        RULE_MESSAGES.file_path_restriction!,
        (await facts.files()).filter((f) => pathRestricted(paths, f.path)).map((f) => f.path),
      );
    }
    case "file_extension_restriction": {
      const exts = (params.restricted_file_extensions as string[] | undefined) ?? [];
      return listed(
        RULE_MESSAGES.file_extension_restriction!,
        (await facts.files()).filter((f) => extensionRestricted(exts, f.path)).map((f) => f.path),
      );
    }
    case "max_file_path_length": {
      const max = Number(params.max_file_path_length ?? Infinity);
      return listed(
        `File paths must not be longer than ${max} characters.`,
        (await facts.files()).filter((f) => f.path.length > max).map((f) => f.path),
      );
    }
    case "max_file_size": {
      const max = Number(params.max_file_size ?? Infinity);
      return listed(
        `Files must not be larger than ${max} MB.`,
        (await facts.files()).filter((f) => (f.size ?? 0) > max * MB).map((f) => `${f.path} (${((f.size ?? 0) / MB).toFixed(2)} MB)`),
      );
    }
    default:
      return undefined;
  }
}

/**
 * The rules a write breaks, each once with the commits or files found (a rule broken by two rulesets
 * is named once, by the first); empty when it may go ahead. `viaPullRequest`: the write is a pull
 * request's merge (bypass mode `pull_request` counts; the pull request rules are met elsewhere).
 */
export async function ruleViolations(
  core: SimCore,
  repo: Repo,
  write: RefWrite,
  who: ActContext,
  viaPullRequest = false,
): Promise<RuleViolation[]> {
  const view = write.view ?? { gitDir: repo.gitDir };
  // A write through the API that is not forced fast-forwards by construction (its compare-and-swap):
  // only a forced one, and a push, say how to tell.
  const w: RefWrite = { ...write, fastForward: write.fastForward ?? (() => Promise.resolve(true)) };
  const facts = new WriteFacts(core, view, w);
  const out: RuleViolation[] = [];
  for (const set of rulesetsOn(repo, write.ref)) {
    if (canBypass(repo, set, who, viaPullRequest)) continue;
    for (const rule of set.rules) {
      const broken = await judge(rule, w, facts, viaPullRequest);
      if (!broken) continue;
      const same = out.find((v) => v.message === broken.message);
      if (same) same.found = [...new Set([...same.found, ...broken.found])];
      else out.push({ type: rule.type, message: broken.message, ruleset: set, found: broken.found });
    }
  }
  return out;
}

/**
 * Refuse a write through the REST API that a ruleset forbids: "Repository rule violations found"
 * with the rules named — 422 (the refs API), 409 (the contents API, as its description says), 405
 * (a pull request merge).
 */
export async function enforceRules(core: SimCore, repo: Repo, write: RefWrite, who: ActContext, doc: string, status = 422): Promise<void> {
  const broken = await ruleViolations(core, repo, write, who, status === 405);
  if (broken.length) throw new HttpError(status, `Repository rule violations found\n\n${broken.map((v) => v.message).join("\n")}\n`, doc);
}

/**
 * GitHub's GH013 text for a push a ruleset refuses (each line becomes a `remote:` line), e.g.
 * github.com/vercel/sandbox/pull/169: the ref, where its rules are reviewed, each rule broken and
 * what was found.
 */
export function gh013(web: string, repo: Repo, ref: string, broken: readonly RuleViolation[]): string {
  const lines = [
    `error: GH013: Repository rule violations found for ${ref}.`,
    `Review all repository rules at ${web}/${repo.owner.login}/${repo.name}/rules?ref=${encodeURIComponent(ref)}`,
    "",
  ];
  for (const v of broken) {
    lines.push(`- ${v.message}`);
    if (v.found.length)
      lines.push(`  Found ${v.found.length} violation${v.found.length === 1 ? "" : "s"}:`, "", ...v.found.map((f) => `  ${f}`));
    lines.push("");
  }
  return `${lines.join("\n")}\n`;
}
