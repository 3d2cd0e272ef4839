// Trims GitHub's official REST and webhook descriptions to what Forge's local GitHub serves.
//
// Usage: npx tsx scripts/trim-openapi.ts
//
// Installs the pinned @octokit/openapi and @octokit/openapi-webhooks into a temporary folder
// (they are ~400 MB installed, so they never become dependencies of Forge), keeps only the
// operations and webhook events listed below plus every component they reference, and writes
//   src/local-github/spec/api.json       – OpenAPI 3.0 subset (paths + components), with x-forge-source
//   src/local-github/spec/webhooks.json  – OpenAPI 3.1 webhooks subset, with x-forge-source
//   src/local-github/spec/routes.json    – every (method, path) → operationId of the full description, so
//                                  the simulator can answer 501 naming the operation it lacks.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const OPENAPI_VERSION = "23.0.2";
const WEBHOOKS_VERSION = "12.1.0";
const DESCRIPTION = "api.github.com.json";

/** Operations the simulator implements (and Forge uses). */
export const OPERATIONS = [
  "rate-limit/get",
  "apps/get-authenticated",
  "apps/create-from-manifest",
  "apps/list-installations",
  "apps/get-installation",
  "apps/create-installation-access-token",
  "apps/get-repo-installation",
  "apps/list-repos-accessible-to-installation",
  "repos/get",
  "repos/update",
  "repos/get-branch",
  "repos/list-branches",
  "repos/get-commit",
  "repos/get-content",
  "repos/create-or-update-file-contents",
  "repos/merge",
  "repos/compare-commits",
  "repos/get-collaborator-permission-level",
  "repos/create-commit-status",
  "repos/create-repo-ruleset",
  "repos/get-repo-rulesets",
  "repos/get-repo-ruleset",
  "repos/update-repo-ruleset",
  "repos/delete-repo-ruleset",
  "repos/get-branch-rules",
  "repos/get-org-rulesets",
  "repos/create-org-ruleset",
  "repos/get-org-ruleset",
  "repos/update-org-ruleset",
  "repos/delete-org-ruleset",
  "repos/get-branch-protection",
  "repos/update-branch-protection",
  "repos/delete-branch-protection",
  "repos/get-combined-status-for-ref",
  "repos/list-commit-statuses-for-ref",
  "git/create-blob",
  "git/get-blob",
  "git/create-tree",
  "git/get-tree",
  "git/create-commit",
  "git/get-commit",
  "git/get-ref",
  "git/list-matching-refs",
  "git/create-ref",
  "git/update-ref",
  "git/delete-ref",
  "pulls/create",
  "pulls/list",
  "pulls/get",
  "pulls/update",
  "pulls/merge",
  "pulls/update-branch",
  "pulls/merge-async",
  "pulls/get-merge-async-result",
  "pulls/list-files",
  "pulls/create-review",
  "pulls/list-reviews",
  "pulls/get-review",
  "pulls/list-comments-for-review",
  "pulls/list-review-comments",
  "pulls/create-reply-for-review-comment",
  "pulls/request-reviewers",
  "pulls/dismiss-review",
  "issues/create",
  "issues/get",
  "issues/update",
  "issues/list-for-repo",
  "issues/create-comment",
  "issues/list-comments",
  "issues/get-comment",
  "issues/update-comment",
  "issues/delete-comment",
  "issues/add-labels",
  "issues/set-labels",
  "issues/remove-label",
  "issues/list-labels-on-issue",
  "issues/create-label",
  "issues/get-label",
  "issues/list-labels-for-repo",
  "issues/list-sub-issues",
  "issues/add-sub-issue",
  "issues/remove-sub-issue",
  "issues/reprioritize-sub-issue",
  "issues/get-parent",
  "issues/list-dependencies-blocked-by",
  "issues/add-blocked-by-dependency",
  "issues/remove-dependency-blocked-by",
  "issues/list-dependencies-blocking",
  "reactions/create-for-issue",
  "reactions/create-for-issue-comment",
  "reactions/list-for-issue-comment",
  "checks/create",
  "checks/update",
  "checks/get",
  "checks/list-annotations",
  "checks/list-for-ref",
  "checks/rerequest-run",
  "checks/create-suite",
  "checks/get-suite",
  "checks/rerequest-suite",
  "checks/list-suites-for-ref",
  "checks/list-for-suite",
  "actions/list-repo-workflows",
  "actions/get-workflow",
  "actions/create-workflow-dispatch",
  "actions/list-workflow-runs",
  "actions/list-workflow-runs-for-repo",
  "actions/get-workflow-run",
  "actions/cancel-workflow-run",
  "actions/list-jobs-for-workflow-run",
  "actions/get-job-for-workflow-run",
  "actions/download-workflow-run-logs",
  "actions/download-job-logs-for-workflow-run",
  "actions/get-github-actions-permissions-repository",
  "actions/set-github-actions-permissions-repository",
  "actions/get-allowed-actions-repository",
  "actions/set-allowed-actions-repository",
  "actions/get-github-actions-default-workflow-permissions-repository",
  "actions/set-github-actions-default-workflow-permissions-repository",
  "actions/list-repo-secrets",
  "actions/get-repo-secret",
  "actions/get-repo-public-key",
  "actions/create-or-update-repo-secret",
  "actions/delete-repo-secret",
];

