import { listAttempts } from "../aws/attempts";
import { getRun, markEnded, TERMINAL_STATUSES, type RunRecord } from "../aws/runs";
import { releaseWriter } from "../aws/transcript";
import { RunNotFoundError } from "../aws/errors";
import { addUsage, ZERO_USAGE } from "../core/messages";
import { shapeReply } from "../core/reply";
import type { Decision } from "../core/run-loop";
import { RunEventEmitter } from "../events/emitter";
import { handOffLane } from "../lanes/handoff";
import type { RunDeps } from "./deps";
import { replyToRequester } from "../events/final-response";
import type { FinalizeInput } from "./pointer";
import { emitterDeps } from "./start-run";
import { loopMeta } from "./run-trace";
import { deliverChannelReply } from "../channels/deliver";

type Finalize = Extract<Decision, { action: "finalize" }>;

/**
 * Last task of every run, whatever happened: shape the reply, write the
 * terminal state once, emit `lifecycle end|error`, give up the write claim and
 * hand the session lane to the next waiting run. Safe to run twice.
 */
export async function finalizeRun(deps: RunDeps, input: FinalizeInput): Promise<{ runId: string; status: string }> {
  const run = await getRun(deps.db, input.runId);
  if (!run) throw new RunNotFoundError(input.runId);
  const decision = finalDecision(input);
  if (!TERMINAL_STATUSES.has(run.status)) await endRun(deps, run, input, decision);
  await releaseWriter(deps.db, { sessionId: run.sessionId, runId: run.runId });
  // Settles messages folded into this run, frees its global slot, starts the session's next run.
  await handOffLane(deps, run.runId);
  // A channel message's reply goes out after the lane moved on: a slow platform never holds the session.
  await deliverChannelReply({ db: deps.db, channels: deps.config.channels, log: deps.log, hooks: deps.hooks }, run.runId);
  const final = await getRun(deps.db, run.runId);
  return { runId: run.runId, status: final?.status ?? decision.status };
}

function finalDecision(input: FinalizeInput): Finalize {
  if (input.decision?.action === "finalize") return input.decision;
  const reason = input.crash ? "recovery_failed" : "unexpected_decision";
  return { action: "finalize", status: "error", reason, error: "The run ended unexpectedly." };
}

async function endRun(deps: RunDeps, run: RunRecord, input: FinalizeInput, decision: Finalize): Promise<void> {
  const attempts = await listAttempts(deps.db, run.runId);
  const last = attempts[attempts.length - 1];
  const payloads = shapeReply({
    status: decision.status,
    finalText: decision.status === "ok" ? (last?.finalText ?? "") : "",
    error: decision.error,
    toolErrors: last?.toolErrors ?? [],
  });
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
  const ended = await markEnded(deps.db, run.runId, {
    status: decision.status,
    endedAt,
    ...(decision.error ? { error: decision.error } : {}),
    result: { payloads, meta },
  });
  if (!ended) return;
  const emitter = await RunEventEmitter.open(emitterDeps(deps), run.runId, run.sessionKey);
  if (decision.status === "ok") {
    emitter.emit("lifecycle", { phase: "end", startedAt: run.startedAt, endedAt, livenessState: "working", payloads, meta });
  } else {
    emitter.emit("lifecycle", {
      phase: "error",
      startedAt: run.startedAt,
      endedAt,
      error: decision.error ?? "The run failed.",
      livenessState: meta.livenessState,
      status: decision.status,
      ...(meta.error ? { kind: meta.error.kind } : {}),
    });
  }
  await emitter.flush();
  // The WebSocket `agent` request that started the run gets its final `res` now, from this Lambda.
  await replyToRequester(deps, run.runId);
}
