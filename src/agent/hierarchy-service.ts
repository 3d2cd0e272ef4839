/**
 * Who an agent is, kept where the agent cannot rewrite it.
 *
 * The hierarchy check (2 → 1; 3 → 1, 2; refinery → 1, 2, 3) and the depth budget must not rest on
 * environment variables the agent controls (`FORGE_AGENT_TYPE=refinery forge spawn …`). So the
 * process that starts a top-level session — the runner's `runStages`, or a person's `forge spawn` —
 * keeps the facts of every session below it in memory: agent type, depth, depth budget, trace id.
 * It serves them on a Unix socket in a private folder outside the checkout (`FORGE_HIERARCHY_SOCKET`).
 * Each session gets an unguessable ticket (`FORGE_HIERARCHY_TICKET`, 256 random bits) naming its
 * record; a nested `forge spawn` presents its ticket and the service decides, from its own record,
 * whether the spawn is allowed, at which depth and budget, and issues the child's ticket. Rewriting
 * `FORGE_AGENT_TYPE`, `FORGE_SPAWN_DEPTH` or `FORGE_MAX_DEPTH` changes nothing; a made-up or edited
 * ticket is unknown to the service.
 *
 * Limits (same user, no sandbox): an agent can read the environment of its ancestors in /proc and
 * present an ancestor's ticket, and one that scrubs every Forge variable looks like a person at a
 * terminal. This stops an agent from talking itself into another role; it is not a sandbox.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { mayCallerSpawn, SPAWNABLE_BY } from "./hierarchy.js";
import type { SubAgentCap } from "./sub-agents.js";
import { isAgentKind, type AgentKind } from "./types.js";

export const HIERARCHY_ENV = {
  socket: "FORGE_HIERARCHY_SOCKET",
  ticket: "FORGE_HIERARCHY_TICKET",
} as const;

/** What the service knows of one session. */
export interface HierarchyFacts {
  /** The session's agent type (absent: a session of no particular type, which may spawn anything). */
  agentType?: AgentKind;
  depth: number;
  maxDepth: number;
  traceId: string;
}

export interface SpawnRequest {
  op: "spawn";
  ticket: string;
  /** The type the caller wants to spawn. */
  agentType?: string;
  /** The budget the caller asks for (never more than its own). */
  maxDepth?: number;
  /** The caller's FORGE_AGENT_TYPE, only to say in a refusal that it was not believed. */
  claimedType?: string;
}

export type SpawnAnswer =
  | ({ ok: true; ticket: string; caller: HierarchyFacts & { allowed: AgentKind[] } } & HierarchyFacts)
  | {
      ok: false;
      code: "spawn_not_allowed" | "depth_exceeded" | "sub_agents_exceeded" | "unknown_ticket" | "bad_request";
      message: string;
      caller?: HierarchyFacts;
      depth?: number;
      maxDepth?: number;
    };

const newTicket = () => randomBytes(32).toString("hex");

export class HierarchyService {
  readonly socketPath: string;
  readonly #dir: string;
  readonly #server: net.Server;
  readonly #records = new Map<string, HierarchyFacts>();

  private constructor(
    dir: string,
    server: net.Server,
    private readonly cap?: SubAgentCap,
  ) {
    this.#dir = dir;
    this.socketPath = path.join(dir, "s");
    this.#server = server;
  }

