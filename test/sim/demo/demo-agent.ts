/**
 * The agent of `forge demo`: the scripted agent (test/sim/agents/), which writes the files a task's
 * fenced blocks and `artifacts:` name, with two additions:
 * - a follow-up (`FORGE_TASK_ID` = `_followup-<n>`) writes the `followup_files:` of its source task's
 *   `forge-scripted-agent` block (the follow-up's task text quotes the source task file), or else one
 *   note — never the source task's own files again, which would be an empty diff;
 * - a task that names no files gets one file saying what it was, since Forge never accepts an empty
 *   diff as success: enough for any valid plan (`forge demo --plan`) to run to the end.
 */
import { readFile } from "node:fs/promises";
import { parse as parseYaml } from "yaml";
import { main as scripted, parseScriptedTask } from "../agents/scripted-agent.js";

/** The `followup_files:` of the first `forge-scripted-agent` block in a text. */
export function followupFiles(text: string | undefined): Record<string, string> | undefined {
  const m = /^(`{3,})forge-scripted-agent[^\n]*\n([\s\S]*?)^\1[ \t]*$/m.exec(text ?? "");
  if (!m) return undefined;
  const doc = parseYaml(m[2]!) as { followup_files?: Record<string, string> } | null;
  return doc?.followup_files && Object.keys(doc.followup_files).length ? doc.followup_files : undefined;
}

const fence = (file: string, content: string) => `\`\`\`\`txt file=${file}\n${content.endsWith("\n") ? content : `${content}\n`}\`\`\`\`\n`;

export async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  // What the scripted agent would read: the task file Forge points at, else the prompt (the file
  // alone when it is long).
  const from = env.FORGE_TASK_FILE ?? env.FORGE_PROMPT_FILE;
  const text = from ? await readFile(from, "utf8").catch(() => env.FORGE_PROMPT) : env.FORGE_PROMPT;
  const id = env.FORGE_TASK_ID ?? "task";
  const followup = id.startsWith("_followup-");
  if (text === undefined || (!followup && parseScriptedTask(text).files.length > 0)) return scripted(argv, env);
  const files = (followup && followupFiles(text)) || { [`forge-demo/${id}.md`]: `# ${id}\n\nWritten by Forge's demo agent for attempt ${env.FORGE_ATTEMPT ?? "1"}: the task names no files to write.\n` };
  const { FORGE_TASK_FILE: _task, FORGE_PROMPT_FILE: _prompt, ...rest } = env;
  const title = followup ? `Follow-up ${id}` : id;
  const prompt = `---\nid: ${JSON.stringify(id)}\ntitle: ${JSON.stringify(title)}\n---\n\n${Object.entries(files).map(([f, c]) => fence(f, c)).join("\n")}`;
  return scripted(argv, { ...rest, FORGE_PROMPT: followup ? prompt : `${text}\n\n${fence(Object.keys(files)[0]!, Object.values(files)[0]!)}` });
}
