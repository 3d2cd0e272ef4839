// A refinery's preparation and verification where its branch must keep a linear history
// (docs/executor.md#merging-under-the-repositorys-rules), against a port in memory: the App merges
// nothing and hands every upstream to the job to squash; containment takes the runner's record of
// those squashes — only for the head the journal verified, and only when the commit is in the
// refinery's history; the final PR's base tells how it wants merging.
import { describe, expect, it } from "vitest";
import { prepareBranch } from "../../src/app/effects/branches-and-dispatch.js";
import type { EffectContext } from "../../src/app/effects/context.js";
import { openFinalPullRequest } from "../../src/app/effects/issues-and-comments.js";
import { withContainment } from "../../src/app/normalize.js";
import type { LeafInput } from "../../src/core/inputs.js";
import type { Journal } from "../../src/core/journal.js";
import type { SquashUpstream } from "../../src/core/task-record.js";
import { finalMergeMethod, type BranchRule } from "../../src/github/merge-rules.js";
import { GitHubError, type MergeResult } from "../../src/github/port.js";

const A = "a".repeat(40);
const B = "b".repeat(40);
const R = "e".repeat(40);
const upstream = (id: string, recordSha: string) => ({
  id,
  status: "MERGE_READY",
  attempts: 1,
  attempt: { branch: `forge/run-1/${id}/1`, recordSha, revision: { iteration: 0, dispatchedAt: "2026-01-01T00:00:00Z" } },
});

/** A port that answers the rules given and merges as `merge` says, noting each merge. */
function world(rules: BranchRule[] | Error, merge: (head: string) => MergeResult | Error) {
  const merges: string[] = [];
  const port = {
    branchHead: async () => "1".repeat(40),
    createBranch: async () => true,
    branchRules: async () => {
      if (rules instanceof Error) throw rules;
      return rules;
    },
    mergeBranch: async (_base: string, head: string) => {
      merges.push(head);
      const r = merge(head);
      if (r instanceof Error) throw r;
      return r;
    },
  };
  const journal = { tasks: [upstream("a", A), upstream("b", B)] };
  const squash = new Map<string, SquashUpstream[]>();
  const conflicts = new Map<string, string[]>();
  const ctx = { port, journal, conflicts, squash } as unknown as EffectContext;
  const prepare = () =>
    prepareBranch(
      {
        key: "branch:r:1",
        kind: "PrepareBranch",
        taskId: "r",
        attempt: 1,
        branch: "forge/run-1/r/1",
        from: "forge/run-1/_integration",
        merge: ["forge/run-1/a/1", "forge/run-1/b/1"],
      },
      ctx,
    );
  return { merges, squash, conflicts, prepare };
}

const both = [
  { branch: "forge/run-1/a/1", head: A },
  { branch: "forge/run-1/b/1", head: B },
];

describe("preparing a refinery's branch that must keep a linear history", () => {
  it("rules that want a linear history: nothing is merged, every upstream goes to the job at its verified head", async () => {
    const w = world([{ type: "required_linear_history" }], () => ({ kind: "merged", sha: "2".repeat(40) }));
    expect(await w.prepare()).toEqual({ kind: "done", result: { conflicts: [], squash: both } });
    expect(w.merges).toEqual([]);
    expect(w.squash.get("r:1")).toEqual(both);
  });

  it("rules that cannot be read: the first merge GitHub refuses for its merge commit turns the rest (and the conflicted) to squashes", async () => {
    const refused = new GitHubError(
      "repos.merge: 422 Repository rule violations found\n\nThis branch must not contain merge commits.",
      422,
      "repos.merge",
    );
    // a conflicts (nothing written), then b's merge is refused: both go to the job.
    const w = world(new Error("500"), (head) => (head === A ? { kind: "conflict" } : refused));
    expect(await w.prepare()).toEqual({ kind: "done", result: { conflicts: [], squash: both } });
    expect(w.merges).toEqual([A, B]);
    expect(w.conflicts.get("r:1")).toBeUndefined();
  });

  it("without a linear history the upstreams are merged server-side as before; another refusal fails the preparation", async () => {
    const w = world([{ type: "deletion" }], (head) => (head === B ? { kind: "conflict" } : { kind: "merged", sha: "2".repeat(40) }));
    expect(await w.prepare()).toEqual({ kind: "done", result: { conflicts: ["forge/run-1/b/1"] } });
    expect(w.merges).toEqual([A, B]);
    expect(w.squash.size).toBe(0);
    const other = world(
      [],
      () => new GitHubError("repos.merge: 422 Repository rule violations found\n\nCannot update this protected ref.", 422, "repos.merge"),
    );
    await expect(other.prepare()).rejects.toThrow("Cannot update this protected ref");
  });
});

