/**
 * The Forge Apps of a chaos scenario: one, or (g) two replicas behind the one webhook URL, each a
 * real Probot server with the production throttling and retries. A replica can be killed: its calls
 * stop at once, it learns nothing of the ones in flight, and it comes back after a while — under the
 * same name in (e), as a StatefulSet's pod does, or under a new one in (g), as a serverless instance
 * does, so the effects it owned are taken over once their leases run out.
 */
import type { Decision } from "../../src/core/decide/index.js";
import { startForgeServer, type ForgeServer } from "../../src/app/server.js";
import { GITHUB_PACE } from "../../src/github/pacing.js";
import type { Sim } from "../../src/local-github/server.js";
import type { AppKeys } from "../local-github/support/helpers.js";
import type { ScenarioName, ScenarioOptions, ScenarioResult } from "./harness.js";
import type { WebhookNetwork } from "./network.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface ReplicaSetOptions {
  scenario: ScenarioName;
  sim: Sim;
  appId: number;
  keys: AppKeys;
  webhookSecret: string;
  network: WebhookNetwork;
  /** The repository whose runtime each replica's engine counts are read from (`owner/name`). */
  repo: string;
  options: Pick<ScenarioOptions, "refuse" | "loseAnswer" | "reconcileEveryMs" | "clock">;
  log: (line: string) => void;
  onDecision: (runId: string, d: Decision) => void;
}

export interface ReplicaSet {
  /** Per replica (by name): deliveries, decisions, compare-and-swap writes lost, effects taken over. */
  readonly perReplica: ScenarioResult["replicas"];
  readonly names: readonly string[];
  /** Calls the Apps made, and answers lost on the way back (ScenarioOptions.loseAnswer). */
  readonly calls: { total: number; answersLost: number };
  readonly kills: number;
  /** Kills replica `index`, and starts it again `downMs` later. */
  kill(index: number, downMs: number): Promise<void>;
  idle(): Promise<void>;
  /**
   * Whether a replica is at work (test/helpers/clock.ts skips ahead only when none is). With
   * `atGitHubWaits` (the local GitHub's latency waits on the clock), a replica with a request at
   * GitHub is waiting, not working: the harness makes sure each such request is asleep there.
   */
  busy(atGitHubWaits?: boolean): boolean;
  /** Counts what each replica did, then closes them. */
  close(): Promise<void>;
}

interface Generation {
  server: ForgeServer;
  killed: { value: boolean };
  /** The process's requests at GitHub now (sent, their answer not back). */
  atGitHub: { n: number };
  replica: string;
}

const passthrough = { key: () => ({ schedule: (_o: unknown, fn: (...a: unknown[]) => unknown, ...args: unknown[]) => fn(...args) }) };

/** A fetch for one App process: dead once `killed`, and with the answers the scenario refuses or loses. */
function processFetch(killed: { value: boolean }, o: ReplicaSetOptions["options"], calls: ReplicaSet["calls"], atGitHub: { n: number }) {
  return async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    if (killed.value) throw new Error("the App process is dead");
    const method = (init?.method ?? "GET").toUpperCase();
    const url = String(input instanceof Request ? input.url : input);
    const refused = o.refuse?.(method, url);
    if (refused)
      return new Response(JSON.stringify({ message: refused.message, status: String(refused.status) }), {
        status: refused.status,
        headers: { "content-type": "application/json" },
      });
    atGitHub.n++;
    let res: Response;
    try {
      res = await fetch(input, init);
    } finally {
      atGitHub.n--;
    }
    if (killed.value) throw new Error("the App process is dead");
    if (o.loseAnswer?.(method, url)) {
      calls.answersLost++;
      await res.arrayBuffer();
      return new Response(JSON.stringify({ message: "Server Error" }), { status: 502, headers: { "content-type": "application/json" } });
    }
    return res;
  };
}

