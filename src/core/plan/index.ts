// Plans: reading (load.ts from disk, parse.ts from texts), checking (validate.ts), graph algorithms.
export { loadPlan, readPlanSource, PlanNotFoundError } from "./load.js";
export { parsePlan, fieldLines, type ParsedPlan, type PlanSource, type TaskFile, type OverlayFile, type DagFile } from "./parse.js";
export { validatePlan, validateDag, validateDagChange } from "./validate.js";
export { findCycles, topoOrder, type GraphInput } from "./graph.js";
export { PLAN_RULES, type PlanRule, type Problem } from "./problem.js";