  /**
   * Listens on a socket in a new private folder (mode 0700) under the system's temp folder. `cap`:
   * the job's sub-agent cap (sub-agents.ts), a place taken for every spawn admitted.
   */
  static async start(cap?: SubAgentCap): Promise<HierarchyService> {
    // Short: a Unix socket path is limited to ~104 bytes.
    const dir = await mkdtemp(path.join(tmpdir(), "forge-h-"));
    const server = net.createServer();
    const service = new HierarchyService(dir, server, cap);
    server.on("connection", (socket) => service.#serve(socket));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(service.socketPath, () => {
        server.off("error", reject);
        resolve();
      });
    });
    // A long-lived agent must not keep the runner's event loop alive through this server.
    server.unref();
    return service;
  }

  /** Registers a session and returns its ticket. */
  issue(facts: HierarchyFacts): string {
    const ticket = newTicket();
    this.#records.set(ticket, { ...facts });
    return ticket;
  }

  decide(req: SpawnRequest): SpawnAnswer {
    const caller = this.#records.get(req.ticket);
    if (!caller)
      return {
        ok: false,
        code: "unknown_ticket",
        message:
          "this agent's hierarchy ticket (FORGE_HIERARCHY_TICKET) is not one Forge issued; sub-agents can only be spawned from the agent Forge started, with its variables intact",
      };
    const claimed =
      req.claimedType && req.claimedType !== caller.agentType
        ? ` (FORGE_AGENT_TYPE says ${req.claimedType}, but Forge started this agent as type ${caller.agentType ?? "none"}, and what Forge recorded decides)`
        : "";
    if (caller.agentType) {
      const child = req.agentType;
      if (!child)
        return {
          ok: false,
          code: "spawn_not_allowed",
          message: `an agent of type ${caller.agentType} must name the type it spawns (--agent-type)${claimed}`,
          caller,
        };
      if (!isAgentKind(child) || !mayCallerSpawn(caller.agentType, child)) {
        const allowed = SPAWNABLE_BY[caller.agentType];
        return {
          ok: false,
          code: "spawn_not_allowed",
          message: `an agent of type ${caller.agentType} may not spawn type ${child}${claimed}; it may spawn ${allowed.length ? allowed.join(", ") : "no sub-agents"}`,
          caller,
        };
      }
    } else if (req.agentType !== undefined && !isAgentKind(req.agentType)) {
      return { ok: false, code: "bad_request", message: `unknown agent type ${req.agentType}` };
    }
    const depth = caller.depth + 1;
    const maxDepth =
      req.maxDepth !== undefined && Number.isInteger(req.maxDepth) && req.maxDepth >= 0
        ? Math.min(req.maxDepth, caller.maxDepth)
        : caller.maxDepth;
    if (depth > maxDepth)
      return {
        ok: false,
        code: "depth_exceeded",
        message: `spawn depth ${depth} exceeds the budget of ${maxDepth}`,
        caller,
        depth,
        maxDepth,
      };
    // Last: a spawn the hierarchy or the depth refuses takes no place.
    const capped = this.cap?.take(depth, req.agentType);
    if (capped) return { ok: false, code: "sub_agents_exceeded", message: capped, caller, depth, maxDepth };
    const facts: HierarchyFacts = {
      ...(req.agentType ? { agentType: req.agentType as AgentKind } : {}),
      depth,
      maxDepth,
      traceId: caller.traceId,
    };
    return {
      ok: true,
      ticket: this.issue(facts),
      ...facts,
      caller: { ...caller, allowed: caller.agentType ? [...SPAWNABLE_BY[caller.agentType]] : [] },
    };
  }

  #serve(socket: net.Socket): void {
    let buf = "";
    socket.setEncoding("utf8");
    socket.on("error", () => undefined);
    socket.on("data", (chunk: string) => {
      buf += chunk;
      if (buf.length > 64 * 1024) return void socket.destroy();
      const nl = buf.indexOf("\n");
      if (nl < 0) return;
      let answer: SpawnAnswer;
      try {
        const req = JSON.parse(buf.slice(0, nl)) as SpawnRequest;
        answer =
          req && req.op === "spawn" && typeof req.ticket === "string"
            ? this.decide(req)
            : { ok: false, code: "bad_request", message: "unknown request" };
      } catch {
        answer = { ok: false, code: "bad_request", message: "the request is not JSON" };
      }
      socket.end(`${JSON.stringify(answer)}\n`);
    });
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
    await rm(this.#dir, { recursive: true, force: true });
  }
}

/** Asks the service at `socketPath`; rejects when it cannot be reached. */
export function askHierarchy(socketPath: string, req: SpawnRequest, timeoutMs = 10_000): Promise<SpawnAnswer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    let buf = "";
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer from ${socketPath} within ${timeoutMs / 1000} s`));
    }, timeoutMs);
    socket.setEncoding("utf8");
    socket.on("connect", () => socket.write(`${JSON.stringify(req)}\n`));
    socket.on("data", (chunk: string) => (buf += chunk));
    socket.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.on("end", () => {
      clearTimeout(timer);
      try {
        resolve(JSON.parse(buf.trim()) as SpawnAnswer);
      } catch {
        reject(new Error("the hierarchy service answered something that is not JSON"));
      }
    });
  });
}
