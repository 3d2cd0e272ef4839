/**
 * Shared fixtures of the handler tests: a real Probot instance with the Forge App loaded, GitHub's
 * REST API mocked with nock (github-mock.ts), and webhook payloads and replies filled in from the
 * same trimmed OpenAPI descriptions the local GitHub validates against (openapi-bodies.ts); the
 * names of the repository, the App and the run are github-facts.ts's. Every mocked reply is validated for its
 * operation and status when it is declared, every request the App sends is validated when it
 * arrives, and every payload is validated before Probot receives it: a violation fails the test.
 */
import { Probot, ProbotOctokit } from "probot";
import { createForgeApp, type ForgeApp, type ForgeAppOptions } from "../../../src/app/app.js";
import { newStoredRun, type RunFacts, type StoredRun } from "../../../src/app/run-store.js";
import { decide, startRun, type Decision } from "../../../src/core/decide/index.js";
import type { LeafInput } from "../../../src/core/inputs.js";
import type { Journal } from "../../../src/core/journal.js";
import type { PullRequestInfo } from "../../../src/github/port.js";
import { forgeConfigSchema, type ForgeConfig } from "../../../src/core/schemas/config.js";
import { appKeys } from "../../local-github/support/helpers.js";
import { TestClock } from "../../helpers/clock.js";
import {
  APP_ID,
  INSTALLATION_ID,
  INTEGRATION,
  JOURNAL_KEY,
  NOW,
  OWNER,
  PLAN_ID,
  PLAN_SHA,
  RECORD,
  REPO,
  RUN_ID,
  TEST_REPLICA,
  WORK,
} from "./github-facts.js";
import type { Hit } from "./github-mock.js";
import { webhookPayload } from "./openapi-bodies.js";

export * from "./github-facts.js";
export * from "./github-mock.js";
export { replyBody, webhookPayload } from "./openapi-bodies.js";

/** Task `taskId`'s attempt-1 PR as GitHub answers it: open, its record commit the head, into the integration branch. */
export function openTaskPull(number: number, taskId = "a", overrides: Partial<PullRequestInfo> = {}): PullRequestInfo {
  return {
    number,
    state: "open",
    merged: false,
    headRef: `forge/${RUN_ID}/${taskId}/1`,
    headSha: RECORD,
    baseRef: INTEGRATION,
    draft: false,
    fromFork: false,
    ...overrides,
  };
}

/** Task `taskId`'s first attempt finished with exit 0: its work at WORK, its record commit at RECORD. */
export function finishedReady(taskId = "a"): LeafInput {
  return {
    kind: "agent.finished",
    taskId,
    attempt: 1,
    exitCode: 0,
    pushedSha: WORK,
    recordSha: RECORD,
    walkthrough: { status: "completed", confidence: 0.9, headSha: WORK, filesChanged: [`src/${taskId}.ts`], risks: [], followups: [] },
  };
}

type Obj = Record<string, unknown>;

/** The JSON a journal write sent (its base64 content decoded). */
export function decodedJournal(hit: Hit): StoredRun {
  const body = hit.body as { content: string };
  const { seal: _seal, ...state } = JSON.parse(Buffer.from(body.content, "base64").toString("utf8")) as StoredRun & { seal?: string };
  return state;
}

/** A short view of a journal for snapshots: statuses, the outbox and the events of the write. */
export function journalView(state: StoredRun, previous?: StoredRun) {
  const before = previous?.events.tail.length ?? 0;
  return {
    status: state.journal.status,
    seq: state.journal.seq,
    tasks: state.journal.tasks.map((t) => `${t.id} ${t.status} #${t.attempts}${t.attempt?.hold ? ` (${t.attempt?.hold})` : ""}`),
    outbox: state.journal.outbox.map((e) => e.key),
    events: state.events.tail.slice(before).map((e) => `${e.type}${e.taskId ? ` ${e.taskId}` : ""}`),
  };
}

// ---------------------------------------------------------------- runs

export type PlanSpec = Record<string, string[]>;

export function testConfig(overrides: Obj = {}): ForgeConfig {
  return forgeConfigSchema.parse({ retry_backoff: { base_seconds: 0, max_seconds: 0 }, ...overrides });
}

/**
 * A stored run of a small plan (`{ a: [], b: ["a"] }`), started a minute before NOW with every
 * start-up effect carried out, then moved on by `steps` (each a batch of inputs, decided at NOW-30 s,
 * then the effects they produced acknowledged). The tracker issue is #3.
 */