/** Webhook event/action pairs the simulator emits (keys of the description's `webhooks`). */
export const WEBHOOKS = [
  "push",
  "create",
  "delete",
  "pull-request-opened",
  "pull-request-synchronize",
  "pull-request-edited",
  "pull-request-ready-for-review",
  "pull-request-converted-to-draft",
  "pull-request-closed",
  "pull-request-reopened",
  "pull-request-labeled",
  "pull-request-unlabeled",
  "pull-request-auto-merge-enabled",
  "pull-request-auto-merge-disabled",
  "pull-request-enqueued",
  "pull-request-dequeued",
  "pull-request-review-submitted",
  "pull-request-review-dismissed",
  "issues-opened",
  "issues-edited",
  "issues-closed",
  "issues-reopened",
  "issues-labeled",
  "issues-unlabeled",
  "sub-issues-sub-issue-added",
  "sub-issues-sub-issue-removed",
  "sub-issues-parent-issue-added",
  "sub-issues-parent-issue-removed",
  "issue-dependencies-blocked-by-added",
  "issue-dependencies-blocked-by-removed",
  "issue-dependencies-blocking-added",
  "issue-dependencies-blocking-removed",
  "merge-group-checks-requested",
  "merge-group-destroyed",
  "issue-comment-created",
  "issue-comment-edited",
  "issue-comment-deleted",
  "check-run-created",
  "check-run-completed",
  "check-run-rerequested",
  "check-run-requested-action",
  "check-suite-requested",
  "check-suite-rerequested",
  "check-suite-completed",
  "status",
  "workflow-dispatch",
  "workflow-run-requested",
  "workflow-run-in-progress",
  "workflow-run-completed",
  "workflow-job-queued",
  "workflow-job-in-progress",
  "workflow-job-completed",
  "installation-created",
  "installation-deleted",
  "installation-suspend",
  "installation-unsuspend",
  "installation-repositories-added",
  "installation-repositories-removed",
];

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Obj = { [k: string]: Json };

/** Drops prose and examples (not needed to validate) but never a property *named* description. */
function strip(node: Json, parentKey = ""): Json {
  if (Array.isArray(node)) return node.map((n) => strip(n));
  if (node === null || typeof node !== "object") return node;
  const out: Obj = {};
  for (const [k, v] of Object.entries(node)) {
    const isSchemaMap = parentKey === "properties" || parentKey === "patternProperties";
    if (!isSchemaMap && (k === "description" || k === "example" || k === "examples") && (typeof v === "string" || k !== "description"))
      continue;
    if (!isSchemaMap && (k === "externalDocs" || k === "x-github-breaking-changes" || k === "tags")) continue;
    out[k] = strip(v, k);
  }
  return out;
}

function collectRefs(node: Json, found: Set<string>): void {
  if (Array.isArray(node)) return node.forEach((n) => collectRefs(n, found));
  if (node === null || typeof node !== "object") return;
  for (const [k, v] of Object.entries(node)) {
    if (k === "$ref" && typeof v === "string") found.add(v);
    else collectRefs(v, found);
  }
}

