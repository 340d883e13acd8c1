import { validate } from "../../../shared/http/rest";
import { ApprovalResolveParamsSchema } from "../../../shared/protocol/approval-frames";
import { resolveApproval } from "../../../shared/run/resolve-approval";
import type { Method } from "./types";
import { runIdOfApprovalId } from "../../../shared/aws/external-inputs";
import { requireOwnedRun } from "../../../shared/tenancy/guard";

/**
 * OpenClaw's `plugin.approval.resolve` / `exec.approval.resolve` `{id, decision}`:
 * the same resolution as REST `POST /v1/runs/{runId}/approvals/{approvalId}`
 * (the id names its run). 404 unknown, APPROVAL_CONFLICT when already resolved or expired.
 */
export const approvalResolveMethod: Method = async (deps, { params, caller }) => {
  const { id, decision } = validate(ApprovalResolveParamsSchema, params);
  // Another tenant's approval is as unknown as a made-up one.
  const runId = runIdOfApprovalId(id);
  if (caller && runId) await requireOwnedRun(deps.db, caller, runId);
  return { ok: true, ...(await resolveApproval(deps, id, decision)) };
};
