// GitHub's own reader of workflow and action files, @actions/workflow-parser (actions/languageservices,
// the parser behind GitHub's Actions editor): the one module of Forge that imports it.
//
// Its published code imports its JSON schemas without an import attribute (`import WorkflowSchema
// from "../workflow-v1.0.min.json"`), which plain Node refuses (ERR_IMPORT_ASSERTION_TYPE_MISSING;
// actions/languageservices#387). So:
//  - `npm run build` replaces this file's compiled output (dist/local-github/runner/workflow-parser.js)
//    with an esbuild bundle of the parser and its schemas (scripts/finish-build.mjs); what the
//    bundle still imports (@actions/expressions, yaml) are dependencies of Forge's package;
//  - Vitest inlines the package (vitest.config.ts, `server.deps.inline`), tsx reads it as it is.
export {
  convertWorkflowTemplate,
  isBasicExpression,
  isBoolean,
  isMapping,
  isNumber,
  isSequence,
  isString,
  NoOperationTraceWriter,
  parseWorkflow,
  type WorkflowTemplate,
} from "@actions/workflow-parser";
export { convertActionTemplate, getActionSchema, type ActionTemplate } from "@actions/workflow-parser/actions/index";
export { TemplateContext, TemplateValidationErrors } from "@actions/workflow-parser/templates/template-context";
export { readTemplate } from "@actions/workflow-parser/templates/template-reader";
export { getWorkflowSchema } from "@actions/workflow-parser/workflows/workflow-schema";
export { YamlObjectReader } from "@actions/workflow-parser/workflows/yaml-object-reader";
export type { TemplateValidationError } from "@actions/workflow-parser/templates/template-validation-error";
export type { BasicExpressionToken, TemplateToken } from "@actions/workflow-parser/templates/tokens/index";