export async function startReplicas(o: ReplicaSetOptions): Promise<ReplicaSet> {
  const names = o.scenario === "replicas" ? ["replica-1", "replica-2"] : ["replica-1"];
  const renamed = o.scenario === "replicas";
  const hostile = o.scenario === "hostile";
  const ports = names.map(() => 0);
  const perReplica: ScenarioResult["replicas"] = Object.fromEntries(
    names.map((n) => [n, { deliveries: 0, decisions: 0, casLost: 0, takenOver: 0 }]),
  );
  const calls = { total: 0, answersLost: 0 };
  let kills = 0;
  // The network's load balancer sends each delivery to the next replica that is up.
  const targets: (string | undefined)[] = names.map(() => undefined);
  o.network.targets = targets;

  async function startApp(index: number): Promise<Generation> {
    const killed = { value: false };
    const atGitHub = { n: 0 };
    const replica = names[index]!;
    const server = await startForgeServer({
      appId: o.appId,
      privateKey: o.keys.privateKeyPem,
      webhookSecret: o.webhookSecret,
      baseUrl: o.sim.apiUrl,
      port: ports[index]!,
      replicaId: replica,
      // The local GitHub imposes no secondary rate limits but in (i), and a replica "killed" here is an
      // object in this process: requests its pace still held would go out after its death, as a real
      // process's never would. Restarts and replicas are what is tested, not the pace
      // (test/github/pacing.test.ts). (i) paces itself as in production, under a tight limit.
      pace: hostile ? GITHUB_PACE : false,
      // (i) reconciles as production does, every minute: the webhooks' tails are not hidden by the reconciler.
      reconcileEveryMs: o.options.reconcileEveryMs ?? (hostile ? 60_000 : 2_000),
      ...(o.options.clock ? { clock: o.options.clock } : {}),
      onDecision: (_repo, runId, d) => {
        o.onDecision(runId, d);
        perReplica[replica]!.decisions++;
      },
      onRequest: () => {
        calls.total++;
      },
      // Production's throttling (secondary limits waited out per `retry-after`) without its 1 s
      // spacing of writes, which would make a 50-task run take many minutes; Octokit's retry of 5xx.
      // (i): production's throttling too — a rate limit is the pace's to wait out, on the App's clock.
      octokitDefaults: {
        request: { fetch: processFetch(killed, o.options, calls, atGitHub) },
        retry: { retries: 3, retryAfterBaseValue: 20 },
        ...(hostile
          ? {}
          : {
              throttle: {
                enabled: true,
                ...{ global: passthrough, write: passthrough, notifications: passthrough, search: passthrough, auth: passthrough },
                // Probot's own handler only logs a secondary limit; a server that means to finish its work waits it out.
                onSecondaryRateLimit: (_after: number, r: { request: { retryCount: number } }) => r.request.retryCount < 3,
              },
            }),
      },
    });
    ports[index] = Number(new URL(server.url).port);
    targets[index] = server.webhookUrl;
    return { server, killed, atGitHub, replica };
  }

  const gens: Generation[] = [];
  for (let i = 0; i < names.length; i++) gens.push(await startApp(i));
  /** What a replica's engine counted, kept before the process goes away. */
  const tally = (g: Generation) => {
    const rt = g.server.forge.runtimes.get(o.repo);
    if (!rt) return;
    perReplica[g.replica]!.casLost += rt.engine.stats.casLost;
    perReplica[g.replica]!.takenOver += rt.engine.stats.takenOver;
  };

  return {
    perReplica,
    names,
    calls,
    get kills() {
      return kills;
    },
    async kill(index, downMs) {
      const dead = gens[index]!;
      targets[index] = undefined;
      dead.killed.value = true;
      kills++;
      o.log(`  ${o.scenario}: ${dead.replica} killed (down ${downMs} ms)`);
      tally(dead);
      await dead.server.close();
      await sleep(downMs);
      if (renamed) {
        names[index] = `${dead.replica.replace(/\.\d+$/, "")}.${kills}`;
        perReplica[names[index]!] = { deliveries: 0, decisions: 0, casLost: 0, takenOver: 0 };
        perReplica[dead.replica]!.deliveries = o.network.perTarget[index] ?? 0;
        o.network.perTarget[index] = 0;
      }
      // The new process finds the installation, its repositories and the run by itself (GET
      // /app/installations, GET /installation/repositories, the state branches): nobody names them.
      gens[index] = await startApp(index);
    },
    busy: (atGitHubWaits = false) => gens.some((g) => g.server.forge.busy() && !(atGitHubWaits && g.atGitHub.n > 0)),
    async idle() {
      for (const g of gens) await g.server.forge.idle();
    },
    async close() {
      names.forEach((n, i) => (perReplica[n]!.deliveries = o.network.perTarget[i] ?? 0));
      for (const g of gens) {
        tally(g);
        await g.server.close();
      }
    },
  };
}
