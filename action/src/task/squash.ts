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
import { agentResultSchema } from "../../../src/core/schemas/agent-result.js";
import type { Git } from "../git.js";
import type { AttemptId } from "../start-head.js";

export interface Squashed {
  /** Squashed here, in order. */
  records: SquashRecord[];
  /** Left to the merge stage: their squash conflicted. */
  conflicted: Array<SquashUpstream & { taskId?: string }>;
}

/**
 * Squashes each upstream onto the checked-out branch of `refinery`. A head that cannot be fetched is
 * left out with a warning: the App then finds that upstream not contained and fails the attempt.
 * `previous`: what the runner recorded at the branch's tip (a revision starts from the attempt's
 * record commit): an upstream squashed there already is not squashed again — its squash is carried
 * over, as a merged branch is already merged (a second squash of a head whose lines the refinery has
 * since changed would conflict).
 */
export async function squashUpstreams(
  git: Git,
  journal: Journal,
  refinery: string,
  branch: string,
  upstreams: readonly SquashUpstream[],
  warn: (message: string) => void,
  previous: readonly SquashRecord[] = [],
): Promise<Squashed> {
  await git.fetchForMerge(
    upstreams.map((u) => u.branch),
    branch,
  );
  const run = git.forStages();
  const out: Squashed = { records: [], conflicted: [] };
  for (const u of upstreams) {
    const before = previous.find((p) => p.branch === u.branch && p.head === u.head);
    if (before && (await git.run(["merge-base", "--is-ancestor", before.commit, "HEAD"], { allowFail: true })).code === 0) {
      out.records.push(before);
      continue;
    }
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

/**
 * The squashes the runner recorded at `tip` when it is this attempt's record commit (its Forge-*
 * trailers; only the runner pushes one): its result.json's `squashed`. Empty otherwise.
 */
export async function recordedSquashes(git: Git, tip: string, recordRel: string, id: AttemptId): Promise<SquashRecord[]> {
  const format = ["Forge-Run", "Forge-Task", "Forge-Attempt"].map((k) => `%(trailers:key=${k},valueonly,separator=%x2C)`).join("|");
  const [run, task, attempt] = (await git.out(["log", "-1", `--format=${format}`, tip]).catch(() => "")).split("|").map((x) => x.trim());
  if (run !== id.runId || task !== id.taskId || attempt !== String(id.attempt)) return [];
  const shown = await git.run(["show", `${tip}:${recordRel}/result.json`], { allowFail: true });
  if (shown.code !== 0) return [];
  try {
    const parsed = agentResultSchema.safeParse(JSON.parse(shown.stdout));
    return (parsed.data?.squashed ?? []).map((q) => ({ branch: q.branch, head: q.head_sha, commit: q.commit_sha }));
  } catch {
    return [];
  }
}
