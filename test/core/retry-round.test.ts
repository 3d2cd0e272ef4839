/**
 * `/forge retry failed`: one command input retries every failed or exhausted task of the run in one
 * decision — not counted, not delayed, the message as each next attempt's answer — and leaves the
 * tasks that wait for a command of their own (an answer, a Change Request, budget); the reply names
 * both, each id as code.
 */
import { describe, expect, it } from "vitest";
import { decide } from "../../src/core/decide/index.js";
import type { LeafInput } from "../../src/core/inputs.js";
import { roundRetryReply } from "../../src/core/render/run-messages.js";
import { cfg, feed, merged, start, status, success } from "./decide-helpers.js";

const config = cfg({ max_parallel_agents: 10, max_retries: 0 });
const round = (message?: string): LeafInput => ({
  kind: "command",
  command: "retry",
  actor: "octocat",
  which: "failed",
  ...(message ? { message } : {}),
});
const exit = (taskId: string, exitCode: number, extra: Record<string, unknown> = {}): LeafInput =>
  ({ kind: "agent.finished", taskId, attempt: 1, exitCode, error: `exit ${exitCode}`, ...extra }) as LeafInput;

describe("/forge retry failed", () => {
  it("retries every exhausted or fatal task in one decision, leaves a question, a merged and a running task alone", () => {
    const d = start({ a: [], b: [], c: [], d: [], e: [], f: [] }, config);
    const failed = feed(
      d.journal,
      [exit("a", 1), exit("b", 2), exit("c", 3, { question: "Which registry?" }), success("d"), merged("d"), exit("e", 10)],
      1000,
      config,
    );
    expect(["a", "b", "c", "e"].map((id) => status(failed.journal, id).attempt?.hold)).toEqual([
      "exhausted",
      "fatal",
      "human",
      "exhausted",
    ]);

    const r = decide(failed.journal, round("the registry is back"), 2000, config);
    expect(r.rejections).toEqual([]);
    const retried = r.events.filter((e) => e.type === "task.retried");
    expect(retried.map((e) => [e.taskId, e.data])).toEqual(
      ["a", "b", "e"].map((id) => [id, expect.objectContaining({ attemptId: 2, manual: true })]),
    );
    // Dispatched again at once, neither counted nor delayed, with the message as the next attempt's answer.
    for (const id of ["a", "b", "e"]) {
      expect(status(r.journal, id)).toMatchObject({ status: "RUNNING", attempts: 2, retries: 0 });
      expect(r.effects.find((e) => e.kind === "DispatchAgent" && e.taskId === id)).toMatchObject({
        attempt: 2,
        context: { answer: "the registry is back" },
      });
    }
    expect(status(r.journal, "c")).toMatchObject({ status: "FAILED", attempts: 1, attempt: { hold: "human" } });
    expect(status(r.journal, "d").status).toBe("MERGED");
    expect(status(r.journal, "f")).toMatchObject({ status: "RUNNING", attempts: 1 });
  });

  it("says so when nothing is failed or exhausted, and a task waiting for its answer is not retried by it", () => {
    const d = start({ a: [], b: [] }, config);
    const asked = feed(d.journal, [exit("a", 3, { question: "Which?" })], 1000, config);
    const r = decide(asked.journal, round(), 2000, config);
    expect(r.rejections.map((x) => x.reason)).toEqual(["no task of the run is failed or exhausted: nothing to retry"]);
    expect(r.events.filter((e) => e.type === "task.retried")).toEqual([]);
    expect(status(r.journal, "a").attempt?.hold).toBe("human");
  });

  it("replies with the tasks retried and those left waiting, each as code, no backtick let through", () => {
    expect(
      roundRetryReply(
        ["a", "b"],
        [
          { id: "c", hold: "human" },
          { id: "x", hold: "exhausted" },
          { id: "q`z", hold: "budget" },
        ],
      ),
    ).toBe(
      [
        "Retried 2 failed tasks: `a`, `b`.",
        "",
        "Not retried, each waiting for a command of its own:",
        "- `c` waits for an answer: `/forge retry c <answer>`",
        "- `q'z` waits for `/forge budget q'z +<dollars>`",
      ].join("\n"),
    );
    expect(roundRetryReply(["a"], [])).toBe("Retried 1 failed task: `a`.");
  });
});
