import type { Caller } from "../../shared/core/access";
/**
 * `POST /v1/chat/completions` and `POST /v1/responses`: one run each, then
 * either the answer as JSON (waiting at most the REST window, else 202 with
 * a `Location` to poll), or the run's events as SSE until it ends.
 */
import type { APIGatewayProxyEvent, Context } from "aws-lambda";
import { header } from "../../shared/http/rest";
import { ApiError } from "../../shared/protocol/errors";
import { SessionKeySchema } from "../../shared/protocol/agent-request";
import { DEFAULT_AGENT_ID } from "../../shared/protocol/limits";
import { validate } from "../../shared/protocol/validate";
import { chatConversation, buildAgentPrompt, responsesConversation, type ConversationEntry } from "../../shared/openai/prompt";
import { ChatCompletionRequestSchema, ResponsesRequestSchema, type ChatCompletionRequest, type ResponsesRequest } from "../../shared/openai/request";
import { agentIdFor, AGENT_ID_HEADER, modelOverrideFor, SESSION_KEY_HEADER, sessionFor } from "../../shared/openai/routing";
import { chatCompletion, chatCompletionPending, CHAT_ID_PREFIX, RESPONSE_ID_PREFIX, responseResource, runIdOfResponseId, type RunOutcome } from "../../shared/openai/objects";
import { getRun } from "../../shared/aws/runs";
import { followRun, startOpenAIRun } from "../../shared/openai/run-service";
import { ChatStreamEncoder, ResponsesStreamEncoder } from "../../shared/openai/stream";
import type { AppDeps } from "../../shared/runtime/app-deps";
import { randomUUID } from "node:crypto";
import { sendJson, SSE_HEADERS, type ResponseSink } from "./http";
import { clientToolsOf, type ToolSpec } from "./tools";
import { resumeWithToolResults } from "../../shared/openai/client-tool-turn";
import { abortRun } from "../../shared/run/abort";

/** API Gateway's REST integration limit is 29 s: by default a buffered answer comes before it. */
export const REST_WINDOW_MS = 25_000;
/**
 * `Prefer: wait=` may ask for longer (the streaming integration has no 29 s
 * cut), but not past API Gateway's 5-minute idle timeout of a silent stream.
 */
export const MAX_PREFERRED_WAIT_MS = 240_000;
/** A stream ends this long before the function's own deadline, cleanly. */
const STREAM_MARGIN_MS = 5_000;
/** SSE comment sent while the run is quiet, so proxies keep the connection. */
const KEEPALIVE = ": keep-alive\n\n";
const KEEPALIVE_EVERY_MS = 10_000;

export interface RequestContext {
  event: APIGatewayProxyEvent;
  context: Context;
  body: unknown;
  /** The admitted key (shared/runtime/admit-rest-caller.ts): the run is its tenant's. */
  caller?: Caller;
}

interface Encoder {
  start(): string;
  onEvent(event: Parameters<ChatStreamEncoder["onEvent"]>[0]): string;
  finish(outcome: RunOutcome): string;
}

/** What differs between the two endpoints. */
interface Flavor {
  prefix: "openai" | "openresponses";
  model: string;
  user?: string;
  stream: boolean;
  conversation: { system: string[]; entries: ConversationEntry[] };
  tools: ToolSpec;
  /** Responses `previous_response_id`: continue that run's session. */
  previousResponseId?: string;
  /** The next request can find a one-off session by itself (Responses: `previous_response_id`). */
  resumableBySelf: boolean;
  idOf(runId: string): string;
  /** Relative to the request URL: `completions/<id>` from `/v1/chat/completions`. */
  location(runId: string): string;
  answer(outcome: RunOutcome): { status: number; body: unknown };
  pending(runId: string, acceptedAt: number, location: string): unknown;
  encoder(runId: string, acceptedAt: number): Encoder;
}

export function chatFlavor(body: ChatCompletionRequest): Flavor {
  return {
    prefix: "openai",
    resumableBySelf: false,
    model: body.model,
    user: body.user,
    stream: body.stream === true,
    conversation: chatConversation(body.messages),
    tools: { tools: (body.tools ?? []).map((t) => ({ name: t.function.name, description: t.function.description, parameters: t.function.parameters ?? {} })), choice: chatChoice(body.tool_choice) },
    idOf: (runId) => `${CHAT_ID_PREFIX}${runId}`,
    location: (runId) => `completions/${CHAT_ID_PREFIX}${runId}`,
    answer: (outcome) => (outcome.status === "ok" ? { status: 200, body: chatCompletion(outcome, body.model) } : failure(outcome)),
    pending: (runId, acceptedAt, location) => chatCompletionPending(runId, acceptedAt, body.model, location),
    encoder: (runId, acceptedAt) => new ChatStreamEncoder(`${CHAT_ID_PREFIX}${runId}`, body.model, acceptedAt, body.stream_options?.include_usage === true),
  };
}

