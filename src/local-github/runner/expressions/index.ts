// `${{ }}` expressions for the sim runner: exactly the subset Forge's workflow templates use.
//
// Semantics follow GitHub's "Evaluate expressions in workflows and actions" reference:
// - literals: 'single-quoted strings' ('' escapes a quote), numbers, true, false, null;
// - operators: ( ) . [ ] ! == != && || — `&&`/`||` yield an operand, not a boolean;
// - `==` compares strings case-insensitively and, when the types differ, both sides as numbers;
// - functions: format(), contains(), and the status checks always() success() failure() cancelled();
// - a missing property dereferences to null.
// Anything else (`<`, `>`, `*` filters, toJSON, hashFiles, matrix, needs, …) throws an
// ExpressionError naming the expression, so a template that drifts past the subset fails loudly
// instead of running with a made-up value.
//
// values.ts holds the values, the contexts and ExpressionError, with GitHub's conversions;
// tokens.ts and parse.ts turn the text into a tree, checked against the subset; functions.ts holds
// the functions; evaluate.ts evaluates a tree; templates.ts interpolates `${{ }}` in workflow
// values and evaluates `if:` conditions.
export type { ExpressionContext, ExprValue, JobStatus } from "./values.js";
export { ExpressionError, SUPPORTED_CONTEXTS, toExprString, truthy } from "./values.js";
export { STATUS_FUNCTIONS } from "./functions.js";
export { checkExpression, usesStatusFunction } from "./parse.js";
export { evaluate } from "./evaluate.js";
export { evaluateCondition, interpolate, interpolateString, splitTemplate } from "./templates.js";
