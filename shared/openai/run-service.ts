import type { Caller } from "../core/access";
/**
 * An OpenAI request as a normal durable run: the same intake as
 * `POST /v1/agent` (session lane, SQS FIFO, outer loop, transcript), then
 * the run's record and event log read back as OpenAI objects.
 */
import { readEvents, type RunEvent } from "../aws/event-log";
import { getRun, TERMINAL_STATUSES, type RunRecord } from "../aws/runs";
import type { Db } from "../aws/dynamo";
import { pendingInputsOf } from "../aws/external-inputs";
import { ZERO_USAGE, type Usage } from "../core/messages";
import { acceptRun, type AcceptedRun, type IntakeDeps } from "../intake/intake";
import { sessionBusy } from "../intake/answer";
import { validate } from "../protocol/validate";
import { AgentRequestSchema } from "../protocol/agent-request";
import type { PendingToolCall, RunOutcome } from "./objects";

export interface OpenAIRunInput {
  sessionKey: string;
  /** The request's function tools (docs/openai-api.md "Client tools"). */
  clientTools?: { name: string; description: string; parameters: Record<string, unknown> }[];
  message: string;
  extraSystemPrompt?: string;
  model?: string;
  idempotencyKey?: string;
  /** The key that asked: the run belongs to its tenant. */
  caller?: Caller;
}

/**
 * `followup`: every OpenAI request is its own run with its own answer, even
 * on a busy stable session (steer/collect would fold it into another run).
 */
export async function startOpenAIRun(deps: IntakeDeps, input: OpenAIRunInput): Promise<AcceptedRun> {
  const request = validate(AgentRequestSchema, {
    sessionKey: input.sessionKey,
    message: input.message,
    queue: { mode: "followup" },
    ...(input.extraSystemPrompt ? { extraSystemPrompt: input.extraSystemPrompt } : {}),
    ...(input.model ? { model: input.model } : {}),
    ...(input.idempotencyKey ? { idempotencyKey: input.idempotencyKey } : {}),
    ...(input.clientTools && input.clientTools.length > 0 ? { clientTools: input.clientTools } : {}),
  });
  const accepted = await acceptRun(deps, request, "rest", input.caller ? { caller: input.caller } : {});
  if (accepted.status === "rejected") throw sessionBusy(accepted);
  return accepted;
}

export function outcomeOf(run: RunRecord): RunOutcome {
  const terminal = TERMINAL_STATUSES.has(run.status);
  const meta = run.result?.meta ?? {};
  return {
    runId: run.runId,
    status: terminal ? (run.status as RunOutcome["status"]) : "running",
    createdAtMs: run.acceptedAt,
    text: (run.result?.payloads ?? []).filter((p) => !p.isError).map((p) => p.text).filter(Boolean).join("\n\n"),
    usage: usageOf(meta.usage),
    ...(run.error ? { error: run.error } : terminal && run.status !== "ok" ? { error: errorText(run) } : {}),
    pendingToolCalls: pendingToolCallsOf(meta.pendingToolCalls),
  };
}

function errorText(run: RunRecord): string {
  const payload = run.result?.payloads.find((p) => p.isError);
  return payload?.text ?? `the run ended ${run.status}`;
}

function usageOf(value: unknown): Usage {
  if (!value || typeof value !== "object") return ZERO_USAGE;
  const v = value as Record<string, unknown>;
  const n = (key: string) => (typeof v[key] === "number" ? (v[key] as number) : 0);
  return { input: n("input"), output: n("output"), cacheRead: n("cacheRead"), cacheWrite: n("cacheWrite") };
}

/** OpenClaw's `meta.pendingToolCalls`: client tools the model called when the run ended. */
function pendingToolCallsOf(value: unknown): PendingToolCall[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((call) => {
    const c = call as Record<string, unknown>;
    if (typeof c?.id !== "string" || typeof c.name !== "string") return [];
    return [{ id: c.id, name: c.name, arguments: typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments ?? {}) }];
  });
}

export async function readOutcome(db: Db, runId: string): Promise<RunOutcome | undefined> {
  const run = await getRun(db, runId);
  if (!run) return undefined;
  return (await outcomeIfWaitingForClient(db, run)) ?? outcomeOf(run);
}

/**
 * A run paused for client tool calls has answered this request: the calls
 * go back as `tool_calls` / `function_call` items (finish_reason
 * `tool_calls`), and the caller's next request with their results resumes
 * the same run (shared/openai/client-tool-turn.ts; docs/openai-api.md).
 */
export async function outcomeIfWaitingForClient(db: Db, run: RunRecord): Promise<RunOutcome | undefined> {
  if (run.status !== "paused") return undefined;
  const calls: PendingToolCall[] = (await pendingInputsOf(db, run.runId))
    .filter((input) => input.kind === "client_tool")
    .map((input) => ({ id: input.toolCallId, name: input.toolName, arguments: JSON.stringify(input.args) }));
  return calls.length > 0 ? { ...outcomeOf(run), status: "ok", pendingToolCalls: calls } : undefined;
}

export interface FollowOptions {
  /** Stop waiting at this time (epoch ms) and answer `running`. */
  deadlineMs: number;
  onEvent?: (event: RunEvent) => void | Promise<void>;
  /** Called while nothing happens, so a stream can keep its connection alive. */
  onIdle?: () => void | Promise<void>;
  signal?: AbortSignal;
  /** Follow from after this event (a resumed run: only what follows the pause). */
  afterSeq?: number;
}

const POLL_MIN_MS = 50;
const POLL_MAX_MS = 500;

/**
 * Follows the run's event log (in `seq` order) until the run record is
 * terminal (or paused for client tool calls: they are the answer), then
 * gives its outcome; at the deadline, the outcome so far (`running`). Every event is in the log before it is sent anywhere, so
 * reading the log misses nothing.
 */
export async function followRun(db: Db, runId: string, options: FollowOptions): Promise<RunOutcome> {
  let afterSeq = options.afterSeq ?? 0;
  for (let delay = POLL_MIN_MS; ; ) {
    const events = await readEvents(db, runId, afterSeq);
    for (const event of events) {
      afterSeq = event.seq;
      await options.onEvent?.(event);
    }
    const run = await getRun(db, runId);
    if (!run) throw new Error(`run ${runId} vanished`);
    if (TERMINAL_STATUSES.has(run.status)) {
      // Events written between the read above and the terminal record.
      for (const event of await readEvents(db, runId, afterSeq)) {
        afterSeq = event.seq;
        await options.onEvent?.(event);
      }
      return outcomeOf(run);
    }
    const waiting = await outcomeIfWaitingForClient(db, run);
    if (waiting) return waiting;
    const left = options.deadlineMs - db.now();
    if (left <= 0 || options.signal?.aborted) return outcomeOf(run);
    delay = events.length > 0 ? POLL_MIN_MS : Math.min(delay * 2, POLL_MAX_MS);
    if (events.length === 0) await options.onIdle?.();
    await new Promise((resolve) => setTimeout(resolve, Math.min(delay, left)));
  }
}
