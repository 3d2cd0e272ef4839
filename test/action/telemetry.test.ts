// OpenTelemetry export against an OTLP/HTTP receiver started by the test: the runner's attempt span
// parented on the App's dispatch span (the dispatch context's traceparent), a span per stage with its
// tool calls, the agent's TRACEPARENT, the attempt's metrics; and the App's run, task and dispatch
// spans, whose derived ids make one tree with the runner's.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { appTelemetry, flushAppTelemetry, traceDispatch, traceRun } from "../../src/app/telemetry.js";
import { forgeConfigSchema } from "../../src/core/schemas/config.js";
import { dispatchSpanId, dispatchTraceparent, runSpanId, runTraceId, taskSpanId } from "../../src/core/trace.js";
import { newRun, nodes, runToEnd } from "../helpers/world.js";
import { startOtlpReceiver, type OtlpReceiver } from "../helpers/otlp-receiver.js";
import { agentWalkthrough, makeWorld, RUN, testConfig, type World } from "./world.js";
import { runJob, stagesAgent } from "./job.js";

let world: World | undefined;
let receiver: OtlpReceiver;
beforeEach(async () => {
  receiver = await startOtlpReceiver();
});
afterEach(async () => {
  world?.cleanup();
  await receiver.close();
});

const TOOL = JSON.stringify({
  type: "assistant",
  message: { content: [{ type: "tool_use", id: "tu1", name: "Bash", input: { command: "ls" } }] },
});

describe("telemetry from the runner", () => {
  it("exports the attempt under the App's dispatch span, a span per stage with its tool calls, and the attempt's metrics", async () => {
    const w = (world = makeWorld());
    const seen = path.join(w.dir, "traceparent.txt");
    const script = path.join(w.dir, "agent.sh");
    writeFileSync(
      script,
      [
        "#!/bin/sh",
        "mkdir -p src",
        `echo "$FORGE_SPAWN_NAME" >> src/a.txt`,
        `echo "$TRACEPARENT" >> "${seen}"`,
        `printf '%s\\n' '${TOOL}'`,
        `cat > "$FORGE_WALKTHROUGH_PATH" <<'WT'\n${agentWalkthrough({ files_changed: [] })}WT`,
      ].join("\n"),
      { mode: 0o755 },
    );
    const report = await runJob(w, stagesAgent(script), {
      config: testConfig({ heartbeat_interval_seconds: 1, stale_threshold_seconds: 10, telemetry: { otlp_endpoint: receiver.url } }),
      input: { context: { traceparent: dispatchTraceparent(RUN, "t1", 1) } },
    });
    if (report.kind !== "attempt") throw new Error(report.kind);
    expect(report.exitCode, report.result.error).toBe(0);
    expect(report.warnings).toEqual([]);

    const traceId = runTraceId(RUN);
    const attempt = receiver.spans.find((s) => s.name === "forge.attempt");
    expect(attempt).toMatchObject({
      traceId,
      parentSpanId: dispatchSpanId(RUN, "t1", 1),
      service: "forge",
      attributes: { "forge.run_id": RUN, "forge.task_id": "t1", "forge.attempt": 1, "forge.exit_code": 0, "forge.tool_calls": 3 },
    });
    const stages = receiver.spans.filter((s) => s.name.startsWith("forge.stage "));
    expect(stages.map((s) => s.name)).toEqual(["forge.stage implement", "forge.stage verify", "forge.stage walkthrough"]);
    for (const s of stages) {
      expect(s.traceId).toBe(traceId);
      expect(s.parentSpanId).toBe(attempt!.spanId);
      expect(s.events).toEqual([{ name: "tool_use", attributes: expect.objectContaining({ "forge.tool": "Bash" }) }]);
      expect(s.start).toBeGreaterThanOrEqual(attempt!.start);
      expect(s.end).toBeLessThanOrEqual(attempt!.end);
    }
    // Each session's agent was told where it sits in the trace: under the attempt.
    const told = readFileSync(seen, "utf8").trim().split("\n");
    expect(new Set(told)).toEqual(new Set([`00-${traceId}-${attempt!.spanId}-01`]));
    const point = (name: string) => receiver.points.find((p) => p.name === name);
    expect(point("forge.attempts")).toMatchObject({ value: 1, attributes: { "forge.exit_code": 0 } });
    expect(point("forge.tool_calls")?.value).toBe(3);
    expect(point("forge.agent.duration")?.value).toBeGreaterThan(0);
    expect(receiver.requests.every((r) => r.contentType.startsWith("application/json"))).toBe(true);
  });
});

describe("telemetry from the App", () => {
  it("exports the run, its tasks and each dispatch with the ids the runner parents on: one tree per run", async () => {
    const config = forgeConfigSchema.parse({ telemetry: { otlp_endpoint: receiver.url, service_name: "forge-app" } });
    const t = appTelemetry(config)!;
    expect(appTelemetry(forgeConfigSchema.parse({}))).toBeUndefined();
    const r = runToEnd(newRun(nodes({ a: [], b: ["a"] }), "run-otel"), config, () => ({ kind: "success" }), {
      start: Date.parse("2026-11-26T00:00:00Z"),
    });
    traceDispatch(t, "run-otel", "a", 1, Date.parse("2026-11-26T00:00:01Z"));
    traceRun(
      t,
      r.journal,
      r.decisions.flatMap((d) => d.events),
      r.now,
    );
    await flushAppTelemetry();
    const traceId = runTraceId("run-otel");
    const byName = (n: string) => receiver.spans.filter((s) => s.name === n);
    expect(byName("forge.run")).toEqual([
      expect.objectContaining({ traceId, spanId: runSpanId("run-otel"), parentSpanId: "", service: "forge-app" }),
    ]);
    expect(byName("forge.task").map((s) => [s.attributes["forge.task_id"], s.spanId, s.parentSpanId])).toEqual([
      ["a", taskSpanId("run-otel", "a"), runSpanId("run-otel")],
      ["b", taskSpanId("run-otel", "b"), runSpanId("run-otel")],
    ]);
    expect(byName("forge.dispatch")).toEqual([
      expect.objectContaining({ traceId, spanId: dispatchSpanId("run-otel", "a", 1), parentSpanId: taskSpanId("run-otel", "a") }),
    ]);
    // A task's span lasts from its first dispatch to its merge.
    for (const s of byName("forge.task")) expect(s.end).toBeGreaterThanOrEqual(s.start);
  });
});
