/**
 * The OpenAI objects this API answers with, built from the runner's run
 * record: `chat.completion`, `response`, `model`, and OpenAI's error body.
 * Pure. Ids carry the run id (`chatcmpl-<runId>`, `resp_<runId>`) so a
 * caller can poll or retrieve by the id it was given.
 */
import type { Usage } from "../core/messages";

export const CHAT_ID_PREFIX = "chatcmpl-";
export const RESPONSE_ID_PREFIX = "resp_";
export const OWNER = "openclaw";

/** A client tool the model called; the run ended so the caller can run it (OpenClaw: `meta.pendingToolCalls`). */
export interface PendingToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** What a finished (or unfinished) run gives the mapping. */
export interface RunOutcome {
  runId: string;
  status: "running" | "ok" | "error" | "timeout" | "aborted";
  createdAtMs: number;
  text: string;
  usage: Usage;
  error?: string;
  pendingToolCalls: PendingToolCall[];
}

export const runIdOfChatId = (id: string): string | undefined => (id.startsWith(CHAT_ID_PREFIX) ? id.slice(CHAT_ID_PREFIX.length) : undefined);
export const runIdOfResponseId = (id: string): string | undefined => (id.startsWith(RESPONSE_ID_PREFIX) ? id.slice(RESPONSE_ID_PREFIX.length) : undefined);

export function chatUsage(usage: Usage) {
  const prompt = usage.input + usage.cacheRead + usage.cacheWrite;
  return {
    prompt_tokens: prompt,
    completion_tokens: usage.output,
    total_tokens: prompt + usage.output,
    prompt_tokens_details: { cached_tokens: usage.cacheRead },
  };
}

export function responsesUsage(usage: Usage) {
  const input = usage.input + usage.cacheRead + usage.cacheWrite;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: usage.cacheRead },
    output_tokens: usage.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input + usage.output,
  };
}

const seconds = (ms: number) => Math.floor(ms / 1000);

export function chatToolCalls(calls: PendingToolCall[]) {
  return calls.map((call) => ({ id: call.id, type: "function" as const, function: { name: call.name, arguments: call.arguments } }));
}

export function chatCompletion(outcome: RunOutcome, model: string) {
  const calls = outcome.pendingToolCalls;
  const message =
    calls.length > 0
      ? { role: "assistant" as const, content: outcome.text || null, refusal: null, tool_calls: chatToolCalls(calls) }
      : { role: "assistant" as const, content: outcome.text, refusal: null };
  return {
    id: `${CHAT_ID_PREFIX}${outcome.runId}`,
    object: "chat.completion" as const,
    created: seconds(outcome.createdAtMs),
    model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: calls.length > 0 ? ("tool_calls" as const) : ("stop" as const) }],
    usage: chatUsage(outcome.usage),
  };
}

/** 202 body of a request that outlived the integration window: poll `location`. */
export function chatCompletionPending(runId: string, createdAtMs: number, model: string, location: string) {
  return { id: `${CHAT_ID_PREFIX}${runId}`, object: "chat.completion" as const, created: seconds(createdAtMs), model, status: "in_progress" as const, choices: [], run_id: runId, location };
}

export type ResponseStatus = "in_progress" | "completed" | "incomplete" | "failed";

export function messageItem(runId: string, text: string, status: "in_progress" | "completed") {
  return { type: "message" as const, id: `msg_${runId}`, status, role: "assistant" as const, content: [{ type: "output_text" as const, text, annotations: [] }] };
}

export function functionCallItem(call: PendingToolCall, index: number) {
  return { type: "function_call" as const, id: `fc_${index}_${call.id}`, call_id: call.id, name: call.name, arguments: call.arguments, status: "completed" as const };
}

export function responseOutput(outcome: RunOutcome) {
  const calls = outcome.pendingToolCalls.map(functionCallItem);
  if (outcome.status !== "ok") return [];
  return outcome.text || calls.length === 0 ? [messageItem(outcome.runId, outcome.text, "completed"), ...calls] : calls;
}

export function responseStatusOf(outcome: RunOutcome): ResponseStatus {
  if (outcome.status === "running") return "in_progress";
  return outcome.status === "ok" ? "completed" : "failed";
}

export function responseResource(outcome: RunOutcome, model: string, status: ResponseStatus = responseStatusOf(outcome)) {
  const output = status === "in_progress" ? [] : responseOutput(outcome);
  return {
    id: `${RESPONSE_ID_PREFIX}${outcome.runId}`,
    object: "response" as const,
    created_at: seconds(outcome.createdAtMs),
    status,
    model,
    output,
    output_text: status === "completed" ? outcome.text : "",
    error: status === "failed" ? { code: "server_error", message: outcome.error ?? `the run ended ${outcome.status}` } : null,
    incomplete_details: null,
    usage: responsesUsage(outcome.usage),
    parallel_tool_calls: true,
    tool_choice: "auto" as const,
    tools: [],
    metadata: {},
    run_id: outcome.runId,
  };
}

export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

export function openAIError(message: string, type: string, code: string | null = null, param: string | null = null): OpenAIErrorBody {
  return { error: { message, type, param, code } };
}

export function modelObject(id: string, ownedBy: string = OWNER) {
  return { id, object: "model" as const, created: 0, owned_by: ownedBy };
}
