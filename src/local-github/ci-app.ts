// Another App on a repository, as a CI service is on GitHub (CircleCI's, Buildkite's, a Jenkins
// server's GitHub App): its own registration, installation and token, reporting on commits through
// the Checks API ("Write permission for the Checks API is only available to GitHub Apps",
// docs.github.com/rest/checks/runs) and the commit statuses API (docs.github.com/rest/commits/statuses).
// It acts through the REST API with its installation token, so every rule applies to it as to any
// App: validation, permissions, the webhooks its reports send (domain/check-events.ts), and how
// required status checks count them (`app_id` / `integration_id`, branch-protection.ts).
import type { ApiAnswer, Control } from "./control.js";

export interface CiAppOptions {
  /** The account it is installed on. */
  account: string;
  /** Its slug (default "ci"); its bot is `<slug>[bot]`. */
  slug?: string;
  /** The repositories of `account` it is installed on (default: all). */
  repositories?: "all" | string[];
  /** Where its webhooks go (default: none — it only reports). */
  webhookUrl?: string;
  webhookSecret?: string | null;
}

/** What a check run reports: its state, and what a person (or Forge) reads of it. */
export interface CiCheckFields {
  status?: "queued" | "in_progress" | "completed";
  conclusion?: "success" | "failure" | "neutral" | "cancelled" | "timed_out" | "action_required" | "skipped";
  title?: string;
  summary?: string;
  text?: string;
  annotations?: Array<{
    path: string;
    start_line: number;
    end_line: number;
    annotation_level: "notice" | "warning" | "failure";
    message: string;
  }>;
  detailsUrl?: string;
}

export interface CiApp {
  id: number;
  slug: string;
  installationId: number;
  /** A new installation token (an hour, as GitHub's). */
  token(): string;
  /** Creates a check run named `name` on `sha` of `fullName`; its id. */
  checkRun(fullName: string, sha: string, name: string, fields?: CiCheckFields): Promise<number>;
  /** Updates one of its check runs (a conclusion completes it). */
  updateCheckRun(fullName: string, id: number, fields: CiCheckFields): Promise<void>;
  /** Posts a commit status of `context` on `sha`. */
  status(
    fullName: string,
    sha: string,
    context: string,
    state: "pending" | "success" | "failure" | "error",
    fields?: { description?: string; targetUrl?: string },
  ): Promise<void>;
}

function checkBody(fields: CiCheckFields): Record<string, unknown> {
  const output =
    fields.title !== undefined || fields.summary !== undefined
      ? {
          output: {
            title: fields.title ?? "",
            summary: fields.summary ?? "",
            ...(fields.text !== undefined ? { text: fields.text } : {}),
            ...(fields.annotations ? { annotations: fields.annotations } : {}),
          },
        }
      : {};
  return {
    ...(fields.status ? { status: fields.status } : {}),
    ...(fields.conclusion ? { conclusion: fields.conclusion } : {}),
    ...(fields.detailsUrl ? { details_url: fields.detailsUrl } : {}),
    ...output,
  };
}

function ok(a: ApiAnswer, what: string): ApiAnswer {
  if (a.status >= 300) throw new Error(`${what}: ${a.status} ${JSON.stringify(a.body)}`);
  return a;
}

/** Registers and installs a CI App (Checks and Commit statuses write; no events unless a webhook URL is given). */
export function createCiApp(control: Control, o: CiAppOptions): CiApp {
  const slug = o.slug ?? "ci";
  const app = control.registerApp({
    slug,
    name: slug,
    // It never authenticates as the App (no JWT): its installation token is minted directly.
    publicKeyPem: "",
    webhookUrl: o.webhookUrl ?? null,
    webhookSecret: o.webhookSecret ?? null,
    permissions: { checks: "write", statuses: "write", contents: "read" },
    events: [],
  });
  const installationId = control.install(app.id, o.account, o.repositories ?? "all").id;
  let token: string | undefined;
  const call = (method: string, path: string, body?: unknown) =>
    control.apiWith((token ??= control.installationToken(installationId)), method, path, body);
  return {
    id: app.id,
    slug,
    installationId,
    token: () => control.installationToken(installationId),
    async checkRun(fullName, sha, name, fields = {}) {
      const a = ok(await call("POST", `/repos/${fullName}/check-runs`, { name, head_sha: sha, ...checkBody(fields) }), `check run ${name}`);
      return (a.body as { id: number }).id;
    },
    async updateCheckRun(fullName, id, fields) {
      ok(await call("PATCH", `/repos/${fullName}/check-runs/${id}`, checkBody(fields)), `check run ${id}`);
    },
    async status(fullName, sha, context, state, fields = {}) {
      ok(
        await call("POST", `/repos/${fullName}/statuses/${sha}`, {
          state,
          context,
          ...(fields.description !== undefined ? { description: fields.description } : {}),
          ...(fields.targetUrl !== undefined ? { target_url: fields.targetUrl } : {}),
        }),
        `status ${context}`,
      );
    },
  };
}
