/**
 * The agent of `forge demo`: the scripted agent (../agents/), which writes the files a task's
 * fenced blocks and `artifacts:` name, with two additions:
 * - a follow-up (`FORGE_TASK_ID` = `_followup-<n>`) writes the `followup_files:` of its source task's
 *   `forge-scripted-agent` block (the follow-up's task text quotes the source task file), or else one
 *   note — never the source task's own files again, which would be an empty diff;
 * - a task that names no files gets one file saying what it was, since Forge never accepts an empty
 *   diff as success: enough for any valid plan (`forge demo --plan`) to run to the end;
 * - a Captain (`FORGE_TASK_ID` = `_captain-<crId>`) answers the Change Request with the overlay the
 *   demo's plan folder holds (`--plan <dir>`, the worked answer, as the fenced blocks are a task's):
 *   the overlay the Captain's task names (`overlays/overlay-NNN.md`) with the run's CR id, its new
 *   task files and dag.json with it applied, written in the checkout's plan folder. The Forge
 *   action then validates them, commits them on the Captain's branch and opens the overlay PR.
 */
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { parse as parseYaml } from "yaml";
import { isFollowupId, parseCaptainId } from "../../core/layout.js";
import { main as scripted, parseScriptedTask } from "../agents/scripted-agent.js";
import { loadPlanStages } from "./plan-stages.js";

/** The `followup_files:` of the first `forge-scripted-agent` block in a text. */
export function followupFiles(text: string | undefined): Record<string, string> | undefined {
  const m = /^(`{3,})forge-scripted-agent[^\n]*\n([\s\S]*?)^\1[ \t]*$/m.exec(text ?? "");
  if (!m) return undefined;
  const doc = parseYaml(m[2]!) as { followup_files?: Record<string, string> } | null;
  return doc?.followup_files && Object.keys(doc.followup_files).length ? doc.followup_files : undefined;
}

const fence = (file: string, content: string) => `\`\`\`\`txt file=${file}\n${content.endsWith("\n") ? content : `${content}\n`}\`\`\`\`\n`;

/**
 * The overlay number the Captain must write: the one its task names, else the next free one in the
 * checkout's plan folder.
 */
async function overlayNumber(text: string, cwd: string, planId: string): Promise<number> {
  const named = /overlays\/overlay-(\d{3,})\.md/.exec(text)?.[1];
  if (named) return Number(named);
  const existing = await readdir(path.join(cwd, ".forge", "plans", planId, "overlays")).catch(() => [] as string[]);
  return existing.filter((f) => /^overlay-\d{3,}\.md$/.test(f)).length + 1;
}

/** The Captain: writes the demo plan's overlay for this Change Request; 1 when the plan has none left. */
export async function captain(
  crId: string,
  planDir: string | undefined,
  text: string,
  cwd: string,
  say: (line: string) => void = (l) => void process.stdout.write(`${l}\n`),
): Promise<number> {
  if (!planDir) {
    say(`Error: the Captain of ${crId} needs the demo's plan folder (--plan <dir>) to answer from`);
    return 1;
  }
  const stages = await loadPlanStages(planDir);
  const n = await overlayNumber(text, cwd, stages.planId);
  if (n > stages.overlays.length) {
    say(`Error: Change Request ${crId} needs a person: the plan folder has no overlay-${String(n).padStart(3, "0")} to answer it with`);
    return 1;
  }
  say(`Answering Change Request ${crId} with ${stages.overlays[n - 1]!.id} of plan ${stages.planId}`);
  for (const [rel, content] of Object.entries(stages.captainFiles(n, crId))) {
    const abs = path.join(cwd, rel);
    await mkdir(path.dirname(abs), { recursive: true });
    await writeFile(abs, content);
    say(`Wrote ${rel}`);
  }
  say(`Done: overlay ${String(n).padStart(3, "0")} written`);
  return 0;
}

export async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  // `--plan <dir>`: the demo's plan folder, whose overlays are the Captain's answers.
  const at = argv.indexOf("--plan");
  const planDir = at >= 0 ? argv[at + 1] : undefined;
  if (at >= 0) argv = [...argv.slice(0, at), ...argv.slice(at + 2)];
  // What the scripted agent would read: the task file Forge points at, else the prompt (the file
  // alone when it is long).
  const from = env.FORGE_TASK_FILE ?? env.FORGE_PROMPT_FILE;
  const text = from ? await readFile(from, "utf8").catch(() => env.FORGE_PROMPT) : env.FORGE_PROMPT;
  const id = env.FORGE_TASK_ID ?? "task";
  // `_captain-<crId>`: a Captain answering a Change Request (action/src/captain.ts).
  const cr = parseCaptainId(id);
  if (cr) {
    const prompt = env.FORGE_PROMPT_FILE ? await readFile(env.FORGE_PROMPT_FILE, "utf8").catch(() => env.FORGE_PROMPT) : env.FORGE_PROMPT;
    return captain(cr, planDir && path.resolve(planDir), prompt ?? text ?? "", process.cwd());
  }
  const followup = isFollowupId(id);
  if (text === undefined || (!followup && parseScriptedTask(text).files.length > 0)) return scripted(argv, env);
  const files = (followup && followupFiles(text)) || {
    [`forge-demo/${id}.md`]: `# ${id}\n\nWritten by Forge's demo agent for attempt ${env.FORGE_ATTEMPT ?? "1"}: the task names no files to write.\n`,
  };
  const { FORGE_TASK_FILE: _task, FORGE_PROMPT_FILE: _prompt, ...rest } = env;
  const title = followup ? `Follow-up ${id}` : id;
  const prompt = `---\nid: ${JSON.stringify(id)}\ntitle: ${JSON.stringify(title)}\n---\n\n${Object.entries(files)
    .map(([f, c]) => fence(f, c))
    .join("\n")}`;
  return scripted(argv, {
    ...rest,
    FORGE_PROMPT: followup ? prompt : `${text}\n\n${fence(Object.keys(files)[0]!, Object.values(files)[0]!)}`,
  });
}
