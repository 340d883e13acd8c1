import { listAttempts } from "../aws/attempts";
import { recordRunEnded } from "../observability/run-metrics";
import { getRun, markEndedReturning, TERMINAL_STATUSES, wasFinalReplied, type RunRecord } from "../aws/runs";
import { releaseWriter } from "../aws/transcript";
import { RunNotFoundError } from "../aws/errors";
import { addUsage, ZERO_USAGE } from "../core/messages";
import { shapeReply } from "../core/reply";
import type { Decision } from "../core/run-loop";
import { handOffLane } from "../lanes/handoff";
import type { RunDeps } from "./deps";
import { replyToRequester } from "../events/final-response";
import type { FinalizeInput } from "./pointer";
import { attemptsKnownHere, openRunEmitter, takeLaneRead, takeRunForFinalize, writerReleasedHere } from "./invocation-memo";
import { loopMeta } from "./run-trace";
import { outboundReply, runEndHooks } from "./run-end-hooks";
import { lastEvents, runRecordExpiry } from "../aws/event-log";
import { deliverReplyOrRegister } from "../channels/notice-retry";
import { channelReplyContext } from "../channels/reply-context";

type Finalize = Extract<Decision, { action: "finalize" }>;

/**
 * Last task of every run, whatever happened: shape the reply (message_sending),
 * write the terminal state once, emit `lifecycle end|error`, answer the
 * requester, run message_sent and agent_end, give up the write claim and
 * hand the session lane to the next waiting run. Safe to run twice.
 */
export async function finalizeRun(deps: RunDeps, input: FinalizeInput): Promise<{ runId: string; status: string }> {
  // Inline, after this invocation's attempt: the record its loop head had (invocation-memo.ts noteRunForFinalize).
  const noted = takeRunForFinalize(deps, input.runId);
  const run = noted ?? await getRun(deps.db, input.runId);
  if (!run) throw new RunNotFoundError(input.runId);
  const decision = finalDecision(input);
  // The record the terminal write answered (undefined when another task had ended the run).
  let ended: RunRecord | undefined;
  if (!TERMINAL_STATUSES.has(run.status)) {
    ended = await endRun(deps, run, input, decision);
    // The noted record was older than the terminal write that refused: someone else ended the run
    // meanwhile (the sweeper), and this finalize goes on as a retry of that ending would.
    if (!ended && noted) await completeEndingOf(deps, run.runId);
  }
  // A retry after the terminal write (this Lambda died, timed out, or lost its answer) completes
  // what the first try may not have done: the lifecycle end event and the requester's final answer.
  else await completeEnding(deps, run);
  // The attempt of this same invocation gave the claim up already (one refused write less).
  if (!writerReleasedHere(deps, run.runId)) await releaseWriter(deps.db, { sessionId: run.sessionId, runId: run.runId });
  // Settles messages folded into this run, frees its global slot, starts the session's next run.
  await handOffLane(deps, run.runId, ended, takeLaneRead(deps, run.sessionKey));
  // A channel message's reply goes out after the lane moved on: a slow platform never holds the session.
  await deliverReplyOrRegister({ db: deps.db, channels: deps.config.channels, log: deps.log, hooks: deps.hooks }, run.runId, ended);
  const final = ended ?? await getRun(deps.db, run.runId);
  return { runId: run.runId, status: final?.status ?? decision.status };
}

function finalDecision(input: FinalizeInput): Finalize {
  if (input.decision?.action === "finalize") return input.decision;
  const reason = input.crash ? "recovery_failed" : "unexpected_decision";
  return { action: "finalize", status: "error", reason, error: "The run ended unexpectedly." };
}

