import { json, parseJsonBody, validate } from "../../shared/http/rest";
import { resultText, ToolResultBodySchema } from "../../shared/protocol/client-tools";
import { resolveClientToolResult } from "../../shared/run/resolve-client-tool";
import { requireOwnedRun } from "../../shared/tenancy/guard";
import type { Route } from "./routes";

/**
 * `POST /v1/runs/{runId}/tool-results` `{toolCallId, result, isError?}`: a
 * client tool's result (docs/client-tools.md). 200; 404 unknown run (or
 * another tenant's); 409 `APPROVAL_CONFLICT` for a call the run does not wait
 * for (`unknown_tool_call`), already answered (`already_resolved`) or past its
 * deadline (`expired`), or when the run has ended (`run_ended`).
 */
export const postToolResult: Route = async (deps, { event, params, caller }) => {
  const body = validate(ToolResultBodySchema, parseJsonBody(event));
  const run = await requireOwnedRun(deps.db, caller, params.runId);
  const resolved = await resolveClientToolResult(deps, run, body.toolCallId, resultText(body.result), body.isError ?? false);
  return json(200, { ok: true, runId: resolved.runId, toolCallId: resolved.toolCallId });
};