function resolvePointer(doc: Obj, ref: string): Json {
  const parts = ref
    .replace(/^#\//, "")
    .split("/")
    .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"));
  let cur: Json = doc;
  for (const p of parts) cur = (cur as Obj)[p] as Json;
  return cur;
}

/** Copies every component transitively referenced from `roots` into a fresh components object. */
function closeComponents(full: Obj, roots: Json): Obj {
  const components: Obj = {};
  const seen = new Set<string>();
  const queue = new Set<string>();
  collectRefs(roots, queue);
  while (queue.size > 0) {
    const [ref] = queue;
    queue.delete(ref!);
    if (seen.has(ref!)) continue;
    seen.add(ref!);
    if (!ref!.startsWith("#/components/")) throw new Error(`unexpected $ref ${ref}`);
    const [, , section, name] = ref!.split("/");
    if (section === "examples") continue; // examples were stripped from the roots
    const target = strip(resolvePointer(full, ref!), name);
    const sec = (components[section!] ??= {}) as Obj;
    sec[name!] = target;
    const more = new Set<string>();
    collectRefs(target, more);
    for (const m of more) if (!seen.has(m)) queue.add(m);
  }
  return components;
}

function main(): void {
  const root = join(dirname(fileURLToPath(import.meta.url)), "..");
  const outDir = join(root, "src/local-github/spec");
  const tmp = mkdtempSync(join(tmpdir(), "forge-openapi-"));
  try {
    execFileSync(
      "npm",
      [
        "install",
        "--prefix",
        tmp,
        "--no-save",
        "--ignore-scripts",
        "--no-audit",
        "--no-fund",
        `@octokit/openapi@${OPENAPI_VERSION}`,
        `@octokit/openapi-webhooks@${WEBHOOKS_VERSION}`,
      ],
      { stdio: "inherit" },
    );
    const api = JSON.parse(readFileSync(join(tmp, "node_modules/@octokit/openapi/generated", DESCRIPTION), "utf8")) as Obj;
    const hooks = JSON.parse(readFileSync(join(tmp, "node_modules/@octokit/openapi-webhooks/generated", DESCRIPTION), "utf8")) as Obj;

    // --- REST ---
    const wanted = new Set(OPERATIONS);
    const paths: Obj = {};
    const routes: Array<[string, string, string]> = [];
    for (const [p, item] of Object.entries(api.paths as Obj)) {
      for (const [method, op] of Object.entries(item as Obj)) {
        const id = (op as Obj).operationId;
        if (typeof id !== "string") continue;
        routes.push([method.toUpperCase(), p, id]);
        if (!wanted.has(id)) continue;
        wanted.delete(id);
        const kept = strip(op) as Obj;
        // Keep the documentation link: error bodies name it as GitHub's do.
        const docs = (op as Obj).externalDocs as Obj | undefined;
        if (docs?.url) kept["x-doc-url"] = docs.url;
        ((paths[p] ??= {}) as Obj)[method] = kept;
      }
    }
    if (wanted.size > 0) throw new Error(`operations missing from the description: ${[...wanted].join(", ")}`);
    const source = {
      package: "@octokit/openapi",
      version: OPENAPI_VERSION,
      file: `generated/${DESCRIPTION}`,
      info: (api.info as Obj).version ?? null,
    };
    const apiOut = { openapi: api.openapi, info: api.info, "x-forge-source": source, paths, components: closeComponents(api, paths) };

    // --- webhooks ---
    const allHooks = hooks.webhooks as Obj;
    const webhooks: Obj = {};
    for (const key of WEBHOOKS) {
      if (!(key in allHooks)) throw new Error(`webhook ${key} missing from the description`);
      webhooks[key] = strip(allHooks[key]!);
    }
    const hooksOut = {
      openapi: hooks.openapi,
      info: hooks.info,
      "x-forge-source": { package: "@octokit/openapi-webhooks", version: WEBHOOKS_VERSION, file: `generated/${DESCRIPTION}` },
      webhooks,
      components: closeComponents(hooks, webhooks),
    };

    mkdirSync(outDir, { recursive: true });
    writeFileSync(join(outDir, "api.json"), JSON.stringify(apiOut) + "\n");
    writeFileSync(join(outDir, "webhooks.json"), JSON.stringify(hooksOut) + "\n");
    routes.sort((a, b) => (a[1] + a[0]).localeCompare(b[1] + b[0]));
    writeFileSync(
      join(outDir, "routes.json"),
      JSON.stringify({ "x-forge-source": source, routes }, null, 0).replace(/\],\[/g, "],\n[") + "\n",
    );
    console.log(`wrote ${Object.keys(paths).length} paths, ${Object.keys(webhooks).length} webhooks, ${routes.length} routes to ${outDir}`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

main();