export function storedRun(
  spec: PlanSpec,
  opts: {
    config?: ForgeConfig;
    steps?: LeafInput[][];
    facts?: Partial<RunFacts>;
    pendingOutbox?: boolean;
    /** The issue number each Change Request's opening is acknowledged with. */
    crIssues?: Record<string, number>;
  } = {},
): StoredRun {
  const config = opts.config ?? testConfig();
  const nodes = Object.entries(spec).map(([id, dependencies]) => ({
    id,
    kind: "task" as const,
    agentType: "2" as const,
    title: `Task ${id}`,
    dependencies,
  }));
  const started = startRun(
    {
      runId: RUN_ID,
      planId: PLAN_ID,
      planCommit: PLAN_SHA,
      dagHash: "d".repeat(64),
      nodes,
      integrationBranch: INTEGRATION,
      baseBranch: "main",
    },
    NOW - 60_000,
    config,
  );
  let journal = started.journal;
  const events = [...started.events];
  const settle = (at: number) => {
    for (let round = 0; round < 5 && journal.outbox.length; round++) {
      const acks: LeafInput[] = journal.outbox.map((e) => ({
        kind: "effect.done",
        key: e.key,
        result:
          e.kind === "DispatchAgent"
            ? { workflowRunId: 5000 + e.attempt }
            : e.kind === "OpenChangeRequest" && opts.crIssues?.[e.crId] !== undefined
              ? { issueNumber: opts.crIssues[e.crId] }
              : {},
      }));
      const d: Decision = decide(journal, { kind: "batch", inputs: acks }, at, config);
      journal = d.journal;
      events.push(...d.events);
    }
  };
  settle(NOW - 60_000);
  const steps = opts.steps ?? [];
  steps.forEach((inputs, k) => {
    const d = decide(journal, { kind: "batch", inputs }, NOW - 30_000 + k, config);
    journal = d.journal;
    events.push(...d.events);
    if (!opts.pendingOutbox || k < steps.length - 1) settle(NOW - 30_000 + k);
  });
  return newStoredRun(
    journal,
    config,
    { trackerIssue: 3, trackerUpdatedAt: new Date(NOW - 60_000).toISOString(), planSha: PLAN_SHA, ...opts.facts },
    events,
  );
}

export const taskOf = (j: Journal, id: string) => j.tasks.find((t) => t.id === id)!;

// ---------------------------------------------------------------- payloads

export function repository(): Obj {
  return {
    id: 77,
    node_id: "R_77",
    name: REPO,
    full_name: `${OWNER}/${REPO}`,
    private: false,
    default_branch: "main",
    owner: user(OWNER, "Organization"),
  };
}

export function user(login: string, type: "User" | "Bot" | "Organization" = "User"): Obj {
  return { login, id: login.length * 1000 + 7, node_id: `U_${login}`, type, html_url: `https://github.com/${login.replace("[bot]", "")}` };
}

export const installation = { id: INSTALLATION_ID, node_id: "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uNDI=" };

/** A webhook as Probot receives it, its payload validated for its event and action. */
export interface Delivery {
  id: string;
  name: string;
  payload: Obj;
}

export function delivery(name: string, partial: Obj, id = `delivery-${name}-${Math.random().toString(16).slice(2)}`): Delivery {
  return { id, name, payload: webhookPayload(name, { repository: repository(), installation, ...partial }) };
}

// ---------------------------------------------------------------- the App

export interface TestApp {
  probot: Probot;
  forge: ForgeApp;
  /** The App's clock: it stands at NOW until a test moves it. */
  clock: TestClock;
  receive(d: Delivery): Promise<void>;
}

/** A real Probot with the Forge App loaded; handlers finish before `receive` resolves. */
export async function startApp(options: ForgeAppOptions = {}): Promise<TestApp> {
  const probot = new Probot({
    appId: APP_ID,
    privateKey: appKeys().privateKeyPem,
    logLevel: "fatal",
    // Tests disable retries and throttling (the function form replaces Probot's defaults).
    Octokit: ProbotOctokit.defaults((instanceOptions: object) => ({
      ...instanceOptions,
      retry: { enabled: false },
      throttle: { enabled: false },
    })),
  });
  const clock = new TestClock(NOW);
  const forge = createForgeApp({ background: false, clock, replicaId: TEST_REPLICA, journalKey: JOURNAL_KEY, ...options });
  await probot.load(forge);
  return {
    probot,
    forge,
    clock,
    receive: (d) => probot.receive({ id: d.id, name: d.name, payload: d.payload } as never),
  };
}

export type { Journal };
