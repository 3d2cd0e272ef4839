/**
 * A rule of the repository that refuses Forge's write (docs/executor.md#when-a-rule-refuses-a-push):
 * GitHub's answers read back (src/github/rule-refusals.ts) — a push's GH013 and GH006, a REST
 * answer — worded for people with the rule, its ruleset, the branch and what to do; the reducer's
 * side: a job whose push was refused holds its task (`blocked`) until `/forge retry`; and the merge
 * refusals the App cannot resolve (`mergeBlocker`, `mergeMethodFor`).
 */
import { describe, expect, it } from "vitest";
import { decide, startRun, type Decision } from "../../src/core/decide/index.js";
import type { LeafInput } from "../../src/core/inputs.js";
import { journalSchema, type Journal } from "../../src/core/journal.js";
import { forgeConfigSchema, type ForgeConfig } from "../../src/core/schemas/config.js";
import { forgeEventSchema } from "../../src/core/schemas/events.js";
import { mergeBlocker, mergeMethodFor } from "../../src/github/merge-rules.js";
import { pushBlockedReason, ruleRefusal, ruleTypesOf, type NamedRule } from "../../src/github/rule-refusals.js";
import { newRun, nodes } from "../helpers/world.js";

const config: ForgeConfig = forgeConfigSchema.parse({});

// A push GitHub refused, as `git push` prints it (github.com/vercel/sandbox/pull/169's shape).
const GH013 = `git push failed (exit 1): remote: error: GH013: Repository rule violations found for refs/heads/forge/r/a/1.
remote: Review all repository rules at https://github.com/acme/w/rules?ref=refs%2Fheads%2Fforge%2Fr%2Fa%2F1
remote:
remote: - Commits must have verified signatures.
remote:   Found 2 violations:
remote:
remote:   027faa7121ee9df79db623e1a2848d2cc88a8dba
remote:   d45f35d02a31c451a4a13387f03c6ed440b28431
remote:
remote: - Files must not be larger than 1 MB.
remote:   Found 1 violation:
remote:
remote:   big.bin (1.43 MB)
remote:
To https://github.com/acme/w
 ! [remote rejected] HEAD -> forge/r/a/1 (push declined due to repository rule violations)
error: failed to push some refs to 'https://github.com/acme/w'`;

const rules: NamedRule[] = [
  { type: "required_signatures", ruleset: { id: 7, name: "signed everywhere", source: "acmeorg", sourceType: "Organization" } },
  {
    type: "max_file_size",
    parameters: { max_file_size: 1 },
    ruleset: { id: 8, name: "small files", source: "acme/w", sourceType: "Repository" },
  },
  { type: "commit_message_pattern", parameters: { operator: "regex", pattern: "^feat", name: "Conventional commits" }, ruleset: { id: 9 } },
];

describe("GitHub's refusals read back", () => {
  it("a push's GH013: the ref, each rule, what was found; GH006 and a REST answer too; anything else is none", () => {
    expect(ruleRefusal(GH013)).toEqual({
      code: "GH013",
      ref: "refs/heads/forge/r/a/1",
      messages: ["Commits must have verified signatures.", "Files must not be larger than 1 MB."],
      found: ["027faa7121ee9df79db623e1a2848d2cc88a8dba", "d45f35d02a31c451a4a13387f03c6ed440b28431", "big.bin (1.43 MB)"],
    });
    expect(
      ruleRefusal(
        "remote: error: GH006: Protected branch update failed for refs/heads/main.\nremote: error: Changes must be made through a pull request.\n",
      ),
    ).toEqual({
      code: "GH006",
      ref: "refs/heads/main",
      messages: ["Changes must be made through a pull request."],
      found: [],
    });
    // An annotation's new lines may come escaped (%0A, a workflow command's encoding).
    expect(
      ruleRefusal("Forge could not push x: Repository rule violations found%0A%0AChanges must be made through the merge queue%0A"),
    ).toMatchObject({
      code: "REST",
      messages: ["Changes must be made through the merge queue"],
    });
    expect(ruleRefusal("git push failed (exit 128): fatal: unable to access")).toBeUndefined();
  });

  it("rule types come from GitHub's texts, or from the name a metadata rule was given", () => {
    expect(ruleTypesOf("Commits must have verified signatures.")).toEqual(["required_signatures"]);
    expect(ruleTypesOf("Changes must be made through the merge queue")).toEqual(["merge_queue"]);
    expect(ruleTypesOf("This branch must not contain merge commits.")).toEqual(["required_linear_history"]);
    expect(ruleTypesOf("Conventional commits", rules)).toEqual(["commit_message_pattern"]);
    expect(ruleTypesOf("Commit message must start with a matching pattern: feat")).toEqual(["commit_message_pattern"]);
    expect(ruleTypesOf("Changes to restricted file paths are not allowed.")).toEqual(["file_path_restriction"]);
    expect(ruleTypesOf("something new")).toEqual([]);
  });

  it("a refused push is worded with its rules, their rulesets (an organisation's named so), the branch, what was found and what to do", () => {
    const why = pushBlockedReason(ruleRefusal(GH013)!, "forge/r/a/1", rules);
    expect(why).toContain("GitHub refused the push of `forge/r/a/1` (GH013)");
    expect(why).toContain('the `required_signatures` rule of ruleset "signed everywhere" of the organisation acmeorg');
    expect(why).toContain('the `max_file_size` rule of ruleset "small files"');
    expect(why).toContain("big.bin (1.43 MB)");
    expect(why).toContain("the job's commits are not signed");
    expect(why).toContain("`/forge retry`");
  });
});