async function endRun(deps: RunDeps, run: RunRecord, input: FinalizeInput, decision: Finalize): Promise<RunRecord | undefined> {
  // Folded into the run's first Attempt: the attempt it just wrote is the whole list.
  const attempts = attemptsKnownHere(deps, run.runId) ?? await listAttempts(deps.db, run.runId);
  const last = attempts[attempts.length - 1];
  const finalText = decision.status === "ok" ? (last?.finalText ?? "") : "";
  // A channel conversation: messaging-tool dedupe and the verbose tool summaries (shared/channels/reply-context.ts).
  const conversation = await channelReplyContext({ db: deps.db, channels: deps.config.channels }, run, attempts);
  const shaped = shapeReply({ status: decision.status, finalText, error: decision.error, toolErrors: last?.toolErrors ?? [], ...conversation });
  // message_sending may rewrite or cancel the reply before it is stored and delivered.
  const { payloads, sentText } = await outboundReply(deps, run, shaped);
  const usage = attempts.reduce((sum, attempt) => addUsage(sum, attempt.usage), ZERO_USAGE);
  const endedAt = deps.db.now();
  const meta = {
    durationMs: endedAt - (run.startedAt ?? run.acceptedAt),
    model: last?.model ?? run.model,
    offline: last?.offline ?? false,
    attempts: attempts.length,
    iterations: input.loop?.iteration ?? attempts.length,
    usage,
    stopReason: last?.stopReason,
    reason: decision.reason,
    // Execution trace, winner, fallback, counters; error.kind and livenessState when it failed.
    ...loopMeta(attempts, decision, run.model, input.loop),
  };
  const ended = await markEndedReturning(deps.db, run.runId, {
    status: decision.status,
    endedAt,
    expiresAt: runRecordExpiry(endedAt, deps.config.events.retentionDays),
    ...(decision.error ? { error: decision.error } : {}),
    result: { payloads, meta },
  });
  if (!ended) return undefined;
  if (decision.status !== "ok") deps.log.warn("run ended without an answer", { runId: run.runId, status: decision.status, reason: decision.reason, ...(decision.detail ? { detail: decision.detail } : {}) });
  recordRunEnded(decision.status, meta.durationMs);
  const emitter = await openRunEmitter(deps, run.runId, run.sessionKey);
  emitter.emit("lifecycle", lifecycleEnding({ status: decision.status, startedAt: run.startedAt, endedAt, error: decision.error, payloads, meta }));
  await emitter.flush();
  // The WebSocket `agent` request that started the run gets its final `res` now, from this Lambda.
  await replyToRequester(deps, run.runId, ended);
  // Once per run: only the task that wrote the terminal state gets here.
  await runEndHooks(deps, run, {
    status: decision.status,
    finalText,
    sentText,
    meta: { durationMs: meta.durationMs, model: meta.model, attempts: meta.attempts, usage, ...(meta.error ? { error: meta.error } : {}) },
  });  return ended;
}

interface Ending {
  status: string;
  startedAt?: number;
  endedAt: number;
  error?: string;
  payloads: unknown[];
  meta: Record<string, unknown> & { livenessState?: unknown; error?: { kind?: unknown } };
}

/** `lifecycle end` for an ok run, `lifecycle error` otherwise. */
function lifecycleEnding(ending: Ending): Record<string, unknown> {
  if (ending.status === "ok") {
    return { phase: "end", startedAt: ending.startedAt, endedAt: ending.endedAt, livenessState: "working", payloads: ending.payloads, meta: ending.meta };
  }
  return {
    phase: "error",
    startedAt: ending.startedAt,
    endedAt: ending.endedAt,
    error: ending.error ?? "The run failed.",
    livenessState: ending.meta.livenessState,
    status: ending.status,
    ...(ending.meta.error ? { kind: ending.meta.error.kind } : {}),
  };
}

async function completeEndingOf(deps: RunDeps, runId: string): Promise<void> {
  const fresh = await getRun(deps.db, runId);
  if (fresh && TERMINAL_STATUSES.has(fresh.status)) await completeEnding(deps, fresh);
}

/**
 * The run is already ended: emit its lifecycle end/error if the log does not
 * end with one yet (from the stored result), and answer its requester. Both
 * are idempotent: the log's last event tells whether the end went out, and
 * the replied marker whether the final `res` did (a missing one would make
 * an OpenClaw client wait forever; shared/aws/runs.ts markFinalReplied).
 */
async function completeEnding(deps: RunDeps, run: RunRecord): Promise<void> {
  const last = (await lastEvents(deps.db, run.runId))?.[0];
  const ended = last?.stream === "lifecycle" && (last.data.phase === "end" || last.data.phase === "error");
  if (!ended && run.result) {
    const emitter = await openRunEmitter(deps, run.runId, run.sessionKey);
    emitter.emit(
      "lifecycle",
      lifecycleEnding({ status: run.status, startedAt: run.startedAt, endedAt: run.endedAt ?? deps.db.now(), error: run.error, payloads: run.result.payloads, meta: run.result.meta as Ending["meta"] }),
    );
    await emitter.flush();
  }
  if (run.requester && !(await wasFinalReplied(deps.db, run))) await replyToRequester(deps, run.runId, run);
}
