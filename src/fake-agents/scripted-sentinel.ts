/**
 * The scripted agents' task sentinel (docs/runner.md#the-task-sentinel): the `sentinel:` directive of
 * a task's `forge-scripted-agent` block — the grade of each check, the finding, and the files the
 * implementer's fix writes — and the sessions that follow it (README.md#the-task-sentinel).
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";

async function writeReport(file: string, content: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, content);
}

/** What the scripted sentinel grades each check, what it finds, and what the implementer's fix writes. */
export interface ScriptedSentinel {
  /** The grade of the n-th check (`sentinel-<n>`); the last one for later checks and the final one. Default: PASS. */
  grades: Array<"PASS" | "WARN" | "FAIL">;
  finding: string;
  /** Files the implementer's fix session (`sentinel-fix-<n>`) writes: path → content. */
  fix_files: Record<string, string>;
}

export function scriptedSentinel(raw: unknown): ScriptedSentinel {
  const r = (typeof raw === "object" && raw !== null && !Array.isArray(raw) ? raw : {}) as Record<string, unknown>;
  const grades = (Array.isArray(r.grades) ? r.grades : []).map((g) => String(g).toUpperCase());
  const bad = grades.find((g) => !["PASS", "WARN", "FAIL"].includes(g));
  if (bad) throw new Error(`sentinel.grades: ${JSON.stringify(bad)} is not PASS, WARN or FAIL`);
  return {
    grades: grades as ScriptedSentinel["grades"],
    finding: typeof r.finding === "string" ? r.finding : "an acceptance criterion does not hold",
    fix_files: Object.fromEntries(Object.entries((r.fix_files ?? {}) as Record<string, unknown>).map(([k, v]) => [k, String(v)])),
  };
}

/**
 * The task sentinel's session (FORGE_AGENT_TYPE `sentinel`), and the implementer's fix it starts
 * (`sentinel-fix-<n>`): the sentinel writes the audit report (and on FAIL the fix list) at the paths
 * its prompt names and changes nothing else; the fix writes `sentinel.fix_files`. Undefined for any
 * other session.
 */
export async function runScriptedSentinel(
  task: { directives: { sentinel: ScriptedSentinel } },
  kind: string | undefined,
  name: string | undefined,
  prompt: string,
  cwd: string,
): Promise<number | undefined> {
  const s = task.directives.sentinel;
  if (kind === "sentinel") {
    const audit = /Write the audit report to:? (\S+)/.exec(prompt)?.[1];
    const fixList = /Write the fix list to:? (\S+)/.exec(prompt)?.[1];
    if (!audit) return 1;
    const n = Number(/^sentinel-(\d+)/.exec(name ?? "")?.[1] ?? Number.MAX_SAFE_INTEGER);
    const grade = s.grades.length ? s.grades[Math.min(n, s.grades.length) - 1]! : "PASS";
    await writeReport(audit, `Grade: ${grade}\n\n${grade === "PASS" ? "Every acceptance criterion holds." : `- ${s.finding}`}\n`);
    if (grade === "FAIL" && fixList)
      await writeReport(
        fixList,
        `${JSON.stringify({ fixes: [{ id: 1, severity: "blocking", file: Object.keys(s.fix_files)[0] ?? "", issue: s.finding, suggested_fix: "fix it" }] })}\n`,
      );
    process.stdout.write(`Sentinel: ${grade}\nFORGE_EXIT=0\n`);
    return 0;
  }
  if (/^sentinel-fix-\d+/.test(name ?? "")) {
    for (const [file, content] of Object.entries(s.fix_files)) {
      const target = path.resolve(cwd, file);
      if (path.relative(cwd, target).startsWith("..")) throw new Error(`sentinel.fix_files: ${file} is outside the checkout`);
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, content);
    }
    process.stdout.write(`Fixed what the sentinel found\nFORGE_EXIT=0\n`);
    return 0;
  }
  return undefined;
}
