// The action a `uses:` step names: a node action from a folder (`./…` in the workspace, or a remote
// name mapped by RunJobOptions.localActions), or a built-in (actions/checkout, actions/setup-node,
// RunJobOptions.actions).
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { parse as parseYaml } from "yaml";
import { ActionFailedError, BUILTIN_ACTIONS, type BuiltinAction } from "./builtin-actions.js";

export interface ActionDef {
  kind: "node" | "builtin";
  name: string;
  dir?: string;
  main?: string;
  post?: string;
  postIf?: string;
  inputs: Record<string, { default?: unknown; required?: boolean }>;
  builtin?: BuiltinAction;
}

export async function loadAction(
  uses: string,
  workspace: string,
  extra: Record<string, BuiltinAction> | undefined,
  localActions: Record<string, string> | undefined,
): Promise<ActionDef> {
  const mapped = uses.includes("@") ? localActions?.[uses.split("@")[0]!] : undefined;
  if (uses.startsWith("./") || uses.startsWith("../") || mapped !== undefined) {
    const dir = mapped !== undefined ? path.resolve(mapped) : path.resolve(workspace, uses);
    const file = ["action.yml", "action.yaml"].map((f) => path.join(dir, f)).find((f) => existsSync(f));
    if (!file)
      throw new ActionFailedError(
        `Can't find 'action.yml' or 'action.yaml' under '${dir}'. Did you forget to run actions/checkout before running your local action?`,
      );
    const doc = parseYaml(await readFile(file, "utf8")) as {
      name?: string;
      inputs?: Record<string, { default?: unknown; required?: boolean }>;
      runs?: { using?: string; main?: string; post?: string; pre?: string; "post-if"?: string };
    };
    const using = doc?.runs?.using;
    if (using !== "node20" && using !== "node24") {
      throw new ActionFailedError(
        `Action '${uses}' uses runs.using '${String(using)}': the Forge sim runner runs only node20 and node24 actions`,
      );
    }
    if (!doc.runs?.main) throw new ActionFailedError(`Action '${uses}' has no runs.main`);
    if (doc.runs.pre) throw new ActionFailedError(`Action '${uses}' has runs.pre, which the Forge sim runner does not run`);
    return {
      kind: "node",
      name: doc.name ?? uses,
      dir,
      main: doc.runs.main,
      ...(doc.runs.post ? { post: doc.runs.post } : {}),
      ...(doc.runs["post-if"] ? { postIf: doc.runs["post-if"] } : {}),
      inputs: doc.inputs ?? {},
    };
  }
  const name = uses.split("@")[0]!;
  const builtin = extra?.[name] ?? BUILTIN_ACTIONS[name];
  if (!builtin || !uses.includes("@")) {
    throw new ActionFailedError(
      `Action '${uses}' is not available in the Forge sim runner (it runs local ./ actions, ${Object.keys(BUILTIN_ACTIONS).join(", ")}, actions passed in options.actions and folders mapped by options.localActions)`,
    );
  }
  return { kind: "builtin", name, inputs: builtin.inputs, builtin };
}
