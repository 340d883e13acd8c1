import type { ToolCallBlock, ToolResultMessage } from "../../core/messages";
import type { ToolCallStatus, ToolMeta } from "../../core/attempt-result";
import { truncateToolResult } from "../../core/tool-result-truncation";
import type { HookRegistry } from "../../hooks/registry";
import { runBeforeToolCall, runObservers, runToolResultPersist } from "../../hooks/runners";
import { UNCERTAIN_TOOL_RESULT, type ToolLedger } from "../tool-ledger";
import type { ApprovalGate } from "./approval-gate";
import type { ToolContext, ToolDefinition, ToolOutput } from "./types";
import { validateToolArgs } from "./validate-args";

export interface ToolLifecycleDeps {
  tools: ReadonlyMap<string, ToolDefinition>;
  hooks: HookRegistry;
  ledger: ToolLedger;
  context: ToolContext;
  /** Results are cut to this (head + tail) before they are stored or emitted. */
  maxResultChars: number;
  /** Per-call time limit unless the tool sets its own. */
  timeoutMs: number;
  now(): number;
  /** Why a tool that is not offered is missing, when that is known (an MCP server that is down). */
  missingToolReason?(name: string): string | undefined;
  /** Approvals (and anything else that makes a call wait for outside input); none: every call proceeds. */
  gate?: ApprovalGate;
  /** Resuming a paused turn: any call (not only a mutating one) may have a recorded result to replay. */
  replayRecorded?: boolean;
}

export interface ToolCallOutcome {
  result: ToolResultMessage;
  meta: ToolMeta;
  sentMessages: string[];
  /** The tool's code ran (as opposed to refused, replayed, or answered without running). */
  executed: boolean;
  /** The call waits for an external input: nothing ran, `result` is a placeholder never stored. */
  paused?: { inputId: string; timeoutSeconds: number };
}

export const ABORTED_TOOL_RESULT = "The run was aborted before this tool call finished.";

/**
 * One lifecycle for every tool call (seed 003 runToolLifecycle; reference §K):
 *   ledger check (mutating) -> before_tool_call hooks -> argument validation
 *   -> ledger start -> execute (time limit, abort) -> tool_result_persist
 *   -> size cap -> ledger completion -> after_tool_call observers.
 * A tool's failure never throws: it is an `isError` result the model can read
 * and that is recorded in the transcript like any other result. (A ledger
 * write that fails does throw: the attempt crashes and the next one resumes.)
 */
export async function runToolCall(call: ToolCallBlock, deps: ToolLifecycleDeps): Promise<ToolCallOutcome> {
  const started = deps.now();
  const name = call.name.trim();
  const tool = deps.tools.get(name);
  const finish = (status: ToolCallStatus, output: ToolOutput) => seal(call, deps, tool, status, output, started);
  if (deps.context.signal.aborted) return finish("aborted", { content: ABORTED_TOOL_RESULT, isError: true });
  // A tool missing now (an MCP server down on a retry) may still have run in an earlier attempt: the ledger knows.
  if (!tool || tool.mutating || deps.replayRecorded) {
    const recorded = await deps.ledger.get(call.id);
    if (recorded?.status === "completed") return finish("replayed", recorded.result);
    // A non-mutating call recorded only as started (a crash while its result was recorded) just runs again.
    if (recorded?.status === "started" && (!tool || tool.mutating)) return finish("uncertain", { content: UNCERTAIN_TOOL_RESULT, isError: true });
  }
  if (!tool) return finish("failed", { content: missingToolMessage(name, deps), isError: true });
  const ref = { runId: deps.context.runId, sessionKey: deps.context.sessionKey };
  const decision = await runBeforeToolCall(deps.hooks, { ...ref, toolName: name, toolCallId: call.id, params: call.args });
  if (decision.blocked) return finish("blocked", { content: `Error: ${decision.blockReason}`, isError: true });
  const check = validateToolArgs(tool.parameters, decision.params);
  if (!check.ok) return finish("failed", { content: `Error: ${check.message}`, isError: true });
  const verdict = await deps.gate?.check({ toolName: name, toolCallId: call.id, args: decision.params, fromHook: decision.requireApproval });
  if (verdict?.kind === "pause") return { ...(await finish("blocked", { content: "", isError: true })), paused: { inputId: verdict.inputId, timeoutSeconds: verdict.timeoutSeconds } };
  if (verdict?.kind === "answered") return finish(verdict.status ?? "blocked", { content: verdict.content, isError: verdict.isError });

  if (tool.mutating && !(await deps.ledger.markStarted(call.id, name))) {
    // Another attempt of this run started the same call between our check and now.
    return finish("uncertain", { content: UNCERTAIN_TOOL_RESULT, isError: true });
  }
  const { status, output } = await execute(tool, decision.params, deps, call.id);
  const outcome = { ...(await seal(call, deps, tool, status, output, started)), executed: true };
  if (tool.mutating) await deps.ledger.markCompleted(call.id, { content: outcome.result.content, isError: outcome.result.isError });
  await runObservers(deps.hooks, "after_tool_call", {
    ...ref,
    toolName: name,
    toolCallId: call.id,
    params: decision.params,
    result: outcome.result.content,
    isError: outcome.result.isError,
    durationMs: outcome.meta.durationMs,
  });
  return outcome;
}

