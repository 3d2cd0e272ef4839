/** The App's webhook handlers, one per event (or pair of events), registered on a Probot instance. */
import type { Probot } from "probot";
import type { AppContext } from "../context.js";
import { guard } from "../guard.js";
import { onChecksDone } from "./checks-done.js";
import { onCheckRun } from "./check-run.js";
import { onInstallation } from "./installation.js";
import { onIssueComment } from "./issue-comment.js";
import { onIssues } from "./issues.js";
import { onIssueDependencies, onSubIssues } from "./issue-tree.js";
import { onMergeGroup } from "./merge-group.js";
import { onPullRequest } from "./pull-request.js";
import { onPullRequestReview } from "./pull-request-review.js";
import { onPush } from "./push.js";
import { onWorkflowJob, onWorkflowRun } from "./workflow.js";

export function registerHandlers(app: Probot, ctx: AppContext): void {
  app.on("push", guard(ctx, app, onPush));
  app.on("pull_request", guard(ctx, app, onPullRequest));
  app.on("pull_request_review", guard(ctx, app, onPullRequestReview));
  app.on("workflow_run", guard(ctx, app, onWorkflowRun));
  app.on("workflow_job", guard(ctx, app, onWorkflowJob));
  app.on("check_run", guard(ctx, app, onCheckRun));
  app.on("issue_comment", guard(ctx, app, onIssueComment));
  app.on("issues", guard(ctx, app, onIssues));
  app.on("sub_issues", guard(ctx, app, onSubIssues));
  app.on("issue_dependencies", guard(ctx, app, onIssueDependencies));
  app.on("check_suite", guard(ctx, app, onChecksDone));
  app.on("status", guard(ctx, app, onChecksDone));
  app.on("merge_group", guard(ctx, app, onMergeGroup));
  // Not guarded: the App's view of its installations follows every such event, redelivered or not.
  app.on("installation", (context) => onInstallation(ctx, context));
  app.on("installation_repositories", (context) => onInstallation(ctx, context));
}
