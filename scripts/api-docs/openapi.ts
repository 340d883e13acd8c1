/**
 * The OpenAPI 3.1 document of the whole REST API, generated from the zod
 * schemas the handlers validate with (requests) and the schemas of what they
 * answer (./rest-schemas.ts). `npm run docs:api` writes docs/openapi.json;
 * test/docs/api-documents.test.ts fails when the checked-in file is stale.
 */
import { ToolResultBodySchema } from "../../shared/protocol/client-tools";
import { APPROVAL_DECISIONS } from "../../shared/core/external-input";
import { OpenAPIRegistry, OpenApiGeneratorV31 } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";
import { AbortBodySchema, EventsQuerySchema } from "../../functions/rest-api/routes";
import { AgentRequestSchema, SessionKeySchema, WaitRequestSchema } from "../../shared/protocol/agent-request";
import { SERVER_VERSION } from "../../shared/protocol/frames";
import { ChatCompletionRequestSchema, ResponsesRequestSchema } from "../../shared/openai/request";

/** `result` is any JSON value (z.json() is recursive, which the generator cannot follow): text, or JSON sent as its JSON text. */
const ToolResultBodyDoc = ToolResultBodySchema.unwrap().extend({
  result: z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(z.unknown()), z.record(z.string(), z.unknown())]),
});
import * as R from "./rest-schemas";

// Named components: zod 4's `.meta({ id })`, created once per process (ids are global).
const Named = {
  AgentRequest: AgentRequestSchema.meta({ id: "AgentRequest" }),
  ApiError: R.ApiErrorSchema.meta({ id: "ApiError" }),
  OpenAIError: R.OpenAIErrorSchema.meta({ id: "OpenAIError" }),
  ChatCompletionRequest: ChatCompletionRequestSchema.meta({ id: "ChatCompletionRequest" }),
  ChatCompletion: R.ChatCompletionSchema.meta({ id: "ChatCompletion" }),
  ResponsesRequest: ResponsesRequestSchema.meta({ id: "ResponsesRequest" }),
  Response: R.ResponseObjectSchema.meta({ id: "Response" }),
};

const json = (schema: z.ZodType, description: string) => ({ description, content: { "application/json": { schema } } });
const errors = {
  400: json(Named.ApiError, "Invalid request (`INVALID_REQUEST`, with `details.issues`)"),
  401: json(Named.ApiError, "Missing or wrong bearer token"),
  413: json(Named.ApiError, "Body too large"),
};
const openAIErrors = {
  400: json(Named.OpenAIError, "invalid_request_error"),
  401: json(Named.OpenAIError, "authentication_error (`invalid_api_key`)"),
  404: json(Named.OpenAIError, "not_found_error (`model_not_found` for an unknown agent)"),
  429: json(Named.OpenAIError, "rate_limit_error: the session refused the message"),
  500: json(Named.OpenAIError, "the run failed (`x-should-retry: false`)"),
};
const runId = z.object({ runId: z.string().min(1) });
const sessionKey = z.object({ sessionKey: SessionKeySchema });
const openAIHeaders = z.object({
  "x-openclaw-agent-id": z.string().optional().meta({ description: "Agent (only `main` here); overrides `model`." }),
  "x-openclaw-session-key": SessionKeySchema.optional().meta({ description: "The session, verbatim; else from `user`, else a new one." }),
  prefer: z.string().optional().meta({ description: "RFC 7240 `wait=<seconds>`: how long a buffered answer waits before 202 (default 25, at most 240)." }),
  "idempotency-key": z.string().optional().meta({ description: "Same key, same run (a retry never starts a second run)." }),
});

