import type { HookRegistry } from "./registry";
import type { HookEvent, HookName, HookResult } from "./types";

/**
 * How each hook's handlers combine. Every runner walks handlers in priority
 * order (higher first). Observers never change the run; decisions follow the
 * seed 001 rules; transforms chain.
 */

export const BLOCKED_BY_HOOK = "Tool call blocked by plugin hook";
/** OpenClaw's text (reference §K, tool hooks). */
export const BLOCKED_BY_FAILED_HOOK = "Tool call blocked because before_tool_call hook failed";

export interface ToolCallDecision {
  params: Record<string, unknown>;
  blocked: boolean;
  blockReason?: string;
  /** Id of the handler that blocked. */
  blockedBy?: string;
  /** A handler asked for a human's approval before the call runs. */
  requireApproval?: { title?: string; description?: string; timeoutSeconds?: number };
}

/**
 * before_tool_call: handlers may rewrite params (later handlers see the
 * rewrite) or block. `block: true` is terminal: lower-priority handlers are
 * skipped. `block: false` is a no-op (it cannot clear a block, and since a
 * block is terminal there is nothing to clear). A handler that throws blocks
 * the call: a guard that failed must not let the call through.
 */
export async function runBeforeToolCall(hooks: HookRegistry, event: HookEvent<"before_tool_call">): Promise<ToolCallDecision> {
  let params = event.params;
  let requireApproval: ToolCallDecision["requireApproval"];
  for (const entry of hooks.handlersOf("before_tool_call")) {
    const { result, failed } = await hooks.call(entry, { ...event, params });
    if (failed !== undefined) return { params, blocked: true, blockReason: BLOCKED_BY_FAILED_HOOK, blockedBy: entry.id };
    if (result?.params) params = result.params;
    if (result?.block === true) return { params, blocked: true, blockReason: result.blockReason || BLOCKED_BY_HOOK, blockedBy: entry.id };
    requireApproval ??= result?.requireApproval;
  }
  return requireApproval ? { params, blocked: false, requireApproval } : { params, blocked: false };
}

export interface SendDecision {
  text: string;
  cancelled: boolean;
  cancelledBy?: string;
}

/** message_sending: may rewrite the text; `cancel: true` is terminal; `cancel: false` is a no-op. */
export async function runMessageSending(hooks: HookRegistry, event: HookEvent<"message_sending">): Promise<SendDecision> {
  let text = event.text;
  for (const entry of hooks.handlersOf("message_sending")) {
    const { result } = await hooks.call(entry, { ...event, text });
    if (typeof result?.text === "string") text = result.text;
    if (result?.cancel === true) return { text, cancelled: true, cancelledBy: entry.id };
  }
  return { text, cancelled: false };
}

export type PromptBuildResult = HookResult<"before_prompt_build">;

/**
 * before_prompt_build: the highest-priority `systemPrompt` wins; contexts
 * accumulate in priority order; `toolsAllow` lists intersect (a restriction
 * from one plugin cannot be widened by another).
 */
export async function runBeforePromptBuild(hooks: HookRegistry, event: HookEvent<"before_prompt_build">): Promise<PromptBuildResult> {
  const merged: PromptBuildResult = {};
  const join = (a: string | undefined, b: string | undefined) => (a && b ? `${a}\n\n${b}` : a || b);
  for (const entry of hooks.handlersOf("before_prompt_build")) {
    const { result } = await hooks.call(entry, event);
    if (!result) continue;
    if (result.systemPrompt !== undefined && merged.systemPrompt === undefined) merged.systemPrompt = result.systemPrompt;
    merged.prependContext = join(merged.prependContext, result.prependContext);
    merged.prependSystemContext = join(merged.prependSystemContext, result.prependSystemContext);
    merged.appendSystemContext = join(merged.appendSystemContext, result.appendSystemContext);
    if (result.toolsAllow) {
      merged.toolsAllow = merged.toolsAllow ? merged.toolsAllow.filter((name) => result.toolsAllow!.includes(name)) : [...result.toolsAllow];
    }
  }
  return merged;
}

/** First handler (by priority) that answers wins: model overrides, a synthetic reply, a run block, a revision request. */
export async function runFirstAnswer<N extends "before_model_resolve" | "before_agent_reply" | "before_agent_run" | "before_agent_finalize">(
  hooks: HookRegistry,
  name: N,
  event: HookEvent<N>,
  answers: (result: HookResult<N>) => boolean,
): Promise<HookResult<N> | undefined> {
  for (const entry of hooks.handlersOf(name)) {
    const { result } = await hooks.call(entry, event);
    if (result && answers(result)) return result;
  }
  return undefined;
}

/**
 * Observers (agent_end, after_tool_call, compaction, message and session
 * hooks) all run, concurrently; failures are reported, never thrown. They are
 * awaited (bounded by `timeoutMs`) because a Lambda freezes fire-and-forget work.
 */
export async function runObservers<N extends HookName>(hooks: HookRegistry, name: N, event: HookEvent<N>, timeoutMs = 30_000): Promise<void> {
  const entries = hooks.handlersOf(name);
  if (entries.length === 0) return;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, timeoutMs);
  });
  await Promise.race([Promise.allSettled(entries.map((entry) => hooks.call(entry, event))), deadline]);
  clearTimeout(timer);
}

/** tool_result_persist: synchronous chain; a handler that throws leaves the content as it was. */
export function runToolResultPersist(hooks: HookRegistry, event: HookEvent<"tool_result_persist">): string {
  let content = event.content;
  for (const entry of hooks.handlersOf("tool_result_persist")) {
    try {
      const result = (entry.handler as (e: HookEvent<"tool_result_persist">) => HookResult<"tool_result_persist"> | void)({ ...event, content });
      if (result instanceof Promise) {
        hooks.reportError("tool_result_persist", entry.id, new Error("tool_result_persist handlers must be synchronous"));
        continue;
      }
      if (typeof result?.content === "string") content = result.content;
    } catch (error) {
      hooks.reportError("tool_result_persist", entry.id, error);
    }
  }
  return content;
}
