/**
 * Step 3 for a refinery whose branch must keep a linear history (dispatch context `squash`,
 * docs/executor.md#merging-under-the-repositorys-rules): the App merged nothing into the branch, so
 * before the agent starts the runner squashes each upstream's verified head onto it — one commit per
 * upstream, a single parent each (src/agent/squash.ts). The ones that conflict are left to the merge
 * stage, whose resolver takes them as it takes a conflicted merge. Every upstream squashed is
 * recorded (the task context's `squashed`, result.json's `squashed`): the App counts an upstream
 * contained by that record and by nothing an agent wrote.
 */
import { abandonSquash, squashHead, squashMessage, type SquashRecord } from "../../../src/agent/squash.js";
import type { SquashUpstream } from "../../../src/core/task-record.js";
import type { Journal } from "../../../src/core/journal.js";
import type { Git } from "../git.js";

export interface Squashed {
  /** Squashed here, in order. */
  records: SquashRecord[];
  /** Left to the merge stage: their squash conflicted. */
  conflicted: Array<SquashUpstream & { taskId?: string }>;
}

/**
 * Squashes each upstream onto the checked-out branch of `refinery`. A head that cannot be fetched is
 * left out with a warning: the App then finds that upstream not contained and fails the attempt.
 */
export async function squashUpstreams(
  git: Git,
  journal: Journal,
  refinery: string,
  branch: string,
  upstreams: readonly SquashUpstream[],
  warn: (message: string) => void,
): Promise<Squashed> {
  await git.fetchForMerge(
    upstreams.map((u) => u.branch),
    branch,
  );
  const run = git.forStages();
  const out: Squashed = { records: [], conflicted: [] };
  for (const u of upstreams) {
    // The branch may have moved past the verified head since: that head is fetched by its sha.
    if ((await git.run(["cat-file", "-e", `${u.head}^{commit}`], { allowFail: true })).code !== 0)
      await git.run(["fetch", "--no-tags", "--quiet", "origin", u.head], { allowFail: true });
    if ((await git.run(["cat-file", "-e", `${u.head}^{commit}`], { allowFail: true })).code !== 0) {
      warn(`could not fetch ${u.branch} at ${u.head}: it was not squashed onto the branch`);
      continue;
    }
    const taskId = journal.tasks.find((t) => t.attempt?.branch === u.branch)?.id;
    const upstream = { ...u, ...(taskId ? { taskId } : {}) };
    const parent = await git.head();
    const s = await squashHead(git.dir, u.head, squashMessage(refinery, upstream), run);
    if (s.squashed) out.records.push({ branch: u.branch, head: u.head, commit: s.commit });
    else {
      await abandonSquash(git.dir, parent, run);
      out.conflicted.push(upstream);
    }
  }
  return out;
}
