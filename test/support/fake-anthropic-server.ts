/**
 * Fake Anthropic server on loopback: `/v1/messages`, answering with SSE in the
 * shape Anthropic sends (`event:` line + `data:` line per event, `ping` after
 * the first block start, `message_delta` with cumulative output usage, then
 * `message_stop`; in-stream failures as `event: error`).
 *
 *   const server = await FakeAnthropicServer.start();
 *   server.enqueue(messages.toolUse("read", { path: "a" }), messages.text("Done."));
 *   createAnthropicProvider({ apiKey: "test", baseURL: server.baseURL });
 */
import { type ScriptStep, ScriptedSseServer, splitInto, wordChunks } from "./scripted-sse-server";

export const MESSAGES_PATH = "/v1/messages";

export class FakeAnthropicServer extends ScriptedSseServer {
  static async start(): Promise<FakeAnthropicServer> {
    const server = new FakeAnthropicServer([MESSAGES_PATH]);
    await server.listen();
    return server;
  }

  /** What to pass as the SDK's `baseURL` (Anthropic's has no `/v1`). */
  get baseURL(): string {
    return this.origin;
  }
}

export interface ToolUseScript {
  id?: string;
  name: string;
  /** An object is serialised; a string is streamed as-is (use it for malformed JSON). */
  input: string | Record<string, unknown>;
  chunks?: number;
}

export interface MessagesScript {
  model?: string;
  thinking?: { text: string | string[]; signature: string };
  text?: string | string[];
  toolUses?: ToolUseScript[];
  /** Default: `tool_use` with tool uses, else `end_turn`. */
  stopReason?: string;
  usage?: { input: number; output: number; cacheRead?: number; cacheWrite?: number };
  /** Emit `event: error` with this payload after the content instead of finishing. */
  errorAfter?: { type: string; message: string };
  /** Stop after the content blocks: no message_delta, no message_stop. */
  truncate?: boolean;
}

function frame(type: string, data: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

const PING = "event: ping\ndata: {\"type\": \"ping\"}\n\n";

class BlockWriter {
  readonly frames: string[] = [];
  private index = 0;

  block(start: Record<string, unknown>, deltas: Array<Record<string, unknown>>): void {
    const index = this.index++;
    this.frames.push(frame("content_block_start", { index, content_block: start }));
    if (index === 0) this.frames.push(PING);
    for (const delta of deltas) this.frames.push(frame("content_block_delta", { index, delta }));
    this.frames.push(frame("content_block_stop", { index }));
  }
}

function messageStart(script: MessagesScript): string {
  const usage = script.usage ?? { input: 472, output: 2 };
  return frame("message_start", {
    message: {
      id: "msg_01XFDUDYJgAACzvnptvVoYEL",
      type: "message",
      role: "assistant",
      model: script.model ?? "claude-sonnet-4-5-20250929",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: usage.input,
        cache_creation_input_tokens: usage.cacheWrite ?? 0,
        cache_read_input_tokens: usage.cacheRead ?? 0,
        cache_creation: { ephemeral_5m_input_tokens: usage.cacheWrite ?? 0, ephemeral_1h_input_tokens: 0 },
        output_tokens: 1,
        service_tier: "standard",
      },
    },
  });
}

/** The SSE body of one streamed Messages API call. */
export function messagesStreamBody(script: MessagesScript): string {
  const w = new BlockWriter();
  if (script.thinking) {
    const deltas = wordChunks(script.thinking.text).map((thinking) => ({ type: "thinking_delta", thinking }));
    w.block({ type: "thinking", thinking: "", signature: "" }, [...deltas, { type: "signature_delta", signature: script.thinking.signature }]);
  }
  const text = wordChunks(script.text);
  if (text.length) w.block({ type: "text", text: "" }, text.map((t) => ({ type: "text_delta", text: t })));
  script.toolUses?.forEach((tool, n) => {
    const json = typeof tool.input === "string" ? tool.input : JSON.stringify(tool.input);
    const id = tool.id ?? `toolu_01A09q90qw90lq917835lq9${n}`;
    const deltas = [{ type: "input_json_delta", partial_json: "" }, ...splitInto(json, tool.chunks ?? 3).map((p) => ({ type: "input_json_delta", partial_json: p }))];
    w.block({ type: "tool_use", id, name: tool.name, input: {} }, deltas);
  });
  const frames = [messageStart(script), ...w.frames];
  if (script.errorAfter) {
    frames.push(`event: error\ndata: ${JSON.stringify({ type: "error", error: script.errorAfter })}\n\n`);
  } else if (!script.truncate) {
    const stop = script.stopReason ?? (script.toolUses?.length ? "tool_use" : "end_turn");
    const usage = script.usage ?? { input: 472, output: 2 };
    frames.push(frame("message_delta", { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: usage.output } }));
    frames.push(frame("message_stop", {}));
  }
  return frames.join("");
}

/** Anthropic's error body shape. */
export function anthropicErrorBody(type: string, message: string): unknown {
  return { type: "error", error: { type, message }, request_id: "req_011CSHoEeqs5C35K2UUqR7Fy" };
}

/** One-line steps for `/v1/messages`. */
export const messages = {
  stream: (script: MessagesScript): ScriptStep => ({ kind: "sse", path: MESSAGES_PATH, body: messagesStreamBody(script) }),
  text: (text: string): ScriptStep => messages.stream({ text }),
  toolUse: (name: string, input: Record<string, unknown>, id?: string): ScriptStep => messages.stream({ toolUses: [{ name, input, id }] }),
  toolUses: (uses: ToolUseScript[]): ScriptStep => messages.stream({ toolUses: uses }),
  error: (status: number, type: string, message: string, headers?: Record<string, string>): ScriptStep => ({
    kind: "http-error",
    path: MESSAGES_PATH,
    status,
    body: anthropicErrorBody(type, message),
    headers: { "request-id": "req_011CSHoEeqs5C35K2UUqR7Fy", ...headers },
  }),
  stall: (partial?: MessagesScript): ScriptStep => ({ kind: "stall", path: MESSAGES_PATH, body: partial && messagesStreamBody({ ...partial, truncate: true }) }),
  drop: (partial: MessagesScript): ScriptStep => ({ kind: "drop", path: MESSAGES_PATH, body: messagesStreamBody({ ...partial, truncate: true }) }),
};
