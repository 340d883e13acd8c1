/**
 * JSON Schemas (draft 2020-12) of every WebSocket frame, from the zod
 * schemas the ws-api handler validates with (requests: each method's
 * params) and schemas of what it sends (responses, events). Written to
 * docs/schemas/ by `npm run docs:api`; test/docs/api-documents.test.ts fails
 * when they are stale.
 */
import { ApprovalResolveParamsSchema } from "../../shared/protocol/approval-frames";
import { ToolResultParamsSchema } from "../../shared/protocol/client-tools";
import { z } from "zod";
import { WaitParamsSchema } from "../../functions/ws-api/methods/agent";
import { ConnectParamsSchema } from "../../functions/ws-api/methods/connect";
import { AbortParamsSchema, ChatAbortParamsSchema, ReplayParamsSchema } from "../../functions/ws-api/methods/runs";
import { HistoryParamsSchema, ListParamsSchema, SessionParamsSchema, SubscribeParamsSchema } from "../../functions/ws-api/methods/sessions";
import { ChatHistoryParamsSchema, ChatSendParamsSchema } from "../../functions/ws-api/methods/chat";
import { CommandsListParamsSchema, ConfigGetParamsSchema, ModelsListParamsSchema, StatusParamsSchema } from "../../functions/ws-api/methods/catalog";
import { SessionsDescribeParamsSchema, SessionsPatchParamsSchema, SessionsResetParamsSchema, SessionsResolveParamsSchema } from "../../functions/ws-api/methods/session-control";
import { EVENT_STREAMS } from "../../shared/aws/event-log";
import { ERROR_CODES } from "../../shared/protocol/errors";
import { RequestFrameSchema } from "../../shared/protocol/frames";
import { WsAgentParamsSchema } from "../../shared/protocol/ws-agent";

const request = (method: string, params: z.ZodType) => RequestFrameSchema.unwrap().extend({ method: z.literal(method), params });

/** Params of every method with a route (infra/routes.ts WS_METHOD_ROUTES). */
export const WS_REQUESTS: Record<string, z.ZodType> = {
  connect: request("connect", ConnectParamsSchema),
  agent: request("agent", WsAgentParamsSchema),
  "agent.wait": request("agent.wait", WaitParamsSchema),
  "agents.list": request("agents.list", z.object({}).loose().optional()),
  "sessions.subscribe": request("sessions.subscribe", SubscribeParamsSchema.optional()),
  "sessions.unsubscribe": request("sessions.unsubscribe", SessionParamsSchema),
  "sessions.list": request("sessions.list", ListParamsSchema.optional()),
  "sessions.history": request("sessions.history", HistoryParamsSchema),
  "runs.abort": request("runs.abort", AbortParamsSchema),
  "chat.abort": request("chat.abort", ChatAbortParamsSchema),
  "events.replay": request("events.replay", ReplayParamsSchema),
  "plugin.approval.resolve": request("plugin.approval.resolve", ApprovalResolveParamsSchema),
  "exec.approval.resolve": request("exec.approval.resolve", ApprovalResolveParamsSchema),
  "tools.result": request("tools.result", ToolResultParamsSchema),
  "chat.send": request("chat.send", ChatSendParamsSchema),
  "chat.history": request("chat.history", ChatHistoryParamsSchema),
  "sessions.resolve": request("sessions.resolve", SessionsResolveParamsSchema),
  "sessions.describe": request("sessions.describe", SessionsDescribeParamsSchema),
  "sessions.reset": request("sessions.reset", SessionsResetParamsSchema),
  "sessions.patch": request("sessions.patch", SessionsPatchParamsSchema),
  "models.list": request("models.list", ModelsListParamsSchema.optional()),
  "commands.list": request("commands.list", CommandsListParamsSchema.optional()),
  status: request("status", StatusParamsSchema.optional()),
  "config.get": request("config.get", ConfigGetParamsSchema.optional()),
};

const ErrorSchema = z.object({ code: z.enum(ERROR_CODES), message: z.string(), details: z.record(z.string(), z.unknown()).optional() });

export const ResponseFrameSchema = z.union([
  z.object({ type: z.literal("res"), id: z.string(), ok: z.literal(true), payload: z.unknown() }),
  z.object({ type: z.literal("res"), id: z.string().nullable(), ok: z.literal(false), error: ErrorSchema, payload: z.unknown().optional() }),
]);

const RunEventPayload = z.object({
  runId: z.string(),
  sessionKey: z.string(),
  agentId: z.string(),
  seq: z.number().int().min(1),
  ts: z.number(),
  stream: z.enum(EVENT_STREAMS),
  data: z.record(z.string(), z.unknown()),
});

const ChatPayload = z.object({
  runId: z.string(),
  sessionKey: z.string(),
  agentId: z.string(),
  seq: z.number().int().min(1),
  state: z.enum(["delta", "final", "error", "aborted"]),
  deltaText: z.string().optional(),
  replace: z.boolean().optional(),
  stopReason: z.string().optional(),
  errorMessage: z.string().optional(),
  message: z.object({ role: z.literal("assistant"), content: z.array(z.object({ type: z.literal("text"), text: z.string() })), timestamp: z.number() }).optional(),
});

const event = (name: string, payload: z.ZodType, seq: boolean) =>
  z.object({ type: z.literal("event"), event: z.literal(name), payload, ...(seq ? { seq: z.number().int().min(1).optional() } : {}) });

export const WS_EVENTS: Record<string, z.ZodType> = {
  "connect.challenge": event("connect.challenge", z.object({ nonce: z.string(), ts: z.number() }), false),
  agent: event("agent", RunEventPayload, true),
  chat: event("chat", ChatPayload, true),
  chunk: event("chunk", z.object({ chunkId: z.string(), index: z.number().int().min(0), count: z.number().int().min(1), data: z.string() }), true),
};

/** File name -> JSON Schema. */
export function buildWsSchemas(): Record<string, unknown> {
  const schemas: Record<string, unknown> = {};
  const put = (file: string, title: string, schema: z.ZodType) => {
    schemas[file] = { $id: `https://serverless-agent-runner.local/schemas/${file}`, title, ...z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) };
  };
  for (const [method, schema] of Object.entries(WS_REQUESTS)) put(`ws-request.${method}.json`, `WebSocket request: ${method}`, schema);
  put("ws-response.json", "WebSocket response (res)", ResponseFrameSchema);
  for (const [name, schema] of Object.entries(WS_EVENTS)) put(`ws-event.${name}.json`, `WebSocket event: ${name}`, schema);
  return schemas;
}
