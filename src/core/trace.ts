/**
 * One trace per run, in W3C Trace Context terms (https://www.w3.org/TR/trace-context/): the trace id
 * and the span ids of the run, its tasks and each attempt's dispatch are derived from their names, so
 * the App (which exports the run, task and dispatch spans at different times, from any replica) and
 * the runner (which parents its attempt span on the dispatch span named in `traceparent`) agree
 * without sharing state. Pure.
 */

/** 64-bit FNV-1a of `text` with a seed, as 16 hex digits. */
function fnv64(text: string, seed: bigint): string {
  let h = 0xcbf29ce484222325n ^ seed;
  for (const ch of text) h = BigInt.asUintN(64, (h ^ BigInt(ch.codePointAt(0)!)) * 0x100000001b3n);
  // All zeros is an invalid id in W3C Trace Context.
  return (h === 0n ? 1n : h).toString(16).padStart(16, "0");
}

/** The run's trace id: 32 hex digits. */
export const runTraceId = (runId: string) => `${fnv64(`trace:${runId}`, 1n)}${fnv64(`trace:${runId}`, 2n)}`;
export const runSpanId = (runId: string) => fnv64(`run:${runId}`, 3n);
export const taskSpanId = (runId: string, taskId: string) => fnv64(`task:${runId}/${taskId}`, 3n);
/** The App's dispatch of an attempt: the parent of the runner's attempt span. */
export const dispatchSpanId = (runId: string, taskId: string, attempt: number) => fnv64(`dispatch:${runId}/${taskId}/${attempt}`, 3n);

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[0-3]$/;

/** A `traceparent` header value (version 00, sampled). */
export const traceparent = (traceId: string, spanId: string) => `00-${traceId}-${spanId}-01`;

/** The trace and parent span a `traceparent` names, if it is well formed (bounded: at most 55 characters are read). */
export function parseTraceparent(value: string | undefined): { traceId: string; spanId: string } | undefined {
  if (!value || value.length > 55) return undefined;
  const m = TRACEPARENT.exec(value);
  if (!m || /^0+$/.test(m[1]!) || /^0+$/.test(m[2]!)) return undefined;
  return { traceId: m[1]!, spanId: m[2]! };
}

/** The traceparent the App puts in an attempt's dispatch context. */
export const dispatchTraceparent = (runId: string, taskId: string, attempt: number) =>
  traceparent(runTraceId(runId), dispatchSpanId(runId, taskId, attempt));
