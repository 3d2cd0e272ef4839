// REST operations of the local GitHub, keyed by GitHub's operationId. Each handler reproduces the
// documented behaviour of the operation (docs.github.com/rest/…, cited per group) over the
// simulator's state and bare repositories.
//
// context.ts holds the request context, the result and the helpers the groups share; each group of
// operations is a file of its own.
import { ZERO } from "../domain/index.js";
import { actionsPermissionsHandlers, workflowPermissionsHandlers } from "../actions-permissions.js";
import { branchProtectionHandlers } from "../branch-protection.js";
import { orgRulesetHandlers } from "../org-rulesets.js";
import { repoSettingsHandlers } from "../repo-settings.js";
import { rulesetHandlers } from "../rulesets.js";
import { reviewHandlers } from "../reviews.js";
import { secretHandlers } from "../secrets.js";
import { appHandlers } from "./apps.js";
import { checkHandlers } from "./checks.js";
import type { Handler } from "./context.js";
import { gitDatabaseHandlers } from "./git-database.js";
import { issueHandlers } from "./issues.js";
import { issueTreeHandlers } from "./issue-tree.js";
import { mergeAsyncHandlers } from "./merge-async.js";
import { pullHandlers } from "./pulls.js";
import { repoHandlers } from "./repos.js";
import { updateBranchHandlers } from "./update-branch.js";

export type { Handler, RestCtx, Result } from "./context.js";

export const handlers: Record<string, Handler> = {
  ...appHandlers,
  ...repoHandlers,
  ...gitDatabaseHandlers,
  ...pullHandlers,
  ...updateBranchHandlers,
  ...issueHandlers,
  ...issueTreeHandlers,
  ...mergeAsyncHandlers,
  ...checkHandlers,
  ...rulesetHandlers,
  ...orgRulesetHandlers,
  ...branchProtectionHandlers,
  ...actionsPermissionsHandlers,
  ...workflowPermissionsHandlers,
  ...repoSettingsHandlers,
  ...secretHandlers,
  ...reviewHandlers,
};
export { ZERO };
