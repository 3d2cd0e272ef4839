// The action a `uses:` step names: a node action from a folder (`./…` in the workspace, or a remote
// name mapped by RunJobOptions.localActions), or a built-in (actions/checkout, actions/setup-node,
// RunJobOptions.actions). An action.yml is read by GitHub's own parser (@actions/workflow-parser),
// as are the built-ins' input defaults, so their `${{ }}` are GitHub's.
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { stringify } from "yaml";
import { ActionFailedError, BUILTIN_ACTIONS, type BuiltinAction } from "./builtin-actions.js";
import type { Template } from "./expressions.js";
import { toTemplate } from "./workflow.js";
import {
  convertActionTemplate,
  getActionSchema,
  NoOperationTraceWriter,
  readTemplate,
  TemplateContext,
  TemplateValidationErrors,
  YamlObjectReader,
  type ActionTemplate,
} from "./workflow-parser.js";

export interface ActionInput {
  default?: Template;
  required?: boolean;
}

export interface ActionDef {
  kind: "node" | "builtin";
  name: string;
  dir?: string;
  main?: string;
  post?: string;
  postIf?: string;
  inputs: Record<string, ActionInput>;
  builtin?: BuiltinAction;
}

/**
 * An action.yml as GitHub's parser reads it, with the schema the runner loads actions with
 * (`action-root`; the library's parseAction checks the stricter `action-root-strict` of the
 * editor, which also wants a description); a file it refuses fails the step with its messages.
 */
function readAction(file: string, text: string): { template: ActionTemplate; inputs: Record<string, ActionInput> } {
  const context = new TemplateContext(new TemplateValidationErrors(), getActionSchema(), new NoOperationTraceWriter());
  const fileId = context.getFileId(file);
  const reader = new YamlObjectReader(fileId, text);
  for (const e of reader.errors) context.error(fileId, e.message, e.range);
  const root = reader.errors.length ? undefined : readTemplate(context, "action-root", reader, fileId);
  const template = root ? convertActionTemplate(context, root) : undefined;
  const errors = context.errors.getErrors();
  if (!root || !template || errors.length > 0) {
    throw new ActionFailedError(`Failed to load ${file}: ${errors.map((e) => e.message).join(" ") || "not an action"}`);
  }
  const inputs: Record<string, ActionInput> = {};
  for (const i of template.inputs ?? []) {
    inputs[i.id] = {
      ...(i.default !== undefined ? { default: toTemplate(i.default, context) } : {}),
      ...(i.required !== undefined ? { required: i.required } : {}),
    };
  }
  return { template, inputs };
}

const builtinInputs = new WeakMap<BuiltinAction, Record<string, ActionInput>>();

/** A built-in's inputs, their defaults read as an action.yml's would be. */
function inputsOfBuiltin(name: string, builtin: BuiltinAction): Record<string, ActionInput> {
  let inputs = builtinInputs.get(builtin);
  if (!inputs) {
    const yml = stringify({ name, runs: { using: "node20", main: "index.js" }, inputs: builtin.inputs });
    inputs = readAction(`${name}/action.yml`, yml).inputs;
    builtinInputs.set(builtin, inputs);
  }
  return inputs;
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
    const { template, inputs } = readAction(file, await readFile(file, "utf8"));
    const runs = template.runs;
    if (runs.using !== "node20" && runs.using !== "node24") {
      throw new ActionFailedError(
        `Action '${uses}' uses runs.using '${runs.using}': the Forge sim runner runs only node20 and node24 actions`,
      );
    }
    if (runs.pre) throw new ActionFailedError(`Action '${uses}' has runs.pre, which the Forge sim runner does not run`);
    return {
      kind: "node",
      name: template.name ?? uses,
      dir,
      main: runs.main,
      ...(runs.post ? { post: runs.post } : {}),
      ...(runs.postIf ? { postIf: runs.postIf } : {}),
      inputs,
    };
  }
  const name = uses.split("@")[0]!;
  const builtin = extra?.[name] ?? BUILTIN_ACTIONS[name];
  if (!builtin || !uses.includes("@")) {
    throw new ActionFailedError(
      `Action '${uses}' is not available in the Forge sim runner (it runs local ./ actions, ${Object.keys(BUILTIN_ACTIONS).join(", ")}, actions passed in options.actions and folders mapped by options.localActions)`,
    );
  }
  return { kind: "builtin", name, inputs: inputsOfBuiltin(name, builtin), builtin };
}
