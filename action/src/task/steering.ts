/**
 * `/forge steer <message>` reaching a running agent (docs/runner.md#steering). The App checks the
 * person's write access, keeps the message in the journal and posts it as a comment of its own on
 * the task's PR; the job reads its PR's comments every heartbeat and adds the App's steering notes it
 * has not seen to the agent's context, which every stage that starts afterwards gets in its prompt.
 * Only comments by the account that dispatched this run (GITHUB_ACTOR: the App's bot) count — GitHub
 * names a comment's author and nobody else can post as the App — never the journal, which the job
 * cannot verify and anyone with a job's token may rewrite. None of Forge's adapters takes a message
 * in the middle of a session (Claude Code and Codex run one prompt per session, `-p`/`exec`; a
 * command reads its prompt once), so a message reaches the agent at the start of its next stage.
 * Messages are people's text: bounded by the App, sanitized and quoted here.
 */
import { quoteUntrusted } from "../../../src/agent/secrets.js";
import { asData } from "../../../src/core/render/as-data.js";
import { readSteeringComment } from "../../../src/core/render/steering.js";
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

/** How a steering message is labelled in the agent's prompt: who sent it, and that the App checked their access. */
export const steeringLabel = (actor: string) => `steering from ${actor} (write access verified by the App)`;

/**
 * The account whose comments may carry steering: the one that dispatched this run, when it is an
 * App's bot. A run a person (or a workflow's token) started has no App behind it, and gets none.
 */
export function steeringAuthor(dispatchedBy: string | undefined): string | undefined {
  return dispatchedBy && dispatchedBy.endsWith("[bot]") && dispatchedBy !== "github-actions[bot]" ? dispatchedBy : undefined;
}

/** Reads the PR's comments every heartbeat while the agent runs; the App's notes numbered above those in the journal at the job's start are new. */
export function startSteering(a: TaskAttempt): Steering {
  const { runId, taskId, attempt } = a.ids;
  // The journal read at the start only says which messages came before this job (a forged one can
  // only hide messages); the messages themselves come from the App's comments.
  let seen = a.task.attempt?.steering?.at(-1)?.id ?? 0;
  const since = new Date(a.t0 - 60_000).toISOString();
  const author = steeringAuthor(a.input.dispatchedBy);
  if (!author) a.log.info("Steering is not read: this run was not dispatched by an App (GITHUB_ACTOR).");
  const received: Received[] = [];
  const prompts: string[] = [];
  a.built.taskContext.steering = prompts;
  let polling: Promise<void> = Promise.resolve();
  const poll = async () => {
    const pr = (await a.branchState.prOpening.catch(() => undefined))?.number ?? a.task.attempt?.prNumber;
    if (!author || pr === undefined || !a.github.issueComments) return;
    const comments = await a.github.issueComments(pr, since).catch(() => []);
    for (const c of comments) {
      if (c.author !== author) continue;
      const m = readSteeringComment(c.body);
      if (!m || m.runId !== runId || m.taskId !== taskId || m.attempt !== attempt || m.id <= seen) continue;
      seen = m.id;
      received.push({ id: m.id, actor: m.actor, message: m.message, atMs: a.now() - a.t0 });
      prompts.push(quoteUntrusted(steeringLabel(m.actor), m.message));
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
