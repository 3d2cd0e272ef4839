import type { Command } from "commander";
import type { ParsedPlan } from "../../core/plan/parse.js";
import { validatePlan } from "../../core/plan/validate.js";
import { formatProblem } from "../../core/problems.js";
import { CLI_EXIT } from "../io.js";
import type { CommandContext } from "./index.js";
import { displayFile, loadPlanArg } from "./plan-input.js";

export function registerValidate(program: Command, { io, setExitCode }: CommandContext): void {
  program
    .command("validate")
    .description("Check a plan folder (.forge/plans/<planId>/) against every rule of its format.")
    .argument("<planDir>", "the plan folder")
    .option("--json", "print { valid, problems } as JSON")
    .action(async (planDir: string, opts: { json?: boolean }) => {
      const plan = await loadPlanArg(planDir, io);
      const problems = validatePlan(plan).map((p) => ({ ...p, file: displayFile(planDir, p.file, io) }));
      const valid = problems.length === 0;
      if (opts.json) {
        io.out(`${JSON.stringify({ valid, problems }, null, 2)}\n`);
      } else if (valid) {
        io.out(`OK ${summary(plan)}\n`);
      } else {
        for (const p of problems) io.out(`${formatProblem(p)}\n`);
        io.out(`${problems.length} problem${problems.length === 1 ? "" : "s"} in plan ${JSON.stringify(plan.planId)}\n`);
      }
      setExitCode(valid ? CLI_EXIT.OK : CLI_EXIT.PROBLEMS);
    });
}

function summary(plan: ParsedPlan): string {
  const nodes = plan.dag.data?.nodes ?? [];
  let refineries = 0;
  let edges = 0;
  for (const n of nodes) {
    if (n.type === "refinery") refineries++;
    edges += n.dependencies.length;
  }
  const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
  return [
    `plan ${JSON.stringify(plan.planId)}:`,
    `${count(nodes.length - refineries, "task", "tasks")},`,
    `${count(refineries, "refinery", "refineries")},`,
    `${count(edges, "dependency", "dependencies")},`,
    `${count(plan.overlays.length, "overlay", "overlays")},`,
    count(plan.specs.length, "spec", "specs"),
  ].join(" ");
}