export function buildOpenApiDocument() {
  const registry = new OpenAPIRegistry();
  registry.registerComponent("securitySchemes", "bearer", { type: "http", scheme: "bearer", description: "The deployment token or an API key." });
  const security = [{ bearer: [] }];

  registry.registerPath({ method: "get", path: "/health", operationId: "getHealth", summary: "Liveness (no auth)", responses: { 200: json(R.HealthSchema, "Up") } });
  registry.registerPath({ method: "get", path: "/openapi.json", operationId: "getOpenApiDocument", summary: "This document (no auth)", responses: { 200: { description: "The OpenAPI 3.1 document", content: { "application/json": { schema: z.record(z.string(), z.unknown()) } } } } });
  registry.registerPath({
    method: "post", path: "/v1/agent", operationId: "postAgent", summary: "Start a run (intake)", security,
    request: { body: { content: { "application/json": { schema: Named.AgentRequest } } } },
    responses: { 200: json(R.AcceptedSchema, "A repeated idempotency key (`cached: true`)"), 202: json(R.AcceptedSchema, "Accepted, queued, steered or collected"), ...errors, 409: json(Named.ApiError, "IDEMPOTENCY_CONFLICT"), 429: json(Named.ApiError, "SESSION_BUSY") },
  });
  registry.registerPath({
    method: "get", path: "/v1/runs/{runId}", operationId: "getRun", summary: "A run's status and result", security, request: { params: runId },
    responses: { 200: json(R.RunViewSchema, "The run"), 401: errors[401], 404: json(Named.ApiError, "Unknown run") },
  });
  registry.registerPath({
    method: "get", path: "/v1/runs/{runId}/events", operationId: "getRunEvents", summary: "The run's event log after a sequence number", security, request: { params: runId, query: EventsQuerySchema.unwrap() },
    responses: { 200: json(R.RunEventsPageSchema, "A page of events"), ...errors, 404: json(Named.ApiError, "Unknown run") },
  });
  registry.registerPath({
    method: "post", path: "/v1/runs/{runId}/wait", operationId: "waitRun", summary: "agent.wait over REST (at most 25 s)", security,
    request: { params: runId, body: { content: { "application/json": { schema: WaitRequestSchema } } } },
    responses: { 200: json(R.WaitResultSchema, "ok, error, or timeout (the run goes on)"), ...errors, 404: json(Named.ApiError, "Unknown run") },
  });
  registry.registerPath({
    method: "post", path: "/v1/runs/{runId}/abort", operationId: "abortRun", summary: "Abort a run", security,
    request: { params: runId, body: { content: { "application/json": { schema: AbortBodySchema } } } },
    responses: { 200: json(R.AbortOutcomeSchema, "Ended here, or had already ended"), 202: json(R.AbortOutcomeSchema, "Running: stopping (`aborting`)"), ...errors, 404: json(Named.ApiError, "Unknown run") },
  });
  registry.registerPath({
    method: "get", path: "/v1/sessions/{sessionKey}/history", operationId: "getSessionHistory", summary: "The session's transcript", security, request: { params: sessionKey },
    responses: { 200: json(R.HistorySchema, "The transcript"), ...errors, 404: json(Named.ApiError, "Unknown session") },
  });
  registry.registerPath({
    method: "post", path: "/v1/runs/{runId}/approvals/{approvalId}", operationId: "resolveApproval", summary: "Allow or deny a tool call waiting for approval (docs/approvals.md)", security,
    request: { params: z.object({ runId: z.string().min(1), approvalId: z.string().min(1) }), body: { content: { "application/json": { schema: z.object({ decision: z.enum(APPROVAL_DECISIONS) }).strict() } } } },
    responses: {
      200: json(z.object({ ok: z.literal(true) }).loose(), "Resolved: the run wakes up"),
      ...errors,
      404: json(Named.ApiError, "Unknown run or approval"),
      409: json(Named.ApiError, "Already resolved, or past its deadline (`APPROVAL_CONFLICT`)"),
    },
  });
  registry.registerPath({
    method: "post", path: "/v1/runs/{runId}/tool-results", operationId: "postToolResult", summary: "A client tool's result: the paused run continues with it (docs/client-tools.md)", security,
    request: { params: runId, body: { content: { "application/json": { schema: ToolResultBodyDoc } } } },
    responses: {
      200: json(z.object({ ok: z.literal(true), runId: z.string(), toolCallId: z.string() }), "Stored: the run wakes up"),
      ...errors,
      404: json(Named.ApiError, "Unknown run (or another tenant's)"),
      409: json(Named.ApiError, "Not waiting for this call, already answered, past its deadline, or the run ended (`APPROVAL_CONFLICT`, `details.reason`)"),
    },
  });
  registry.registerPath({
    method: "get", path: "/v1/sessions", operationId: "listSessions", summary: "The caller's sessions, newest first (web console)", security,
    request: { query: z.object({ limit: z.string().optional() }) },
    responses: { 200: json(z.object({ sessions: z.array(z.record(z.string(), z.unknown())) }).loose(), "Sessions"), ...errors },
  });
  registry.registerPath({
    method: "get", path: "/v1/runs/{runId}/trace", operationId: "getRunTrace", summary: "The loop path of a run: each attempt and the decision after it (web console)", security, request: { params: runId },
    responses: { 200: json(z.record(z.string(), z.unknown()), "The trace"), ...errors, 404: json(Named.ApiError, "Unknown run") },
  });
  registerOpenAIPaths(registry, security);
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: "3.1.0",
    info: {
      title: "serverless-agent-runner REST API",
      version: SERVER_VERSION,
      description: "Runs, events and sessions (docs/protocol.md) and the OpenAI-compatible API (docs/openai-api.md). WebSocket frames: docs/schemas/.",
    },
    servers: [{ url: "https://{apiId}.execute-api.{region}.amazonaws.com/prod", variables: { apiId: { default: "abc123defg" }, region: { default: "us-east-1" } } }, { url: "http://127.0.0.1:3000", description: "npm start" }],
  });
}

