import { getRun } from "../../../shared/aws/runs";
import { validate } from "../../../shared/http/rest";
import { ApiError } from "../../../shared/protocol/errors";
import { resultText, ToolResultParamsSchema } from "../../../shared/protocol/client-tools";
import { resolveClientToolResult } from "../../../shared/run/resolve-client-tool";
import { requireOwnedRun } from "../../../shared/tenancy/guard";
import type { Method } from "./types";

/**
 * `tools.result {runId, toolCallId, result, isError?}`: a client tool's
 * result, the same resolution as REST `POST /v1/runs/{runId}/tool-results`
 * (NOT_FOUND for an unknown or another tenant's run, APPROVAL_CONFLICT for a
 * call not waiting, already answered or expired).
 */
export const toolsResultMethod: Method = async (deps, { params, caller }) => {
  const { runId, toolCallId, result, isError } = validate(ToolResultParamsSchema, params);
  // Another tenant's run is as unknown as a made-up one.
  const run = caller ? await requireOwnedRun(deps.db, caller, runId) : await getRun(deps.db, runId);
  if (!run) throw new ApiError("NOT_FOUND", `run ${runId} not found`);
  const resolved = await resolveClientToolResult(deps, run, toolCallId, resultText(result), isError ?? false);
  return { ok: true, runId: resolved.runId, toolCallId: resolved.toolCallId };
};
