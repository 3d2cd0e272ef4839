/**
 * The checkpoint a runner that died between stages left at its branch head (src/app/branch-checkpoint.ts):
 * read only from the attempt's own checkpoint commit, bounded, parsed and schema-checked before the
 * executor checks its fields; anything else is no checkpoint, or a refused one with its reason.
 */
import { describe, expect, it } from "vitest";
import { readBranchCheckpoint } from "../../src/app/branch-checkpoint.js";
import { checkpointPath } from "../../src/core/layout.js";
import type { Checkpoint } from "../../src/core/schemas/checkpoint.js";

const ref = { runId: "run-1", taskId: "a", attempt: 1 };
const HEAD = "c".repeat(40);
const WORK = "b".repeat(40);
const PATH = checkpointPath("run-1", "a", 1);

const checkpoint: Checkpoint = {
  checkpoint_version: 1,
  created_at: "2026-01-01T00:00:00.000Z",
  run_id: "run-1",
  task_id: "a",
  attempt: 1,
  trace_id: "0123456789abcdef",
  completed_stages: [{ name: "implement", exit_code: 0 }],
  pending_stages: ["verify", "walkthrough"],
  depth_used: 0,
  depth_max: 3,
  agent_session: { adapter: "claude", id: "5a1f3c2e-0000-4000-8000-000000000001", stage: "verify" },
  head_sha: WORK,
};

const message = (trailers: string) => `forge(a): checkpoint after stage implement\n\n${trailers}\n`;
const OURS = message("Run: run-1\nTask: a\nAttempt: 1\nAgent: claude\nForge-Checkpoint: implement");

function port(content: string | null, msg = OURS, parents = [WORK]) {
  return {
    commit: async (sha: string) => ({ sha, message: msg, parents }),
    readFile: async (path: string, at: string) =>
      path === PATH && at === HEAD && content !== null ? { content, blobSha: "f".repeat(40) } : null,
  };
}

describe("the checkpoint at a branch head", () => {
  it("the attempt's checkpoint commit: its checkpoint, the commit to continue from and its parent to check it against", async () => {
    expect(await readBranchCheckpoint(port(JSON.stringify(checkpoint)), ref, HEAD)).toEqual({
      checkpoint,
      checkpointSha: HEAD,
      pushedSha: WORK,
    });
  });

  it("no checkpoint commit of this attempt at the head: nothing read", async () => {
    const work = message("Run: run-1\nTask: a\nAttempt: 1\nAgent: claude\nStage: implement");
    const other = message("Run: run-1\nTask: a\nAttempt: 2\nForge-Checkpoint: implement");
    const noTrailers = "forge(a): checkpoint after stage implement\n";
    for (const msg of [work, other, noTrailers])
      expect(await readBranchCheckpoint(port(JSON.stringify(checkpoint), msg), ref, HEAD)).toEqual({});
  });

  it("a forged, oversized or malformed one is refused with its reason, never parsed past its bounds", async () => {
    const cases: Array<[ReturnType<typeof port>, RegExp]> = [
      [port(null), /has no \.forge\/runs\/run-1\/a\/1\/checkpoint\.json$/],
      [port(JSON.stringify(checkpoint), OURS, [WORK, "d".repeat(40)]), /has 2 parents/],
      [port(`{"pad":"${"x".repeat(20_000)}"}`), /of 20\d\d\d bytes, over the 16384 a checkpoint may have$/],
      [port("{not json"), /that is not JSON/],
      [port(JSON.stringify({ ...checkpoint, extra: 1 })), /holds no checkpoint: /],
      [port(JSON.stringify({ ...checkpoint, run_id: "r".repeat(201) })), /holds no checkpoint: .*run_id/],
      [port(JSON.stringify({ ...checkpoint, pending_stages: ["$(rm -rf /)"] })), /holds no checkpoint: .*pending_stages/],
      [port(JSON.stringify({ ...checkpoint, head_sha: "HEAD" })), /holds no checkpoint: .*head_sha/],
      [port(JSON.stringify([checkpoint])), /holds no checkpoint: /],
    ];
    for (const [p, why] of cases) {
      const read = await readBranchCheckpoint(p, ref, HEAD);
      expect(read.checkpoint).toBeUndefined();
      expect(read.checkpointSha).toBeUndefined();
      expect(read.checkpointProblem).toMatch(/^the checkpoint commit cccccccccccc /);
      expect(read.checkpointProblem).toMatch(why);
      expect(read.checkpointProblem!.length).toBeLessThan(800);
    }
  });
});
