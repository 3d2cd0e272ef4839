/**
 * `check_run`: a writer asked for an attempt's check run again (retry) or pressed one of its buttons;
 * or another App's check run completed (the repository's CI: ./checks-done.ts).
 */
import type { Context } from "probot";
import { WRITE_PERMISSIONS } from "../commands.js";
import type { AppContext } from "../context.js";
import { onCheckRunDone } from "./checks-done.js";

export async function onCheckRun(ctx: AppContext, context: Context<"check_run">): Promise<void> {
  const { payload } = context;
  if (payload.action === "completed") return onCheckRunDone(ctx, context);
  if (payload.action !== "rerequested" && payload.action !== "requested_action") return;
  if (payload.sender.type === "Bot") return;
  const m = /^([^/]+)\/([^/]+)\/(\d+)$/.exec(payload.check_run.external_id ?? "");
  if (!m) return;
  const rt = await ctx.rtOf(context);
  if (!WRITE_PERMISSIONS.has(await rt.port.permission(payload.sender.login))) return;
  const identifier =
    payload.action === "requested_action"
      ? (payload as { requested_action?: { identifier: string } }).requested_action?.identifier
      : "retry";
  const command = identifier === "approve" ? "approve" : "retry";
  await ctx.apply(rt, m[1]!, [{ kind: "command", command, actor: payload.sender.login, taskId: m[2]! }]);
}
