// Every agent CLI with its real binary against the scripted server of its API (rows.ts), its session
// as Forge runs it: a type-2 agent runs `forge spawn` from its shell and a type-1 sub-agent of the
// same CLI works one trace deeper (a type-2 one is refused); a model that stops streaming is caught
// by the idle limit, the file already written kept; the wall clock stops a session whatever it does.
import { existsSync, readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { spawnAgent } from "../../../src/agent/spawn/index.js";
import type { ProgressEvent } from "../../../src/agent/types.js";
import type { Req, Turn } from "./apis.js";
import {
  baseSpawn,
  forgeCliFromSource,
  longestSilence,
  runnerEnv,
  skipReason,
  skipTitle,
  tempDir,
  timed,
  transcriptOf,
  useWorld,
} from "./harness.js";
import { ROWS } from "./rows.js";

const world = useWorld();
let stallServer: http.Server | undefined;
afterEach(async () => {
  if (!stallServer) return;
  stallServer.closeAllConnections();
  await new Promise((r) => stallServer!.close(r));
  stallServer = undefined;
});

describe.each(ROWS)("$adapter with the real CLI: sub-agents, stalls, time limits", (row) => {
  it.skipIf(skipReason(row, "spawn") !== undefined)(
    skipTitle(row, "spawn", "lets a type-2 agent run `forge spawn` from its shell: a type-1 sub-agent works one trace deeper"),
    async () => {
      const childFile = path.join(world.repo, "child.txt");
      const shell = row.spawn.shell ?? row.tools.shell;
      const child = row.spawn.childArgs ? ` ${row.spawn.childArgs}` : "";
      const script = (req: Req): Turn => {
        if (req.userText.includes("CHILD TASK"))
          return req.turn === 0
            ? { toolCalls: [row.tools.write(childFile, "written by the sub-agent\n")] }
            : { text: "Child done.\nFORGE_EXIT=0" };
        if (req.turn === 0)
          return {
            toolCalls: [
              shell(
                `forge spawn --agent-type 1 --output-format json --name child${child} --prompt "CHILD TASK: write child.txt" > "$FORGE_SESSION_DIR/child.json"; ` +
                  'forge spawn --agent-type 2 --output-format json --prompt "CHILD TASK: not allowed" > "$FORGE_SESSION_DIR/refused.json"; echo done',
              ),
            ],
          };
        return { text: "Parent done.\nFORGE_EXIT=0" };
      };
      const server = (world.server = await row.api.serve([script, script, script]));
      const sessionDir = path.join(tempDir("forge-real-session-"), "parent");
      const t0 = performance.now();
      const r = await spawnAgent({
        ...baseSpawn(row, world, runnerEnv(row, server.url)),
        agentType: "2",
        prompt: "PARENT TASK: delegate the child file",
        sessionDir,
        maxDepth: 2,
        ...(row.spawn.maxTurns ? { maxTurns: row.spawn.maxTurns } : {}),
        forgeCli: forgeCliFromSource(),
      });
      timed(row, "spawn", performance.now() - t0);
      expect(r.exitCode, transcriptOf(r).slice(-3000)).toBe(0);
      const result = JSON.parse(readFileSync(path.join(sessionDir, "child.json"), "utf8")) as Record<string, unknown>;
      const childTranscript = () => readFileSync(path.join(String(result.session_dir), "transcript.log"), "utf8").slice(-3000);
      expect(existsSync(childFile), `${JSON.stringify(result)}\n${childTranscript()}`).toBe(true);
      expect(readFileSync(childFile, "utf8")).toBe("written by the sub-agent\n");
      expect(result).toMatchObject({
        status: "success",
        exit_code: 0,
        depth: 2,
        max_depth: 2,
        trace_id: r.traceId,
        agent_type: "1",
        adapter: row.adapter,
      });
      expect(String(result.session_dir).startsWith(path.join(sessionDir, "sub"))).toBe(true);
      row.spawn.check?.(result);
      // A type 2 agent may spawn type 1 only.
      expect(JSON.parse(readFileSync(path.join(sessionDir, "refused.json"), "utf8"))).toMatchObject({
        exit_code: 2,
        error: { code: "spawn_not_allowed" },
      });
    },
    240_000,
  );

  it.skipIf(skipReason(row, "idle") !== undefined)(
    skipTitle(row, "idle", "kills a session whose model stops streaming (idle), keeping the file it already wrote"),
    async () => {
      const written = path.join(world.repo, "partial.txt");
      const server = (world.server = await row.api.serve([
        { text: "Writing.", toolCalls: [row.tools.write(written, "partial work\n")] },
        { text: "never finished", stall: true },
      ]));
      const events: ProgressEvent[] = [];
      const { idleMs, timeoutMs } = row.idle;
      const r = await spawnAgent({
        ...baseSpawn(row, world, runnerEnv(row, server.url)),
        agentType: "1",
        prompt: "Write partial.txt",
        sessionDir: path.join(tempDir(), "s"),
        idleTimeoutMs: idleMs,
        timeoutMs,
        forgeCli: false,
        onProgress: (e) => events.push({ ...e, at: new Date().toISOString() }),
      });
      timed(row, "idle", r.durationMs);
      expect(r, transcriptOf(r).slice(-3000)).toMatchObject({
        exitCode: 21,
        status: "timeout",
        timedOut: "idle",
        error: { code: "idle_timeout" },
      });
      expect(readFileSync(written, "utf8")).toBe("partial work\n");
      expect(server.turns().map((t) => t.turn)).toEqual([0, 1]);
      // Silent for the idle limit before the kill (a CLI may print as it is stopped).
      expect(longestSilence(events, r.finishedAt)).toBeGreaterThanOrEqual(idleMs - 100);
      if (row.idle.quietToTheEnd) {
        const detected = Date.parse(r.finishedAt) - Date.parse(events.filter((e) => e.kind !== "exit").at(-1)!.at);
        expect(detected).toBeGreaterThanOrEqual(idleMs - 100);
        if (row.idle.detectWithinMs !== undefined) expect(detected).toBeLessThan(idleMs + row.idle.detectWithinMs);
        console.log(`${row.adapter}: stall detected ${detected} ms after the agent's last output (idle limit ${idleMs} ms)`);
      }
    },
    row.idle.testMs,
  );

  it.skipIf(skipReason(row, "wall") !== undefined)(
    skipTitle(row, "wall", "stops a session at the wall-clock limit"),
    async () => {
      // A model that opens its answer and sends nothing more: only the wall clock ends the session.
      stallServer = http.createServer((req, res) => {
        req.resume();
        req.on("end", () => {
          if (req.method === "HEAD") return void res.writeHead(200).end();
          res.writeHead(200, { "content-type": "text/event-stream" });
          res.write(": keep-alive\n\n");
        });
      });
      await new Promise<void>((r) => stallServer!.listen(0, "127.0.0.1", r));
      const url = `http://127.0.0.1:${(stallServer.address() as AddressInfo).port}`;
      const base = row.api.name === "chat" || row.api.name === "responses" ? `${url}/v1` : url;
      const r = await spawnAgent({
        ...baseSpawn(row, world, runnerEnv(row, base)),
        prompt: "anything",
        sessionDir: path.join(tempDir(), "s"),
        timeoutMs: 2_500,
        idleTimeoutMs: 60_000,
        forgeCli: false,
      });
      timed(row, "wall", r.durationMs);
      expect(r).toMatchObject({ exitCode: 21, timedOut: "wall", error: { code: "timeout" } });
      expect(r.durationMs).toBeGreaterThanOrEqual(2_500);
      expect(r.durationMs).toBeLessThan(8_000);
    },
    30_000,
  );
});