export function responsesFlavor(body: ResponsesRequest): Flavor {
  const functionTools = (body.tools ?? []).flatMap((t) => ((t as { type: string }).type === "function" ? [t as { name: string; description?: string | null; parameters?: Record<string, unknown> | null }] : []));
  return {
    prefix: "openresponses",
    resumableBySelf: true,
    model: body.model,
    user: body.user,
    ...(body.previous_response_id ? { previousResponseId: body.previous_response_id } : {}),
    stream: body.stream === true,
    conversation: responsesConversation(body.input as never, body.instructions),
    tools: { tools: functionTools.map((t) => ({ name: t.name, description: t.description ?? undefined, parameters: t.parameters ?? {} })), choice: responsesChoice(body.tool_choice) },
    idOf: (runId) => `${RESPONSE_ID_PREFIX}${runId}`,
    location: (runId) => `responses/${RESPONSE_ID_PREFIX}${runId}`,
    // A failed run is still a response resource (status "failed"), with a 5xx as OpenClaw answers.
    answer: (outcome) => ({ status: outcome.status === "ok" ? 200 : 500, body: responseResource(outcome, body.model) }),
    pending: (runId, acceptedAt) => responseResource({ runId, status: "running", createdAtMs: acceptedAt, text: "", usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, pendingToolCalls: [] }, body.model),
    encoder: (runId, acceptedAt) => new ResponsesStreamEncoder(runId, body.model, acceptedAt),
  };
}

function chatChoice(choice: ChatCompletionRequest["tool_choice"]): ToolSpec["choice"] {
  if (choice === undefined || typeof choice === "string") return choice;
  return { name: choice.function.name };
}

function responsesChoice(choice: ResponsesRequest["tool_choice"]): ToolSpec["choice"] {
  if (choice === undefined || typeof choice === "string") return choice;
  return { name: choice.name };
}

function failure(outcome: RunOutcome): { status: number; body: unknown } {
  const status = outcome.status === "timeout" ? 504 : 500;
  return { status, body: { error: { message: outcome.error ?? `the run ended ${outcome.status}`, type: "server_error", param: null, code: outcome.status } } };
}

export const parseChat = (body: unknown) => chatFlavor(validate(ChatCompletionRequestSchema, body));
export const parseResponses = (body: unknown) => responsesFlavor(validate(ResponsesRequestSchema, body));