describe("a refinery's containment on a linear branch", () => {
  const journal = {
    plan: {
      nodes: [
        { id: "a", kind: "task", dependencies: [] },
        { id: "b", kind: "task", dependencies: [] },
        { id: "r", kind: "refinery", dependencies: ["a", "b"] },
      ],
    },
    tasks: [upstream("a", A), upstream("b", B), { id: "r", status: "RUNNING", attempts: 1, attempt: { branch: "forge/run-1/r/1" } }],
  } as unknown as Journal;
  const SA = "5".repeat(40);
  const SB = "6".repeat(40);
  /** GitHub's compare: which commits the record commit holds. */
  const port = (held: string[]) =>
    ({ compareCommits: async (base: string, head: string) => (head === R && held.includes(base) ? "ahead" : "diverged") }) as never;
  const finished = (squashed?: { branch: string; head: string; commit: string }[]): LeafInput =>
    ({ kind: "agent.finished", taskId: "r", attempt: 1, exitCode: 0, recordSha: R, ...(squashed ? { squashed } : {}) }) as LeafInput;
  const uncontained = async (held: string[], squashed?: { branch: string; head: string; commit: string }[]) =>
    ((await withContainment(port(held), journal, finished(squashed))) as { uncontainedUpstreams?: string[] }).uncontainedUpstreams;

  it("counts an upstream the runner squashed at its verified head into a commit the record holds", async () => {
    const record = [
      { branch: "forge/run-1/a/1", head: A, commit: SA },
      { branch: "forge/run-1/b/1", head: B, commit: SB },
    ];
    expect(await uncontained([SA, SB], record)).toEqual([]);
    // The squash commit is not in the refinery's history: not contained.
    expect(await uncontained([SA], record)).toEqual(["b"]);
  });

  it("a record of another head, or of another branch, counts for nothing; without a record the upstream's own head must be held", async () => {
    const other = "7".repeat(40);
    expect(
      await uncontained(
        [SA, SB],
        [
          { branch: "forge/run-1/a/1", head: other, commit: SA },
          { branch: "forge/run-1/x/1", head: B, commit: SB },
        ],
      ),
    ).toEqual(["a", "b"]);
    // No record at all: ancestry, as on any branch (a merge commit brought A in, B is missing).
    expect(await uncontained([A])).toEqual(["b"]);
  });
});

describe("the final PR's merge method", () => {
  it("rebase on a base that must keep a linear history, squash when only squash is allowed, nothing said otherwise", () => {
    expect(finalMergeMethod([{ type: "required_linear_history" }])).toBe("rebase");
    expect(finalMergeMethod([{ type: "pull_request", parameters: { allowed_merge_methods: ["squash"] } }])).toBe("squash");
    expect(finalMergeMethod([{ type: "pull_request", parameters: { allowed_merge_methods: ["squash", "rebase"] } }])).toBe("rebase");
    expect(finalMergeMethod([{ type: "pull_request", parameters: { allowed_merge_methods: ["merge", "squash"] } }])).toBeUndefined();
    expect(finalMergeMethod([])).toBeUndefined();
  });
});

describe("the final PR's body under a base that refuses merge commits", () => {
  /** Opens the final PR with the base's and the integration branch's rules given; returns its body. */
  async function finalBody(base: BranchRule[], integration: BranchRule[]): Promise<string> {
    let body = "";
    const port = {
      findPullRequest: async () => null,
      createPullRequest: async (f: { body: string }) => {
        body = f.body;
        return { number: 9 };
      },
      branchRules: async (branch: string) => (branch === "main" ? base : integration),
      readFile: async () => null,
      listDirectory: async () => [],
    };
    const journal = {
      runId: "run-1",
      planId: "p",
      integrationBranch: "forge/run-1/_integration",
      baseBranch: "main",
      tasks: [],
      followups: [],
    };
    const ctx = { port, journal, facts: {}, events: [], now: 0, config: {} } as unknown as EffectContext;
    await openFinalPullRequest({ key: "final", kind: "OpenFinalPullRequest" }, ctx);
    return body;
  }

  it("names Rebase when the integration branch was squashed into, Squash when it holds merge commits, nothing when merge commits are fine", async () => {
    const linear = [{ type: "required_linear_history" }];
    expect(await finalBody(linear, linear)).toContain("Merge it with **Rebase and merge** (each task's commit lands");
    const squashOnly = await finalBody(linear, []);
    expect(squashOnly).toContain("Merge it with **Squash and merge** (the run lands as one commit).");
    expect(squashOnly).not.toContain("Rebase");
    expect(await finalBody([], linear)).not.toContain("linear history");
  });
});