function registerOpenAIPaths(registry: OpenAPIRegistry, security: { bearer: never[] }[]): void {
  const sse = (schema: z.ZodType, description: string) => ({ description, content: { "text/event-stream": { schema } } });
  registry.registerPath({
    method: "post", path: "/v1/chat/completions", operationId: "createChatCompletion", summary: "OpenAI Chat Completions as one run", security, tags: ["OpenAI"],
    request: { headers: openAIHeaders, body: { content: { "application/json": { schema: Named.ChatCompletionRequest } } } },
    responses: {
      200: { description: "The completion (JSON), or with `stream: true` the SSE chunks ending with `data: [DONE]`", content: { "application/json": { schema: Named.ChatCompletion }, "text/event-stream": { schema: R.ChatCompletionChunkSchema } } },
      202: json(R.ChatCompletionPendingSchema, "The run outlived the wait window; poll `Location`"),
      ...openAIErrors,
      504: json(Named.OpenAIError, "the run timed out"),
    },
  });
  registry.registerPath({
    method: "get", path: "/v1/chat/completions/{id}", operationId: "getChatCompletion", summary: "A completion by id (where a 202 points)", security, tags: ["OpenAI"], request: { params: z.object({ id: z.string() }) },
    responses: { 200: json(Named.ChatCompletion, "The run ended"), 202: json(R.ChatCompletionPendingSchema, "Still running"), 401: openAIErrors[401], 404: openAIErrors[404] },
  });
  registry.registerPath({
    method: "post", path: "/v1/responses", operationId: "createResponse", summary: "OpenAI Responses as one run", security, tags: ["OpenAI"],
    request: { headers: openAIHeaders, body: { content: { "application/json": { schema: Named.ResponsesRequest } } } },
    responses: {
      200: { description: "The response, or with `stream: true` its typed SSE events", content: { "application/json": { schema: Named.Response }, "text/event-stream": { schema: z.object({ type: z.string(), sequence_number: z.number().int() }).loose() } } },
      202: json(Named.Response, "`status: in_progress`: poll `Location`"),
      ...openAIErrors,
      500: json(Named.Response, "`status: failed`"),
    },
  });
  registry.registerPath({
    method: "get", path: "/v1/responses/{id}", operationId: "getResponse", summary: "A response by id (`status` says whether it is done)", security, tags: ["OpenAI"], request: { params: z.object({ id: z.string() }) },
    responses: { 200: json(Named.Response, "The response"), 401: openAIErrors[401], 404: openAIErrors[404] },
  });
  registry.registerPath({ method: "get", path: "/v1/models", operationId: "listModels", summary: "The agent and its models", security, tags: ["OpenAI"], responses: { 200: json(R.ModelListSchema, "Models"), 401: openAIErrors[401] } });
  registry.registerPath({
    method: "get", path: "/v1/models/{id}", operationId: "getModel", summary: "One model", security, tags: ["OpenAI"], request: { params: z.object({ id: z.string() }) },
    responses: { 200: json(R.ModelSchema, "The model"), 401: openAIErrors[401], 404: openAIErrors[404] },
  });
}
