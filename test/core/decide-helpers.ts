// What the decide tests share: a config, a started run, feeding inputs, and the inputs of a success and a merge.
import { decide, startRun, type Decision } from "../../src/core/decide/index.js";
import type { LeafInput } from "../../src/core/inputs.js";
import type { Journal } from "../../src/core/journal.js";
import { forgeConfigSchema, type ForgeConfig } from "../../src/core/schemas/config.js";
import { newRun, nodes, sha } from "../helpers/world.js";

export const cfg = (over: Record<string, unknown> = {}): ForgeConfig => forgeConfigSchema.parse(over);
export const MIN = 60_000;

export function start(spec: Record<string, string[]>, config = cfg()): Decision {
  return startRun(newRun(nodes(spec)), 0, config);
}

/** Decides `inputs` in order; a refinery's upstream checks are answered clean as they come (`clean: false` leaves them). */
export function feed(j: Journal, inputs: LeafInput[], now = 1000, config = cfg(), clean = true) {
  let last: Decision | undefined;
  const all = {
    events: [] as Decision["events"],
    effects: [] as Decision["effects"],
    rejections: [] as Decision["rejections"],
    transitions: [] as Decision["transitions"],
  };
  const queue = [...inputs];
  for (let input = queue.shift(); input; input = queue.shift()) {
    last = decide(j, input, now, config);
    if (clean)
      for (const e of last.effects)
        if (e.kind === "CheckUpstream") queue.unshift({ kind: "effect.done", key: e.key, result: { clean: true } });
    j = last.journal;
    all.events.push(...last.events);
    all.effects.push(...last.effects);
    all.rejections.push(...last.rejections);
    all.transitions.push(...last.transitions);
  }
  return { journal: j, ...all };
}

export const status = (j: Journal, id: string) => j.tasks.find((t) => t.id === id)!;
export const types = (events: { type: string }[]) => events.map((e) => e.type);

export function success(
  taskId: string,
  attempt = 1,
  extra: Partial<{ files: string[]; risks: string[]; followups: string[]; confidence: number; pushed: string | null }> = {},
): LeafInput {
  const head = sha(`${taskId}/${attempt}`);
  return {
    kind: "agent.finished",
    taskId,
    attempt,
    exitCode: 0,
    ...(extra.pushed === null ? {} : { pushedSha: extra.pushed ?? head }),
    walkthrough: {
      status: "completed",
      confidence: extra.confidence ?? 0.9,
      headSha: head,
      filesChanged: extra.files ?? [`src/${taskId}.ts`],
      risks: extra.risks ?? [],
      followups: extra.followups ?? [],
    },
  };
}
export const merged = (taskId: string, attempt = 1): LeafInput => ({
  kind: "pr.merged",
  taskId,
  attempt,
  mergeSha: sha(`m/${taskId}/${attempt}`),
});
