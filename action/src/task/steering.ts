/**
 * `/forge steer <message>` reaching a running agent (docs/runner.md#steering). The App keeps each
 * message in the journal; the job reads the journal every heartbeat and adds the ones it has not
 * seen to the agent's context, which every stage that starts afterwards gets in its prompt. None of
 * Forge's adapters takes a message in the middle of a session (Claude Code and Codex run one prompt
 * per session, `-p`/`exec`; a command reads its prompt once), so a message reaches the agent at the
 * start of its next stage. Messages are people's text: bounded by the App, sanitized and quoted here.
 */
import { quoteUntrusted } from "../../../src/agent/secrets.js";
import { asData } from "../../../src/core/render/as-data.js";
import { readJournal } from "../dispatch-check.js";
import type { TaskAttempt } from "./context.js";

export interface Received {
  id: number;
  actor: string;
  message: string;
  /** Milliseconds after the job started. */
  atMs: number;
}

export interface Steering {
  received: Received[];
  stop(): Promise<void>;
}

/** Reads the journal every heartbeat while the agent runs; messages numbered above the ones there at the job's start are new. */
export function startSteering(a: TaskAttempt): Steering {
  const { runId, taskId } = a.ids;
  let seen = a.task.steering?.at(-1)?.id ?? 0;
  const received: Received[] = [];
  const prompts: string[] = [];
  a.built.taskContext.steering = prompts;
  let polling: Promise<void> = Promise.resolve();
  const poll = async () => {
    const journal = await readJournal(a.github, runId).catch(() => undefined);
    const t = typeof journal === "object" ? journal.tasks.find((x) => x.id === taskId) : undefined;
    for (const m of t?.steering ?? []) {
      if (m.id <= seen) continue;
      seen = m.id;
      received.push({ id: m.id, actor: m.actor, message: m.message, atMs: a.now() - a.t0 });
      prompts.push(quoteUntrusted(`steering by ${m.actor}`, m.message));
      a.log.info(`Steering message ${m.id} from ${m.actor}: the agent gets it at the start of its next stage.`);
    }
  };
  const timer = setInterval(() => {
    polling = polling.then(poll);
  }, a.config.heartbeat_interval_seconds * 1000);
  return {
    received,
    async stop() {
      clearInterval(timer);
      await polling;
    },
  };
}

/** The walkthrough's `## Steering` section: every message the job received, and when. */
export function steeringSection(received: readonly Received[]): string {
  if (received.length === 0) return "";
  return [
    "## Steering",
    "",
    ...received.map(
      (r) =>
        `- ${asData(r.actor)} at ${Math.round(r.atMs / 1000)} s: ${asData(r.message.replace(/\s+/g, " ").slice(0, 300))} — given to every stage that started after it`,
    ),
  ].join("\n");
}
