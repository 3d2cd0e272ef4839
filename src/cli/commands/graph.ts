import { readFile } from "node:fs/promises";
import path from "node:path";
import type { Command } from "commander";
import { journalSchema } from "../../core/journal.js";
import { migrateJournal } from "../../core/journal-migration.js";
import { validatePlan } from "../../core/plan/validate.js";
import { formatProblem, zodProblems } from "../../core/problems.js";
import { renderMermaid } from "../../core/render/mermaid.js";
import type { TaskStatus } from "../../core/schemas/common.js";
import { existingFile } from "../args.js";
import { CLI_EXIT, CliError, type CliIo } from "../io.js";
import type { CommandContext } from "./index.js";
import { displayFile, loadPlanArg } from "./plan-input.js";

export function registerGraph(program: Command, { io, setExitCode }: CommandContext): void {
  program
    .command("graph")
    .description("Print a plan's DAG (dag.json) as a Mermaid flowchart, coloured by status with a run journal.")
    .argument("<planDir>", "the plan folder")
    .option("--journal <file>", "a run journal (JSON); nodes are coloured by their status")
    .option("--titles", "show task titles under their ids")
    .action(async (planDir: string, opts: { journal?: string; titles?: boolean }) => {
      if (opts.journal !== undefined) existingFile("--journal", opts.journal, io.cwd);
      const plan = await loadPlanArg(planDir, io);
      const dag = plan.dag.data;
      if (!dag) {
        const blocking = validatePlan(plan).filter((p) => p.file === "dag.json");
        for (const p of blocking) io.err(`${formatProblem({ ...p, file: displayFile(planDir, p.file, io) })}\n`);
        if (blocking.length === 0) io.err(`forge: ${displayFile(planDir, "dag.json", io)} cannot be read\n`);
        setExitCode(CLI_EXIT.PROBLEMS);
        return;
      }
      const statuses = opts.journal ? await readStatuses(opts.journal, io) : undefined;
      const titles = new Map(plan.tasks.map((t) => [t.data?.id ?? t.name, t.data?.title]));
      const nodes = dag.nodes.map((n) => ({ ...n, title: titles.get(n.id) }));
      io.out(renderMermaid(nodes, statuses, { titles: opts.titles ?? false }));
      const problems = validatePlan(plan).length;
      if (problems > 0)
        io.err(`forge: warning: the plan has ${problems} problem${problems === 1 ? "" : "s"}; run npx forge validate ${planDir}\n`);
      setExitCode(CLI_EXIT.OK);
    });
}

async function readStatuses(file: string, io: CliIo): Promise<Map<string, TaskStatus>> {
  let text: string;
  try {
    text = await readFile(path.resolve(io.cwd, file), "utf8");
  } catch {
    throw new CliError(`--journal ${file}: cannot be read`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new CliError(`journal ${file} is not valid JSON: ${(err as Error).message}`, CLI_EXIT.PROBLEMS);
  }
  // A journal an earlier Forge wrote is read as this one's.
  const parsed = journalSchema.safeParse(migrateJournal(json));
  if (!parsed.success) {
    const first = zodProblems(parsed.error, file)[0];
    throw new CliError(`journal ${file} is not a Forge journal: ${first ? formatProblem(first) : "invalid"}`, CLI_EXIT.PROBLEMS);
  }
  return new Map(parsed.data.tasks.map((t) => [t.id, t.status]));
}
