import * as z from "zod";
import { json, parseJsonBody, validate } from "../../shared/http/rest";
import { APPROVAL_DECISIONS } from "../../shared/core/external-input";
import { resolveApproval } from "../../shared/run/resolve-approval";
import type { Route } from "./routes";
import { requireOwnedRun } from "../../shared/tenancy/guard";

const ApprovalBodySchema = z.lazy(() => z.object({ decision: z.enum(APPROVAL_DECISIONS) }).strict());

/** `POST /v1/runs/{runId}/approvals/{approvalId}` `{decision}`: 200, 404 unknown, 409 already resolved or expired. */
export const postApproval: Route = async (deps, { event, params, caller }) => {
  const { decision } = validate(ApprovalBodySchema, parseJsonBody(event));
  // Another tenant's run is not found (docs/security.md).
  await requireOwnedRun(deps.db, caller, params.runId);
  return json(200, { ok: true, ...(await resolveApproval(deps, params.approvalId, decision, params.runId)) });
};
