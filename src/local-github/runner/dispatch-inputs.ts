// `workflow_dispatch` inputs checked against the workflow as GitHub checks them before it answers
// 204: the inputs context and github.event.inputs they make.
import type { ExprValue, Template } from "./expressions.js";
import type { WorkflowSpec } from "./workflow.js";

/**
 * A dispatch the API must refuse. `status` is 422 and `message` is GitHub's wording, so the
 * server can answer `{ message, documentation_url, status: "422" }` as GitHub does.
 */
export class DispatchInputError extends Error {
  readonly status = 422;
  constructor(message: string) {
    super(message);
    this.name = "DispatchInputError";
  }
}

/** The 422 body GitHub sends for a refused dispatch. */
export function dispatchErrorBody(err: DispatchInputError): { message: string; documentation_url: string; status: "422" } {
  return {
    message: err.message,
    documentation_url: "https://docs.github.com/rest/actions/workflows#create-a-workflow-dispatch-event",
    status: "422",
  };
}

export interface DispatchInputSpec {
  description?: string;
  required?: boolean;
  default?: unknown;
  type?: "string" | "boolean" | "choice" | "number" | "environment";
  options?: unknown[];
}

/** The `workflow_dispatch` trigger's inputs, or null when the workflow has no such trigger. */
export function dispatchInputSpecs(on: Template | undefined): Record<string, DispatchInputSpec> | null {
  if (on === "workflow_dispatch") return {};
  if (Array.isArray(on)) return on.includes("workflow_dispatch") ? {} : null;
  if (on && typeof on === "object" && "workflow_dispatch" in on) {
    const wd = (on as Record<string, unknown>).workflow_dispatch;
    const inputs = wd && typeof wd === "object" ? (wd as { inputs?: unknown }).inputs : undefined;
    return (inputs && typeof inputs === "object" ? inputs : {}) as Record<string, DispatchInputSpec>;
  }
  return null;
}

export interface DispatchInputs {
  /** The `inputs` context: booleans are booleans, numbers numbers, the rest strings. */
  inputs: Record<string, ExprValue>;
  /** `github.event.inputs` in the dispatch payload: every value a string, as GitHub sends them. */
  eventInputs: Record<string, string>;
}

function inputAsString(name: string, value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "boolean" || typeof value === "number") return String(value);
  throw new DispatchInputError(`Provided value for input '${name}' must be a string`);
}

/** One input's value in the inputs context and in github.event.inputs; refuses what GitHub refuses. */
function typedInput(name: string, type: string, raw: string | undefined, spec: DispatchInputSpec): [ExprValue, string] {
  switch (type) {
    case "boolean": {
      const v = raw === undefined || raw === "" ? "false" : raw;
      if (v !== "true" && v !== "false") throw new DispatchInputError(`Provided value '${v}' for input '${name}' is not a valid boolean`);
      return [v === "true", v];
    }
    case "choice": {
      const v = raw ?? "";
      if (v !== "" && !(spec.options ?? []).map(String).includes(v))
        throw new DispatchInputError(`Provided value '${v}' for input '${name}' not in the list of allowed values`);
      return [v, v];
    }
    case "number": {
      const v = raw ?? "";
      if (v !== "" && !Number.isFinite(Number(v)))
        throw new DispatchInputError(`Provided value '${v}' for input '${name}' is not a valid number`);
      return [v === "" ? "" : Number(v), v];
    }
    default:
      // string, environment (the parser refuses any other type)
      return [raw ?? "", raw ?? ""];
  }
}

/**
 * Validate `inputs` of a `workflow_dispatch` request against the workflow, as GitHub does before
 * it answers 204: unknown inputs and missing required ones are refused with 422, defaults are
 * applied, and booleans/choices/numbers are checked.
 * (REST "Create a workflow dispatch event": "inputs … Any default properties configured in the
 * workflow file will be used when inputs are omitted.")
 */
export function parseDispatchInputs(wf: WorkflowSpec, inputs: Record<string, unknown> | undefined): DispatchInputs {
  const specs = dispatchInputSpecs(wf.on);
  if (specs === null) throw new DispatchInputError("Workflow does not have 'workflow_dispatch' trigger");
  const given = inputs ?? {};
  const unexpected = Object.keys(given).filter((k) => !Object.prototype.hasOwnProperty.call(specs, k));
  // GitHub: `Unexpected inputs provided: ["a", "b"]` (seen in the 422 bodies users report).
  if (unexpected.length > 0) {
    throw new DispatchInputError(`Unexpected inputs provided: [${unexpected.map((k) => JSON.stringify(k)).join(", ")}]`);
  }
  const out: DispatchInputs = { inputs: {}, eventInputs: {} };
  for (const [name, spec0] of Object.entries(specs)) {
    const spec = spec0 ?? {};
    const provided = Object.prototype.hasOwnProperty.call(given, name) ? given[name] : undefined;
    let raw: string | undefined = provided === undefined || provided === null ? undefined : inputAsString(name, provided);
    if (raw === undefined && spec.default !== undefined && spec.default !== null) raw = String(spec.default);
    if ((raw === undefined || raw === "") && spec.required) throw new DispatchInputError(`Required input '${name}' not provided`);
    [out.inputs[name], out.eventInputs[name]] = typedInput(name, spec.type ?? "string", raw, spec);
  }
  return out;
}
