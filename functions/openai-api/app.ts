/**
 * The OpenAI-compatible surface (OpenClaw's contract): chat completions,
 * responses, models, and retrieval of a completion/response by id (what a
 * 202 points at). A streaming Lambda behind API Gateway's
 * `responseTransferMode: STREAM`; everything it writes goes to a
 * ResponseSink, so the same code answers JSON and SSE.
 */
import type { APIGatewayProxyEvent, Context } from "aws-lambda";
import { admitRestCaller } from "../../shared/runtime/admit-rest-caller";
import type { Caller } from "../../shared/core/access";
import { getRun } from "../../shared/aws/runs";
import { owns } from "../../shared/tenancy/guard";
import { header, parseJsonBody } from "../../shared/http/rest";
import { createRouter, decodePathParams, requestPath } from "../../shared/http/router";
import { ApiError } from "../../shared/protocol/errors";
import { chatCompletion, responseResource, runIdOfChatId, runIdOfResponseId } from "../../shared/openai/objects";
import { readOutcome } from "../../shared/openai/run-service";
import type { AppDeps } from "../../shared/runtime/app-deps";
import { parseChat, parseResponses, runCompletion } from "./completions";
import { sendError, sendJson, type ResponseSink } from "./http";
import { getModel, listModels } from "./models";

type Handler = (deps: AppDeps, input: { event: APIGatewayProxyEvent; context: Context; params: Record<string, string>; caller: Caller }, sink: ResponseSink) => Promise<void>;

const ROUTER = createRouter<Handler>([
  { method: "GET", path: "/v1/models", route: (deps, _input, sink) => sendJson(sink, 200, listModels(deps)) },
  { method: "GET", path: "/v1/models/{id+}", route: (deps, { params }, sink) => sendJson(sink, 200, getModel(deps, params.id)) },
  { method: "POST", path: "/v1/chat/completions", route: (deps, input, sink) => runCompletion(deps, parseChat(parseJsonBody(input.event)), { ...input, body: undefined }, sink) },
  { method: "POST", path: "/v1/responses", route: (deps, input, sink) => runCompletion(deps, parseResponses(parseJsonBody(input.event)), { ...input, body: undefined }, sink) },
  { method: "GET", path: "/v1/chat/completions/{id}", route: getChatCompletion },
  { method: "GET", path: "/v1/responses/{id}", route: getResponse },
]);

/** `GET /v1/chat/completions/{id}`: 200 with the completion once the run ended, 202 while it runs. */
async function getChatCompletion(deps: AppDeps, { params, event, caller }: Parameters<Handler>[1], sink: ResponseSink): Promise<void> {
  const runId = runIdOfChatId(params.id);
  const outcome = runId && (await ownsRun(deps, caller, runId)) ? await readOutcome(deps.db, runId) : undefined;
  if (!outcome) throw new ApiError("NOT_FOUND", `No chat completion found with id '${params.id}'.`);
  const model = modelOf(event);
  if (outcome.status === "running") return sendJson(sink, 202, { id: params.id, object: "chat.completion", status: "in_progress", choices: [], run_id: outcome.runId, model }, { "retry-after": "2" });
  if (outcome.status !== "ok") return sendJson(sink, 200, { id: params.id, object: "chat.completion", status: outcome.status, choices: [], run_id: outcome.runId, model, error: { message: outcome.error ?? "", type: "server_error", code: outcome.status } });
  return sendJson(sink, 200, chatCompletion(outcome, model));
}

/** `GET /v1/responses/{id}`: the response resource; `status` says whether it is done (OpenAI's background mode). */
async function getResponse(deps: AppDeps, { params, event, caller }: Parameters<Handler>[1], sink: ResponseSink): Promise<void> {
  const runId = runIdOfResponseId(params.id);
  const outcome = runId && (await ownsRun(deps, caller, runId)) ? await readOutcome(deps.db, runId) : undefined;
  if (!outcome) throw new ApiError("NOT_FOUND", `Response with id '${params.id}' not found.`);
  return sendJson(sink, 200, responseResource(outcome, modelOf(event)));
}

/** A retrieval does not know the model name the caller used; the agent's name is what it ran as. */
const modelOf = (_event: APIGatewayProxyEvent) => "openclaw:main";

export function createOpenAIHandler(deps: AppDeps) {
  return async (event: APIGatewayProxyEvent, sink: ResponseSink, context: Context): Promise<void> => {
    try {
      await dispatch(deps, event, context, sink);
    } catch (error) {
      if (error instanceof ApiError) return sendError(sink, error);
      deps.log.error("unhandled OpenAI API error", { error: String(error), path: event.path });
      return sendError(sink, new ApiError("INTERNAL", "internal error"));
    }
  };
}

async function dispatch(deps: AppDeps, event: APIGatewayProxyEvent, context: Context, sink: ResponseSink): Promise<void> {
  const path = requestPath(event);
  const resolution = ROUTER.resolve(event.httpMethod, path);
  if (resolution.kind === "not-found") throw new ApiError("NOT_FOUND", `no route for ${event.httpMethod} ${path}`);
  // A wrong method is a 404 here, not the REST API's 405: OpenAI clients only know its 404 error body.
  if (resolution.kind === "method-not-allowed") throw new ApiError("NOT_FOUND", `method ${event.httpMethod} not allowed on ${path}`);
  // The tenant's key, as the REST API admits it (authorizer context, else the bearer key): runs belong to its tenant.
  const caller = await admitRestCaller(deps, event, event.httpMethod === "GET" ? "operator.read" : "operator.write").catch((error: unknown) => {
    if (error instanceof ApiError && error.code === "UNAUTHORIZED") throw new ApiError("UNAUTHORIZED", "Incorrect API key provided.", { openaiCode: "invalid_api_key" });
    throw error;
  });
  await resolution.route(deps, { event, context, params: decodePathParams(resolution.rawParams), caller }, sink);
}

/** Another tenant's run reads as missing (docs/security.md). */
async function ownsRun(deps: AppDeps, caller: Caller, runId: string): Promise<boolean> {
  const run = await getRun(deps.db, runId);
  return run !== undefined && owns(caller, run);
}
