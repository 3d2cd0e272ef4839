// What a job sees of GitHub before its steps run: the `github` expression context and the event
// payload at GITHUB_EVENT_PATH (built for workflow_dispatch when the caller gives none).
import type { ExprValue } from "./expressions.js";
import type { RunContext } from "./executor.js";
import type { WorkflowSpec } from "./workflow.js";

function defaultGraphqlUrl(apiUrl: string): string {
  const u = apiUrl.replace(/\/$/, "");
  return u.endsWith("/api/v3") ? `${u.slice(0, -"/api/v3".length)}/api/graphql` : `${u}/graphql`;
}

export function refName(ref: string): { name: string; type: "branch" | "tag" | "" } {
  if (ref.startsWith("refs/heads/")) return { name: ref.slice("refs/heads/".length), type: "branch" };
  if (ref.startsWith("refs/tags/")) return { name: ref.slice("refs/tags/".length), type: "tag" };
  return { name: ref, type: "" };
}

export function buildEvent(context: RunContext, eventInputs: Record<string, string>): Record<string, unknown> {
  if (context.event) return context.event;
  const [owner, name] = context.repository.split("/");
  // The workflow_dispatch payload: inputs (all strings), ref, repository, sender, workflow.
  return {
    inputs: eventInputs,
    ref: context.ref,
    repository: {
      name,
      full_name: context.repository,
      owner: { login: owner },
      html_url: `${context.serverUrl.replace(/\/$/, "")}/${context.repository}`,
    },
    sender: { login: context.actor },
    workflow: context.workflowPath ?? "",
  };
}

export function githubContext(
  context: RunContext,
  wf: WorkflowSpec,
  jobId: string,
  workspace: string,
  eventPath: string,
  event: Record<string, unknown>,
): Record<string, ExprValue> {
  const { name: ref_name, type: ref_type } = refName(context.ref);
  const workflowName = wf.name ?? context.workflowPath ?? "workflow";
  // github.head_ref / base_ref: the pull request's branches, for pull_request events only.
  const pull = (context.eventName ?? "").startsWith("pull_request")
    ? (event.pull_request as { head?: { ref?: string }; base?: { ref?: string } } | undefined)
    : undefined;
  return {
    action: "",
    action_path: "",
    actor: context.actor,
    api_url: context.apiUrl,
    base_ref: pull?.base?.ref ?? "",
    event: event as ExprValue,
    event_name: context.eventName ?? "workflow_dispatch",
    event_path: eventPath,
    graphql_url: context.graphqlUrl ?? defaultGraphqlUrl(context.apiUrl),
    head_ref: pull?.head?.ref ?? "",
    job: jobId,
    ref: context.ref,
    ref_name,
    ref_type,
    repository: context.repository,
    repository_owner: context.repository.split("/")[0] ?? "",
    retention_days: "90",
    run_attempt: String(context.runAttempt ?? 1),
    run_id: String(context.runId),
    run_number: String(context.runNumber ?? 1),
    server_url: context.serverUrl,
    sha: context.sha,
    token: context.token,
    triggering_actor: context.triggeringActor ?? context.actor,
    workflow: workflowName,
    workflow_ref: `${context.repository}/${context.workflowPath ?? ""}@${context.ref}`,
    workspace,
  };
}
