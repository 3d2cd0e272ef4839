// A refinery's result with what GitHub says of its upstreams' heads, read before the batch is decided.
import type { LeafInput } from "../../core/inputs.js";
import type { Journal } from "../../core/journal.js";
import type { GitHubPort } from "../../github/port.js";
import { withContainment } from "../normalize.js";
import type { Logger } from "./types.js";

/**
 * A refinery's result without its containment facts is never decided: when GitHub cannot answer
 * the compare, it counts as a sign of life only (the same position in the batch), and the result
 * is read again from the branch by the job's completion or the reconciler.
 */
export async function checkContainment(
  port: GitHubPort,
  log: Logger,
  runId: string,
  journal: Journal,
  input: LeafInput,
): Promise<LeafInput> {
  try {
    return await withContainment(port, journal, input);
  } catch (e) {
    if (input.kind !== "agent.finished") throw e;
    log.warn(
      { runId, taskId: input.taskId, attempt: input.attempt, err: (e as Error).message },
      "could not compare a refinery's head with its upstreams; its result waits",
    );
    return { kind: "agent.heartbeat", taskId: input.taskId, attempt: input.attempt };
  }
}
