import type { Message, Usage } from "../core/messages";

/**
 * Plugin hooks (seed 001 "Enlaces de complementos", mission §9): the points
 * where code outside the runner can observe or steer a run. Each hook has an
 * event (what the handler gets) and a result (what it may return).
 *
 * Decision rules (seed 001, pinned by tests):
 * - before_tool_call `{ block: true }` is terminal: lower-priority handlers do not run;
 *   `{ block: false }` is a no-op and never clears an earlier block.
 * - message_sending `{ cancel: true }` is terminal; `{ cancel: false }` is a no-op.
 * Handlers run in priority order, higher first; equal priorities keep registration order.
 */
export interface AgentEndMeta {
  durationMs: number;
  model: string;
  attempts: number;
  usage: Usage;
  error?: { kind: string; message: string };
}

export interface RunRef {
  runId: string;
  sessionKey: string;
}

export interface HookSpecs {
  /** Once per run, before the model is resolved (no messages): may pick another provider and/or model. */
  before_model_resolve: { event: RunRef & { prompt: string; model: string }; result: { providerOverride?: string; modelOverride?: string } };
  /** Once per run, before the loop starts: `block: true` ends the run with `message` (error.kind "hook_block"), no retry. */
  before_agent_run: { event: RunRef & { prompt: string; model: string }; result: { block?: boolean; message?: string } };
  before_prompt_build: {
    event: RunRef & { prompt: string; messages: readonly Message[]; systemPrompt: string };
    result: {
      /** Prepended to the user's prompt for this attempt only (dynamic, per-turn text). */
      prependContext?: string;
      /** Replaces the system prompt. */
      systemPrompt?: string;
      prependSystemContext?: string;
      appendSystemContext?: string;
      /** Narrows the tools offered; several hooks intersect; [] = no tools. */
      toolsAllow?: string[];
    };
  };
  /** Lets a plugin take the turn with a synthetic reply before any model call. */
  before_agent_reply: { event: RunRef & { prompt: string }; result: { handled?: boolean; reply?: string } };
  /** Once per run, when it has ended (whatever the outcome): the session's messages and the run's metadata. */
  agent_end: { event: RunRef & { messages: readonly Message[]; outcome: string; finalText: string; meta: AgentEndMeta }; result: void };
  /**
   * Right before an attempt accepts the model's final answer: `revise: true`
   * sends the answer back with `reason` as a revision request (at most
   * MAX_BEFORE_AGENT_FINALIZE_REVISIONS times per attempt).
   */
  before_agent_finalize: { event: RunRef & { prompt: string; finalText: string; revisions: number }; result: { revise?: boolean; reason?: string } };
  before_compaction: { event: RunRef & { messageCount: number }; result: void };
  after_compaction: { event: RunRef & { tokenCount?: number }; result: void };
  before_tool_call: {
    event: RunRef & { toolName: string; toolCallId: string; params: Record<string, unknown> };
    /** `requireApproval`: the call waits for a human (docs/approvals.md); the first handler that asks wins. */
    result: { params?: Record<string, unknown>; block?: boolean; blockReason?: string; requireApproval?: { title?: string; description?: string; timeoutSeconds?: number } };
  };
  after_tool_call: {
    event: RunRef & { toolName: string; toolCallId: string; params: Record<string, unknown>; result: string; isError: boolean; durationMs: number };
    result: void;
  };
  /** Synchronous: transforms a tool result right before it is written to the transcript. */
  tool_result_persist: { event: RunRef & { toolName: string; toolCallId: string; content: string; isError: boolean }; result: { content?: string } };
  /** An inbound user message, once, when its run starts. `channel`: where it came from ("ws", "rest", ...). */
  message_received: { event: RunRef & { text: string; channel: string }; result: void };
  /** An outbound reply, before it is delivered: may rewrite the text; `cancel: true` drops the reply (terminal). */
  message_sending: { event: RunRef & { text: string; channel: string } & ChannelSend; result: { text?: string; cancel?: boolean } };
  /** An outbound reply, after it was delivered. */
  message_sent: { event: RunRef & { text: string; channel: string } & ChannelSend; result: void };
  session_start: { event: RunRef & { sessionId: string }; result: void };
  session_end: { event: RunRef & { sessionId: string }; result: void };
}

/**
 * On a chat channel every platform message has its own message_sending /
 * message_sent (shared/channels/outbound-hooks.ts): `kind` says which one,
 * `messageId` the platform message an edit changes.
 */
export interface ChannelSend {
  kind?: "preview" | "reply" | "tool";
  messageId?: string;
}

export type HookName = keyof HookSpecs;
export type HookEvent<N extends HookName> = HookSpecs[N]["event"];
export type HookResult<N extends HookName> = HookSpecs[N]["result"];

export type HookHandler<N extends HookName> = N extends "tool_result_persist"
  ? (event: HookEvent<N>) => HookResult<N> | void
  : (event: HookEvent<N>) => HookResult<N> | void | Promise<HookResult<N> | void>;

export interface HookRegistration<N extends HookName> {
  name: N;
  /** Who registered it (for logs and errors). */
  id: string;
  priority: number;
  handler: HookHandler<N>;
  /** Registration order, the tie-breaker between equal priorities. */
  order: number;
}
