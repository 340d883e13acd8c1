/**
 * Fake OpenAI (and OpenAI-compatible) server on loopback: `/v1/chat/completions`
 * and `/v1/responses`, answering with SSE byte-for-byte in the shape OpenAI
 * sends (chunk objects with `usage: null`, a usage-only last chunk with
 * `choices: []`, `data: [DONE]`; Responses `event:` lines with sequence numbers).
 *
 *   const server = await FakeOpenAIServer.start();
 *   server.enqueue(chat.toolCalls([{ name: "read", args: { path: "a" } }]), chat.text("Done."));
 *   createOpenAIChatProvider({ apiKey: "test", baseURL: server.baseURL });
 */
import { barrier, type ScriptStep, ScriptedSseServer, splitInto, wordChunks } from "./scripted-sse-server";

export const CHAT_PATH = "/v1/chat/completions";
export const RESPONSES_PATH = "/v1/responses";

export class FakeOpenAIServer extends ScriptedSseServer {
  static async start(): Promise<FakeOpenAIServer> {
    const server = new FakeOpenAIServer([CHAT_PATH, RESPONSES_PATH]);
    await server.listen();
    return server;
  }

  /** What to pass as the SDK's `baseURL` (OpenAI's includes `/v1`). */
  get baseURL(): string {
    return `${this.origin}/v1`;
  }
}

const argsText = (args: string | Record<string, unknown>) => (typeof args === "string" ? args : JSON.stringify(args));

// ---------------------------------------------------------------- Chat Completions

export interface ChatToolCallScript {
  /** Default `call_<n>` in OpenAI's style. */
  id?: string;
  name: string;
  /** An object is serialised; a string is sent as-is (use it for malformed JSON). */
  args: string | Record<string, unknown>;
  /** How many argument deltas to split into (default 3). */
  chunks?: number;
}

export interface ChatScript {
  model?: string;
  reasoning?: string | string[];
  /** vLLM/DeepSeek send `reasoning_content`; Ollama/OpenRouter send `reasoning`. */
  reasoningField?: "reasoning_content" | "reasoning";
  text?: string | string[];
  refusal?: string;
  toolCalls?: ChatToolCallScript[];
  /** Default: `tool_calls` when there are tool calls, else `stop`. `null` omits the finish chunk. */
  finishReason?: string | null;
  /** `null` omits the usage chunk (server ignoring include_usage). */
  usage?: { prompt: number; completion: number; cached?: number } | null;
}

const CHAT_ID = "chatcmpl-BxRSk7JmD6pUoLqz3wkH2xq9Yc1Nf";

function chatChunk(model: string, delta: Record<string, unknown>, finish: string | null = null): string {
  const chunk = {
    id: CHAT_ID,
    object: "chat.completion.chunk",
    created: 1754550000,
    model,
    service_tier: "default",
    system_fingerprint: "fp_07871e2ad8",
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    usage: null,
  };
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

function chatToolCallChunks(model: string, calls: ChatToolCallScript[]): string[] {
  return calls.flatMap((call, index) => {
    const head = { index, id: call.id ?? `call_${index}Yq3kVb8sWmT2oN5rLx7dEa${index}`, type: "function", function: { name: call.name, arguments: "" } };
    const pieces = splitInto(argsText(call.args), call.chunks ?? 3);
    return [
      chatChunk(model, { tool_calls: [head] }),
      ...pieces.map((piece) => chatChunk(model, { tool_calls: [{ index, function: { arguments: piece } }] })),
    ];
  });
}

function chatUsageChunk(model: string, usage: { prompt: number; completion: number; cached?: number }): string {
  const chunk = {
    id: CHAT_ID,
    object: "chat.completion.chunk",
    created: 1754550000,
    model,
    service_tier: "default",
    system_fingerprint: "fp_07871e2ad8",
    choices: [],
    usage: {
      prompt_tokens: usage.prompt,
      completion_tokens: usage.completion,
      total_tokens: usage.prompt + usage.completion,
      prompt_tokens_details: { cached_tokens: usage.cached ?? 0, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
    },
  };
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

/** The SSE body of one streamed chat completion. */
export function chatStreamBody(script: ChatScript): string {
  const model = script.model ?? "gpt-4o-2024-08-06";
  const frames = [chatChunk(model, { role: "assistant", content: "", refusal: null })];
  const field = script.reasoningField ?? "reasoning_content";
  for (const piece of wordChunks(script.reasoning)) frames.push(chatChunk(model, { [field]: piece }));
  for (const piece of wordChunks(script.text)) frames.push(chatChunk(model, { content: piece }));
  if (script.refusal) frames.push(chatChunk(model, { refusal: script.refusal }));
  frames.push(...chatToolCallChunks(model, script.toolCalls ?? []));
  const finish = script.finishReason === undefined ? (script.toolCalls?.length ? "tool_calls" : "stop") : script.finishReason;
  if (finish === null) return frames.join(""); // cut before the end: no finish, no usage, no [DONE]
  frames.push(chatChunk(model, {}, finish));
  const usage = script.usage === undefined ? { prompt: 21, completion: 9 } : script.usage;
  if (usage) frames.push(chatUsageChunk(model, usage));
  frames.push("data: [DONE]\n\n");
  return frames.join("");
}

/** One-line steps for `/v1/chat/completions`. */
export const chat = {
  stream: (script: ChatScript): ScriptStep => ({ kind: "sse", path: CHAT_PATH, body: chatStreamBody(script) }),
  text: (text: string, usage?: ChatScript["usage"]): ScriptStep => chat.stream({ text, usage }),
  toolCall: (name: string, args: Record<string, unknown>, id?: string): ScriptStep => chat.stream({ toolCalls: [{ name, args, id }] }),
  toolCalls: (calls: ChatToolCallScript[]): ScriptStep => chat.stream({ toolCalls: calls }),
  error: (status: number, body: unknown, headers?: Record<string, string>): ScriptStep => ({ kind: "http-error", path: CHAT_PATH, status, body, headers }),
  /** An error in the body after a 200 (OpenAI does this for mid-stream failures). */
  midStreamError: (script: ChatScript, error: { message: string; type: string; code?: string | null }): ScriptStep => ({
    kind: "sse",
    path: CHAT_PATH,
    body: chatStreamBody({ ...script, finishReason: null }) + `data: ${JSON.stringify({ error: { ...error, param: null, code: error.code ?? null } })}\n\n`,
  }),
  stall: (partial?: ChatScript): ScriptStep => ({ kind: "stall", path: CHAT_PATH, body: partial && chatStreamBody({ ...partial, finishReason: null }) }),
  drop: (partial: ChatScript): ScriptStep => ({ kind: "drop", path: CHAT_PATH, body: chatStreamBody({ ...partial, finishReason: null }) }),
};

/**
 * A streamed completion that sends its first `afterFrames` frames (the role frame and the first word by
 * default, so a client sees text), then holds the rest until the test
 * releases it: the run is busy for exactly as long as the test needs (no bet on a frame delay outlasting
 * the test's next steps on a busy machine). Release it in a `finally`, so the run can end.
 */
export function heldChat(script: ChatScript, afterFrames = 2): { step: ScriptStep; release: () => void } {
  const gate = barrier();
  return { step: { kind: "sse", path: CHAT_PATH, body: chatStreamBody(script), hold: { afterFrames, until: gate.promise } }, release: gate.release };
}

/** OpenAI's error body shape: `{ "error": { message, type, param, code } }`. */
export function openAIErrorBody(message: string, type: string, code: string | null = null, param: string | null = null): unknown {
  return { error: { message, type, param, code } };
}

export * from "./fake-openai-responses";
