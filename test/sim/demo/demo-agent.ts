/**
 * The agent of `forge demo --plan <any plan>`: the scripted agent, which writes the files a task's
 * fenced blocks and `artifacts:` name. A task that names none would end with an empty diff, which
 * Forge never accepts as success, so such a task gets one file saying what it was — enough for any
 * valid plan to run to the end. Tasks with files (examples/plans/textkit) are left as they are.
 */
import { readFile } from "node:fs/promises";
import { main as scripted, parseScriptedTask } from "../agents/scripted-agent.js";

export async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  // What the scripted agent will read: the task file Forge points at, else the prompt (the file
  // alone when it is long).
  const from = env.FORGE_TASK_FILE ?? env.FORGE_PROMPT_FILE;
  const text = from ? await readFile(from, "utf8").catch(() => env.FORGE_PROMPT) : env.FORGE_PROMPT;
  if (text === undefined || parseScriptedTask(text).files.length > 0) return scripted(argv, env);
  const id = env.FORGE_TASK_ID ?? "task";
  const note = `# ${id}\n\nWritten by Forge's demo agent for attempt ${env.FORGE_ATTEMPT ?? "1"}: the task names no files to write.\n`;
  const { FORGE_TASK_FILE: _task, FORGE_PROMPT_FILE: _prompt, ...rest } = env;
  return scripted(argv, { ...rest, FORGE_PROMPT: `${text}\n\n\`\`\`md file=forge-demo/${id}.md\n${note}\`\`\`\n` });
}
