/** The attempt's trace id, the same in every job of the attempt and in every file it writes. */
import type { AttemptId } from "../start-head.js";

/** A 64-bit FNV-1a hash of `run/task/attempt`, 16 hex digits. */
export function attemptTraceId({ runId, taskId, attempt }: AttemptId): string {
  let h = 0xcbf29ce484222325n;
  for (const ch of `${runId}/${taskId}/${attempt}`) h = BigInt.asUintN(64, (h ^ BigInt(ch.codePointAt(0)!)) * 0x100000001b3n);
  return h.toString(16).padStart(16, "0");
}