async function execute(
  tool: ToolDefinition,
  args: Record<string, unknown>,
  deps: ToolLifecycleDeps,
  toolCallId: string,
): Promise<{ status: ToolCallStatus; output: ToolOutput }> {
  const limitMs = tool.timeoutMs ?? deps.timeoutMs;
  const controller = new AbortController();
  const onAbort = () => controller.abort(deps.context.signal.reason);
  deps.context.signal.addEventListener("abort", onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), limitMs);
  });
  const aborted = new Promise<"aborted">((resolve) => controller.signal.addEventListener("abort", () => resolve("aborted"), { once: true }));
  try {
    const run = tool.execute(args, { ...deps.context, toolCallId, signal: controller.signal });
    run.catch(() => undefined); // the loser of the race below must not become an unhandled rejection
    const winner = await Promise.race([run, timedOut, aborted]);
    if (winner === "timeout") {
      controller.abort("timeout");
      return { status: "failed", output: { content: `Error: the tool did not finish within ${Math.round(limitMs / 1000)} s.`, isError: true } };
    }
    if (winner === "aborted") return { status: "aborted", output: { content: ABORTED_TOOL_RESULT, isError: true } };
    return { status: winner.isError ? "failed" : "completed", output: winner };
  } catch (error) {
    if (controller.signal.aborted && deps.context.signal.aborted) return { status: "aborted", output: { content: ABORTED_TOOL_RESULT, isError: true } };
    return { status: "failed", output: { content: `Error: ${formatError(error)}`, isError: true } };
  } finally {
    clearTimeout(timer);
    deps.context.signal.removeEventListener("abort", onAbort);
  }
}

function missingToolMessage(name: string, deps: ToolLifecycleDeps): string {
  const reason = deps.missingToolReason?.(name);
  return reason ? `Error: the tool "${name}" is not available: ${reason}` : `Error: the tool "${name}" is not available.`;
}

export function formatError(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return typeof error === "string" ? error : JSON.stringify(error) ?? String(error);
}

/** tool_result_persist, then the size cap: what is stored, emitted and sent to the model is the same text. */
async function seal(
  call: ToolCallBlock,
  deps: ToolLifecycleDeps,
  tool: ToolDefinition | undefined,
  status: ToolCallStatus,
  output: ToolOutput,
  started: number,
): Promise<ToolCallOutcome> {
  const name = call.name.trim();
  const isError = output.isError ?? false;
  const persisted = runToolResultPersist(deps.hooks, {
    runId: deps.context.runId,
    sessionKey: deps.context.sessionKey,
    toolName: name,
    toolCallId: call.id,
    content: output.content,
    isError,
  });
  const capped = truncateToolResult(persisted, deps.maxResultChars);
  const result: ToolResultMessage = { role: "tool_result", toolCallId: call.id, toolName: name, content: capped.text, isError };
  const meta: ToolMeta = {
    toolCallId: call.id,
    name,
    status,
    isError,
    mutating: tool?.mutating ?? false,
    durationMs: Math.max(0, deps.now() - started),
    resultChars: capped.text.length,
    truncated: capped.truncated,
  };
  return { result, meta, sentMessages: status === "completed" ? (output.sentMessages ?? []) : [], executed: false };
}
