import type { FileProblem } from "../problems.js";

/**
 * What `forge validate` reports. Every rule of docs/formats.md#validation-rules has an id here, so tools (and tests) can
 * tell problems apart without parsing messages.
 */
export const PLAN_RULES = {
  "missing-file": "plan.md, dag.json or tasks/ is missing.",
  "unreadable-file": "A file of the plan could not be read.",
  "unexpected-file": "A file in tasks/ that is not a Markdown task file.",
  "unreadable-yaml": "A frontmatter block is not valid YAML, or is not YAML at all (`---js` and other languages are refused, never run).",
  "unreadable-json": "dag.json is not valid JSON.",
  "invalid-frontmatter": "A task's or overlay's frontmatter does not match its schema.",
  "unknown-model": "A task's `model` is neither a tier (low, medium, high) nor a model id (letters, digits and . _ : / @ -).",
  "unknown-agent":
    "A task's `agent` (or a kind's in the config) names no adapter Forge has (docs/runner.md#adapters); an agent is only ever an adapter's name, never a command.",
  "model-not-for-agent":
    "A task's `model` (or a kind's in the config) is a model id one of its agents cannot take (a Claude model on Codex, say): name a tier, or a model of that agent.",
  "removed-field": "A task sets a field Forge no longer reads (`base_ref`: every task branch is cut from the run's integration branch).",
  "invalid-dag": "dag.json does not match its schema.",
  "bad-id": "An id does not match [a-z0-9][a-z0-9._-]*, or cannot be part of a git branch name ('..', or '.lock' or '.' at its end).",
  "duplicate-id": "Two tasks, or two dag.json nodes, have the same id.",
  "id-file-mismatch": "A task or overlay file is not named after its id.",
  "plan-id-mismatch": "dag.json's planId is not the plan folder's name.",
  "unknown-dependency": "A dependency names no task of the plan.",
  "self-dependency": "A task depends on itself.",
  "duplicate-dependency": "A dependency is listed twice.",
  cycle: "The dependencies form a cycle.",
  "refinery-without-dependencies": "A refinery has nothing to integrate.",
  "type-mismatch": "A dag.json node's type and agentType disagree (type is refinery exactly when agentType is).",
  "metadata-totals": "dag.json's metadata totals do not count its nodes.",
  "dag-disagrees": "dag.json and the task files disagree (nodes, dependencies or types).",
  "missing-section": "A task body lacks ## Description, ## Context or ## Instructions, or one is empty.",
  "unknown-spec": "A task's spec names no file of the plan.",
  "sentinel-on-refinery": "A refinery sets `sentinel`: it verifies in its own test and fix stages, not with the task sentinel.",
  "overlay-numbering": "Overlays are not numbered overlay-001, overlay-002, … without gaps.",
  "overlay-not-append-only": "An overlay changes what existed instead of only adding tasks and edges.",
  "dag-not-base-plus-overlays": "dag.json is not the base plan plus every overlay in order.",
} as const;

export type PlanRule = keyof typeof PLAN_RULES;

/**
 * One thing wrong with a plan, and the rule it breaks. `file` is relative to the plan folder, with `/`
 * separators. `.github/forge.yml`'s problems have the same shape (docs/formats.md#validation-rules).
 */
export interface Problem extends FileProblem {
  rule: PlanRule;
}

/** Where a problem is: everything of a Problem but the message and the rule. */
export type Location = Pick<Problem, "file" | "line" | "field">;

export function problem(at: Location, rule: PlanRule, message: string): Problem {
  return {
    file: at.file,
    ...(at.line !== undefined && { line: at.line }),
    ...(at.field !== undefined && { field: at.field }),
    message,
    rule,
  };
}

/** Problems in a stable order: by file, then line, then field. */
export function sortProblems(problems: Problem[]): Problem[] {
  return problems
    .map((p, i) => ({ p, i }))
    .sort((a, b) => (a.p.file < b.p.file ? -1 : a.p.file > b.p.file ? 1 : 0) || (a.p.line ?? 0) - (b.p.line ?? 0) || a.i - b.i)
    .map(({ p }) => p);
}
