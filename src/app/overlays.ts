/**
 * Applying a Change Request's overlay when its PR lands on the default branch: the overlay must
 * pass the `forge validate` rules and be append-only — it may add tasks and edges to the plan the
 * run pinned, never remove or change one, and the result must still be a DAG. A refused overlay
 * gets a comment on its CR issue saying why; the run stays paused.
 */
import type { LeafInput } from "../core/inputs.js";
import { planDir } from "../core/layout.js";
import { validateDagChange } from "../core/plan/validate.js";
import { formatProblem } from "../core/problems.js";
import type { GitHubPort } from "../github/port.js";
import type { Engine } from "./engine/index.js";
import { pinnedDag, planNodes, readPlan } from "./plan-source.js";
import { asData } from "../core/render/as-data.js";

export async function overlayInput(
  port: GitHubPort,
  engine: Engine,
  runId: string,
  planId: string,
  file: string,
  sha: string,
): Promise<{ input?: LeafInput; problem?: string }> {
  const loaded = await engine.state(runId);
  if (!loaded) return { problem: `run ${runId} not found` };
  const { journal } = loaded.state;
  const overlayId = file.replace(/^overlays\//, "").replace(/\.md$/, "");
  if (journal.plan.overlays.includes(overlayId)) return {};
  const plan = await readPlan(port, planId, sha);
  const overlay = plan.parsed.overlays.find((o) => o.name === overlayId)?.data;
  const cr = overlay ? journal.changeRequests.find((c) => c.id === overlay.cr) : undefined;
  let problem: string | undefined;
  if (!overlay) problem = `${planDir(planId)}/${file} has no valid overlay frontmatter`;
  else if (!cr) problem = `${overlayId} names Change Request ${overlay.cr}, which run ${runId} does not have`;
  else if (cr.status === "rejected" || cr.status === "applied") problem = `Change Request ${cr.id} is already ${cr.status}`;
  else if (plan.problems.length) {
    problem = `the plan does not pass \`forge validate\`:\n${plan.problems
      .slice(0, 20)
      .map((p) => `- ${formatProblem({ ...p, file: `${planDir(planId)}/${p.file}` }, { markdown: true })}`)
      .join("\n")}`;
  } else {
    const changes = validateDagChange(pinnedDag(journal), plan.parsed.dag.data!);
    if (changes.length) problem = `the overlay is not append-only:\n${changes.map((p) => `- ${p.message}`).join("\n")}`;
  }
  if (problem) {
    const issue = cr?.issueNumber;
    // The problems quote the overlay, which a Captain agent wrote: shown as data.
    if (issue !== undefined) await port.createComment(issue, `Forge refused \`${overlayId}\`: ${asData(problem)}`);
    return { problem };
  }
  const added = new Set(overlay!.added_tasks);
  return {
    input: {
      kind: "overlay.applied",
      crId: cr!.id,
      overlayId,
      planCommit: sha,
      nodes: planNodes(plan.parsed).filter((n) => added.has(n.id)),
      edges: overlay!.added_edges,
    },
  };
}
