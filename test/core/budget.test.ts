// Budgets at the App: each attempt's cap (the attempt's, no more than its task and its run have
// left, running attempts' caps reserved) goes with its dispatch; nothing is dispatched that the run's
// remaining budget cannot cover, and the run pauses, saying so; an attempt stopped at its budget
// waits for `/forge budget`, which raises the task's or the run's.
import { describe, expect, it } from "vitest";
import { budgetAmount } from "../../src/app/handlers/issue-comment.js";
import { parseCommand } from "../../src/app/commands.js";
import { renderTracker } from "../../src/app/render.js";
import { nextAttemptCap, runLeft } from "../../src/core/budget.js";
import { decide, startRun, type Decision } from "../../src/core/decide/index.js";
import type { Effect } from "../../src/core/effects.js";
import type { LeafInput } from "../../src/core/inputs.js";
import { forgeConfigSchema, type ForgeConfig } from "../../src/core/schemas/config.js";
import { taskFrontmatterSchema } from "../../src/core/schemas/task.js";
import { newRun, nodes } from "../helpers/world.js";

const T0 = Date.parse("2026-11-26T00:00:00Z");

function dispatches(d: Decision): Extract<Effect, { kind: "DispatchAgent" }>[] {
  return d.effects.filter((e): e is Extract<Effect, { kind: "DispatchAgent" }> => e.kind === "DispatchAgent");
}

function start(config: ForgeConfig, spec: Record<string, string[]>): Decision {
  return startRun(newRun(nodes(spec), "run-b"), T0, config);
}

const finished = (
  taskId: string,
  attempt: number,
  usd: number,
  extra: Partial<Extract<LeafInput, { kind: "agent.finished" }>> = {},
): LeafInput => ({
  kind: "agent.finished",
  taskId,
  attempt,
  exitCode: 1,
  error: "boom",
  spend: { usd },
  ...extra,
});

describe("budgets at the App", () => {
  it("dispatches each attempt with its cap, reserving it from the run's budget, and pauses the run when the rest cannot cover the next", () => {
    const config = forgeConfigSchema.parse({ max_parallel_agents: 4, budgets: { attempt_usd: 2, run_usd: 5 } });
    const d = start(config, { a: [], b: [], c: [] });
    // $5 covers two $2 attempts; the third waits.
    expect(dispatches(d).map((e) => [e.taskId, e.context?.budget])).toEqual([
      ["a", { usd: 2 }],
      ["b", { usd: 2 }],
    ]);
    expect(d.journal.pause.budget).toBe(true);
    expect(d.events.filter((e) => e.type === "run.paused").map((e) => e.data)).toEqual([{ reason: "budget" }]);
    expect(runLeft(d.journal, config)).toBe(1);
    expect(
      renderTracker(d.journal, d.events, { checkRuns: {} }, { owner: "o", repo: "r", webUrl: "https://github.com" }, 0, config),
    ).toMatch(
      /paused: the run's budget is spent — `\/forge budget \+<dollars>` raises it\)[\s\S]*\*\*Spend:\*\* \$0\.00 of \$5\.00 \(run budget\)/,
    );

    // a spent $0.50 of its $2: $1 + $1.50 back, so c is dispatched with a $2 cap and the run resumes.
    const j1 = decide(d.journal, finished("a", 1, 0.5, { exitCode: 2, error: "fatal" }), T0 + 1_000, config);
    expect(dispatches(j1).map((e) => [e.taskId, e.context?.budget])).toEqual([["c", { usd: 2 }]]);
    expect(j1.journal.pause.budget).toBeUndefined();
    expect(j1.events.map((e) => e.type)).toContain("run.resumed");
    expect(j1.journal.tasks[0]!.spentUsd).toBe(0.5);
  });

  it("a task's front matter overrides the config's caps; a task with nothing left is not dispatched", () => {
    expect(taskFrontmatterSchema.shape.budget.safeParse({ attempt_usd: 1, nonsense: 2 }).success).toBe(false);
    const config = forgeConfigSchema.parse({ budgets: { attempt_usd: 2, task_usd: 3 } });
    const run = newRun([{ id: "a", kind: "task", agentType: "2", dependencies: [], budget: { attempt_usd: 0.5 } }], "run-f");
    const d = startRun(run, T0, config);
    expect(dispatches(d)[0]!.context?.budget).toEqual({ usd: 0.5 });
    const j = d.journal;
    const node = j.plan.nodes[0]!;
    expect(nextAttemptCap(j, node, { ...j.tasks[0]!, spentUsd: 3 }, config)).toEqual({ cap: {}, blocked: "task" });
    expect(nextAttemptCap(j, node, { ...j.tasks[0]!, spentUsd: 2.8 }, config).cap).toEqual({ usd: 0.2 });
  });

  it("an attempt stopped at its budget waits (held, not retried); /forge budget <task> +N raises its cap and retries it", () => {
    const config = forgeConfigSchema.parse({ budgets: { attempt_usd: 1 } });
    const d = start(config, { a: [] });
    const stopped = decide(
      d.journal,
      finished("a", 1, 1.2, { exitCode: 20, error: "stopped", budgetExceeded: { limitUsd: 1, spentUsd: 1.2 } }),
      T0 + 1_000,
      config,
    );
    const t = stopped.journal.tasks[0]!;
    expect(t).toMatchObject({ status: "FAILED", spentUsd: 1.2, attempt: { hold: "budget" } });
    expect(t.lastError).toBe("stopped at its budget: $1.20 of $1.00; /forge budget a +<amount> to go on");
    expect(dispatches(stopped)).toEqual([]);

    const refused = decide(stopped.journal, { kind: "command", command: "budget", actor: "octocat", taskId: "a" }, T0 + 2_000, config);
    expect(refused.rejections.map((r) => r.reason)).toEqual([expect.stringMatching(/^say how much to add/)]);

    const raised = decide(
      stopped.journal,
      { kind: "command", command: "budget", actor: "octocat", taskId: "a", amountUsd: 1.5 },
      T0 + 2_000,
      config,
    );
    expect(raised.journal.tasks[0]).toMatchObject({ status: "RUNNING", attempts: 2, budgetExtraUsd: 1.5 });
    expect(dispatches(raised)[0]!.context?.budget).toEqual({ usd: 2.5 });
    expect(raised.events.find((e) => e.type === "task.retried")?.data).toMatchObject({ manual: true });
  });

  it("/forge budget +N raises the run's budget and resumes a run paused for it", () => {
    const config = forgeConfigSchema.parse({ budgets: { attempt_usd: 2, run_usd: 1 } });
    const d = start(config, { a: [] });
    expect(dispatches(d)).toEqual([]);
    expect(d.journal.pause.budget).toBe(true);
    const raised = decide(d.journal, { kind: "command", command: "budget", actor: "octocat", amountUsd: 4 }, T0 + 1_000, config);
    expect(raised.journal.budgetExtraUsd).toBe(4);
    expect(dispatches(raised).map((e) => e.context?.budget)).toEqual([{ usd: 2 }]);
    expect(raised.events.map((e) => e.type)).toContain("run.resumed");
  });

  it("reads `/forge budget [task] +<dollars>` and nothing else as an amount", () => {
    expect(parseCommand("/forge budget a +5")).toMatchObject({ name: "budget", args: ["a", "+5"] });
    expect([
      budgetAmount("+5"),
      budgetAmount("+$2.50"),
      budgetAmount("5"),
      budgetAmount("+0"),
      budgetAmount("+1e9"),
      budgetAmount(undefined),
    ]).toEqual([5, 2.5, undefined, undefined, undefined, undefined]);
  });
});
