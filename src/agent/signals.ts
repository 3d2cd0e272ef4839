/**
 * Signal files (see docs/formats.md#signal-files): `<sessionDir>/.signals/<layer>-<name>.<status>`, a small YAML
 * document written atomically (temp file + rename) so a reader never sees half of one.
 */
import { randomBytes } from "node:crypto";
import { mkdir, rename, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { stringify } from "yaml";

export type SignalStatus = "done" | "fail" | "refine";
export type SignalLayer = "exec" | "orch" | "coord" | "sentinel" | "monitor";

export interface SignalInput {
  sessionDir: string;
  layer: SignalLayer;
  name: string;
  status: SignalStatus;
  artifactPath?: string;
  traceId: string;
  createdAt: Date;
  completedAt: Date;
  /** Extra fields beyond the standard ones of docs/formats.md#signal-files (exit code, error code). */
  extra?: Record<string, unknown>;
}

const STATUS_WORD: Record<SignalStatus, string> = { done: "success", fail: "fail", refine: "needs-refinement" };

/** Names become file-name slugs. */
export function signalSlug(name: string): string {
  return (
    name
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, "-")
      .replace(/^-+|-+$/g, "") || "unnamed"
  );
}

export function signalPath(sessionDir: string, layer: SignalLayer, name: string, status: SignalStatus): string {
  return path.join(sessionDir, ".signals", `${layer}-${signalSlug(name)}.${status}`);
}

/** Writes `path` atomically: a temp file beside it (`.<name>.tmp.<pid>.<rand>`), then rename. */
export async function writeFileAtomic(file: string, content: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.tmp.${process.pid}.${randomBytes(3).toString("hex")}`);
  // "wx": a link planted at the temporary name is never written through; the rename replaces a link at `file`.
  await writeFile(tmp, content, { encoding: "utf8", flag: "wx" });
  await rename(tmp, file);
}

export async function writeSignal(input: SignalInput): Promise<string> {
  const file = signalPath(input.sessionDir, input.layer, input.name, input.status);
  let size = 0;
  if (input.artifactPath)
    size = await stat(input.artifactPath).then(
      (s) => s.size,
      () => 0,
    );
  const doc = {
    path: input.artifactPath ?? null,
    size,
    status: STATUS_WORD[input.status],
    created_at: input.createdAt.toISOString(),
    completed_at: input.completedAt.toISOString(),
    trace_id: input.traceId,
    layer: input.layer,
    name: input.name,
    elapsed_seconds: Math.round((input.completedAt.getTime() - input.createdAt.getTime()) / 10) / 100,
    version: 1,
    ...input.extra,
  };
  await writeFileAtomic(file, stringify(doc));
  return file;
}