export async function runCompletion(deps: AppDeps, flavor: Flavor, input: RequestContext, sink: ResponseSink): Promise<void> {
  const { event, context } = input;
  const agentId = agentIdFor(flavor.model, header(event, AGENT_ID_HEADER));
  if (agentId !== DEFAULT_AGENT_ID) throw new ApiError("NOT_FOUND", `unknown agent '${agentId}' (this runner has one agent: main)`, { openaiCode: "model_not_found", param: "model" });
  const sessionHeader = header(event, SESSION_KEY_HEADER) ?? (await previousSession(deps, flavor.previousResponseId));
  if (sessionHeader !== undefined) validate(SessionKeySchema, sessionHeader.trim());
  const session = sessionFor({ agentId, prefix: flavor.prefix, headerValue: sessionHeader, user: flavor.user, freshId: randomUUID() });
  const prompt = buildAgentPrompt(flavor.conversation, session.stable);
  const clientTools = clientToolsOf(flavor.tools);
  // Results for the client tool calls a paused run of this session waits for: that run continues.
  const resumed = session.stable ? await resumeWithToolResults(deps, session.sessionKey, flavor.conversation.entries, input.caller) : undefined;
  if (!resumed && !prompt.message.trim()) throw new ApiError("INVALID_REQUEST", "Missing user message in the request.", { param: flavor.prefix === "openai" ? "messages" : "input" });
  const idempotencyKey = header(event, "idempotency-key");
  const model = modelOverrideFor(flavor.model);
  const accepted =
    resumed ??
    (await startOpenAIRun(deps, {
      sessionKey: session.sessionKey,
      message: prompt.message,
      extraSystemPrompt: prompt.extraSystemPrompt,
      model,
      ...(clientTools ? { clientTools } : {}),
      ...(idempotencyKey ? { idempotencyKey } : {}),
      ...(input.caller ? { caller: input.caller } : {}),
    }));
  const afterSeq = resumed?.afterSeq ?? 0;
  // Client tool calls on a session nobody can come back to: the paused run would only wait for its deadline.
  const endIfUnresumable = async (outcome: RunOutcome) => {
    if (outcome.pendingToolCalls.length > 0 && !session.stable && !flavor.resumableBySelf) await abortRun(deps, accepted.runId, "client tool calls on a one-off session");
  };
  const runHeaders = { "x-openclaw-run-id": accepted.runId, "x-openclaw-session-key": accepted.sessionKey };
  if (flavor.stream) return streamRun(deps, flavor, { ...accepted, afterSeq }, context, sink, runHeaders, endIfUnresumable);
  const windowMs = Math.min(preferredWaitMs(event) ?? REST_WINDOW_MS, MAX_PREFERRED_WAIT_MS, Math.max(0, context.getRemainingTimeInMillis() - 2_000));
  const outcome = await followRun(deps.db, accepted.runId, { deadlineMs: deps.db.now() + windowMs, afterSeq });
  if (outcome.status === "running") {
    const location = flavor.location(accepted.runId);
    return sendJson(sink, 202, flavor.pending(accepted.runId, accepted.acceptedAt, location), { ...runHeaders, location, "retry-after": "2" });
  }
  await endIfUnresumable(outcome);
  const { status, body } = flavor.answer(outcome);
  return sendJson(sink, status, body, { ...runHeaders, ...(status >= 500 ? { "x-should-retry": "false" } : {}) });
}

/** The session of the run behind `previous_response_id` (the session header still wins). */
async function previousSession(deps: AppDeps, previousResponseId: string | undefined): Promise<string | undefined> {
  if (!previousResponseId) return undefined;
  const runId = runIdOfResponseId(previousResponseId);
  const run = runId ? await getRun(deps.db, runId) : undefined;
  if (!run) throw new ApiError("NOT_FOUND", `Previous response with id '${previousResponseId}' not found.`, { param: "previous_response_id", openaiCode: "previous_response_not_found" });
  return run.sessionKey;
}

/** RFC 7240 `Prefer: wait=<seconds>`: how long the caller wants a buffered answer to wait before the 202. */
export function preferredWaitMs(event: APIGatewayProxyEvent): number | undefined {
  const match = /(?:^|[,;\s])wait=(\d+)/i.exec(header(event, "prefer") ?? "");
  return match ? Number(match[1]) * 1000 : undefined;
}

async function streamRun(
  deps: AppDeps,
  flavor: Flavor,
  accepted: { runId: string; acceptedAt: number; afterSeq: number },
  context: Context,
  sink: ResponseSink,
  headers: Record<string, string>,
  beforeFinish: (outcome: RunOutcome) => Promise<void>,
): Promise<void> {
  const encoder = flavor.encoder(accepted.runId, accepted.acceptedAt);
  sink.start(200, { ...SSE_HEADERS, ...headers });
  sink.write(encoder.start());
  let lastWrite = deps.db.now();
  const deadlineMs = deps.db.now() + Math.max(0, context.getRemainingTimeInMillis() - STREAM_MARGIN_MS);
  const outcome = await followRun(deps.db, accepted.runId, {
    deadlineMs,
    afterSeq: accepted.afterSeq,
    onEvent: (event) => {
      const text = encoder.onEvent(event);
      if (text) {
        sink.write(text);
        lastWrite = deps.db.now();
      }
    },
    onIdle: () => {
      if (deps.db.now() - lastWrite < KEEPALIVE_EVERY_MS) return;
      sink.write(KEEPALIVE);
      lastWrite = deps.db.now();
    },
  });
  if (outcome.status === "running") {
    // The function's time is up but the run goes on: say where to find its end.
    sink.write(`data: ${JSON.stringify({ error: { message: `the stream window ended; the run continues, poll ${flavor.location(accepted.runId)}`, type: "server_error", param: null, code: "stream_window_ended" } })}\n\ndata: [DONE]\n\n`);
  } else {
    await beforeFinish(outcome);
    sink.write(encoder.finish(outcome));
  }
  await sink.end();
}
