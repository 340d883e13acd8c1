import type { AttemptRecord } from "../aws/attempts";
import type { FinalizeDecision, LoopState } from "../core/run-loop";

/**
 * What the outer loop adds to a run's final metadata (reference §F.51, §G):
 * the execution trace (every attempt, wasted ones included, with its model
 * and outcome), the winner, whether a fallback model was used, the loop's
 * counters, and for a failed run `error.kind` and the liveness state.
 */
export interface LoopMeta {
  trace: {
    attempts: { n: number; model: string; outcome: string; failureKind?: string }[];
    winner?: { provider: string; model: string };
    fallbackUsed: boolean;
  };
  livenessState: string;
  error?: { kind: string; message: string };
  counters?: LoopState["counters"];
  yields?: number;
}

export function loopMeta(attempts: readonly AttemptRecord[], decision: FinalizeDecision, primaryModel: string, loop?: LoopState): LoopMeta {
  const trace = attempts.map((a) => ({
    n: a.iteration,
    model: a.model,
    outcome: a.outcome.kind,
    ...(a.outcome.kind === "failed" ? { failureKind: a.outcome.failure.kind } : {}),
  }));
  const won = decision.status === "ok" ? [...attempts].reverse().find((a) => a.outcome.kind === "completed") : undefined;
  const lastModel = won?.model ?? attempts[attempts.length - 1]?.model ?? primaryModel;
  const meta: LoopMeta = {
    trace: {
      attempts: trace,
      ...(won ? { winner: splitRef(won.model) } : {}),
      fallbackUsed: lastModel !== primaryModel,
    },
    livenessState: decision.livenessState ?? defaultLiveness(decision.status),
  };
  // The caller's text only: `detail` (provider messages, execution causes with ARNs) is logged by finalize, never returned.
  if (decision.status !== "ok") meta.error = { kind: decision.errorKind ?? decision.reason, message: decision.error ?? decision.reason };
  if (loop) {
    meta.counters = loop.counters;
    meta.yields = loop.yields;
  }
  return meta;
}

function defaultLiveness(status: FinalizeDecision["status"]): string {
  if (status === "ok") return "working";
  return status === "aborted" ? "abandoned" : "blocked";
}

function splitRef(ref: string): { provider: string; model: string } {
  const slash = ref.indexOf("/");
  return { provider: ref.slice(0, slash), model: ref.slice(slash + 1) };
}