describe("merges the rules refuse", () => {
  it("a merge queue names the rule and its ruleset and says the queue did not take the PR; signatures ask for a squash", () => {
    const b = "forge/r/_integration";
    const queue = mergeBlocker(
      "Repository rule violations found\n\nChanges must be made through the merge queue\n",
      b,
      [],
      [{ type: "merge_queue", ruleset: { id: 3, name: "queue", source: "acme/w", sourceType: "Repository" } }],
    );
    expect(queue).toMatch(
      /^the `merge_queue` rule of ruleset "queue" on `forge\/r\/_integration` requires merges through GitHub's merge queue, and the queue did not take this pull request/,
    );
    expect(queue).toContain("bypass list");
    // Approvals keep their wording, with the ruleset when the rules say.
    expect(
      mergeBlocker(
        "At least 1 approving review is required by reviewers with write access.",
        b,
        [],
        [{ type: "pull_request", ruleset: { id: 4, name: "reviews" } }],
      ),
    ).toMatch(/^required approvals on `forge\/r\/_integration` \(the `pull_request` rule of ruleset "reviews"\): /);
    expect(mergeBlocker("Repository rule violations found\n\nCommits must have verified signatures.\n", b, [])).toContain(
      "GitHub signs the squash and merge commits it makes but not a rebase's",
    );
    expect(mergeMethodFor([{ type: "required_signatures" }])).toBe("squash");
  });
});

describe("a job whose push a rule refused", () => {
  function running() {
    return startRun(newRun(nodes({ a: [] })), 0, config).journal;
  }
  const lost = (extra: Partial<LeafInput> = {}): LeafInput =>
    ({ kind: "agent.lost", taskId: "a", attempt: 1, workflowRunId: 5, reason: "the job ended (failure)", ...extra }) as LeafInput;

  function feed(j: Journal, input: LeafInput, now = 1000): Decision {
    const d = decide(j, input, now, config);
    for (const e of d.events) expect(forgeEventSchema.safeParse(e).success, JSON.stringify(e)).toBe(true);
    expect(journalSchema.safeParse(d.journal).success).toBe(true);
    return d;
  }

  it("holds the task (blocked, not retried), says why on its PR or the tracker; /forge retry starts the next attempt", () => {
    const d = feed(running(), lost({ blockedBy: "GitHub refused the push of `forge/r/a/1` (GH013): the `max_file_size` rule" }));
    const t = d.journal.tasks[0]!;
    expect(t).toMatchObject({ status: "FAILED", attempts: 1, lastError: expect.stringContaining("max_file_size") });
    expect(t.attempt?.hold).toBe("blocked");
    const comment = d.effects.find((e) => e.kind === "PostComment");
    expect(comment).toMatchObject({ key: "push-blocked:a:1" });
    expect((comment as { body: string }).body).toContain("Forge stopped `a`");
    expect((comment as { body: string }).body).toContain("/forge retry a");
    expect(d.events.map((e) => e.type)).toContain("task.failed");
    // Time passes: nothing retries it.
    const later = feed(d.journal, { kind: "tick" } as LeafInput, 10 * 60_000);
    expect(later.journal.tasks[0]).toMatchObject({ status: "FAILED", attempts: 1 });
    const retried = feed(d.journal, { kind: "command", command: "retry", actor: "octocat", taskId: "a" });
    expect(retried.rejections).toEqual([]);
    expect(retried.journal.tasks[0]!.status).not.toBe("FAILED");
  });

  it("a job that ended without a result for another reason is retried as before", () => {
    const d = feed(running(), lost());
    expect(d.journal.tasks[0]!.attempt?.hold).toBeUndefined();
    expect(d.journal.tasks[0]!.status).toBe("PENDING");
  });
});
