/**
 * Closing a Change Request's issue rejects the CR, so it counts only from a person with write access
 * — who could `/forge reject` it as well. The App opened the issue, so besides it only people with
 * triage access or more (or another App) can close it; a close by anyone without write access is
 * undone, and the issue says so once.
 */
import type { GitHubPort } from "../github/port.js";
import { WRITE_PERMISSIONS } from "./commands.js";

/** Whether the close of CR `crId`'s issue by `closer` rejects it; if not, the issue is reopened and told why (once). */
export async function crCloseCounts(
  port: GitHubPort,
  issue: number,
  runId: string,
  crId: string,
  closer: string | undefined,
): Promise<boolean> {
  const permission = closer ? await port.permission(closer) : "none";
  if (WRITE_PERMISSIONS.has(permission)) return true;
  await port.updateIssue(issue, { state: "open" });
  const note = `<!-- forge:comment ${runId} cr-close-refused:${crId} -->`;
  if ((await port.findComment(issue, note)) === null)
    await port.createComment(
      issue,
      `Forge reopened this Change Request: closing it rejects it, and that needs write access to this repository (${closer ? `@${closer} has \`${permission}\`` : "GitHub does not say who closed it"}). A person with write access can close it or comment \`/forge reject\`.\n\n${note}`,
    );
  return false;
}
