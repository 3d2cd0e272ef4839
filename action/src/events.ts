/**
 * The attempt's own event log (`events.ndjson` in the record folder, see docs/formats.md#attempt-events): the run events' envelope,
 * numbered within the attempt, committed with the attempt's record. While the job runs, the App
 * learns the agent's progress and last heartbeat from the live check run instead
 * (task/live-check.ts, src/core/live-progress.ts, docs/runner.md#live-progress): its reconciler reads
 * it once per sweep and records it when it changed — a new stage as `task.progress` in the run log.
 */
import { appendFileSync } from "node:fs";
import type { EventData, EventType } from "../../src/core/schemas/events.js";

export class AttemptEvents {
  #seq = 0;
  constructor(
    readonly file: string,
    readonly runId: string,
    readonly taskId: string,
    readonly attempt: number,
    private readonly now: () => number = Date.now,
  ) {}

  get agentId(): string {
    return `${this.runId}/${this.taskId}/${this.attempt}`;
  }

  emit<T extends EventType>(type: T, data: EventData<T>): void {
    this.#seq++;
    const event = {
      eventId: `${this.agentId}:${this.#seq}`,
      seq: this.#seq,
      timestamp: new Date(this.now()).toISOString(),
      type,
      runId: this.runId,
      taskId: this.taskId,
      data,
    };
    appendFileSync(this.file, `${JSON.stringify(event)}\n`);
  }
}
