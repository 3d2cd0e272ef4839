/**
 * An OTLP/HTTP receiver in the test's process: it accepts `POST /v1/traces` and `/v1/metrics` as
 * JSON (what the SDK's `-otlp-http` exporters send), answers 200 `{}`, and keeps the spans and metric
 * points it decoded.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  start: number;
  end: number;
  attributes: Record<string, unknown>;
  events: { name: string; attributes: Record<string, unknown> }[];
  status: number;
  service: string;
}

export interface ReceivedPoint {
  name: string;
  value: number;
  attributes: Record<string, unknown>;
}

type KV = { key: string; value: Record<string, unknown> };
const attrs = (list: KV[] | undefined): Record<string, unknown> =>
  Object.fromEntries((list ?? []).map((a) => [a.key, Object.values(a.value)[0]]));

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  points: ReceivedPoint[];
  requests: { path: string; contentType: string }[];
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const points: ReceivedPoint[] = [];
  const requests: OtlpReceiver["requests"] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      requests.push({ path: req.url ?? "", contentType: String(req.headers["content-type"] ?? "") });
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown[]>;
        if (req.url === "/v1/traces") decodeSpans(body, spans);
        else if (req.url === "/v1/metrics") decodeMetrics(body, points);
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      } catch {
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    points,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/* eslint-disable @typescript-eslint/no-explicit-any -- OTLP JSON, decoded loosely */
function decodeSpans(body: any, out: ReceivedSpan[]): void {
  for (const rs of body.resourceSpans ?? []) {
    const service = String(attrs(rs.resource?.attributes)["service.name"] ?? "");
    for (const ss of rs.scopeSpans ?? [])
      for (const s of ss.spans ?? [])
        out.push({
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId ?? "",
          name: s.name,
          start: Number(BigInt(s.startTimeUnixNano) / 1_000_000n),
          end: Number(BigInt(s.endTimeUnixNano) / 1_000_000n),
          attributes: attrs(s.attributes),
          events: (s.events ?? []).map((e: any) => ({ name: e.name, attributes: attrs(e.attributes) })),
          status: s.status?.code ?? 0,
          service,
        });
  }
}

function decodeMetrics(body: any, out: ReceivedPoint[]): void {
  for (const rm of body.resourceMetrics ?? [])
    for (const sm of rm.scopeMetrics ?? [])
      for (const m of sm.metrics ?? []) {
        const data = m.sum ?? m.gauge ?? m.histogram;
        for (const p of data?.dataPoints ?? [])
          out.push({ name: m.name, value: Number(p.asDouble ?? p.asInt ?? p.sum ?? 0), attributes: attrs(p.attributes) });
      }
}
