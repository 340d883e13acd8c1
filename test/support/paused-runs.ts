import type { Db } from "../../shared/aws/dynamo";
import { getRun, TERMINAL_STATUSES, type RunRecord } from "../../shared/aws/runs";
import { until } from "./until";

/** A run's terminal record, once it has one (runs that pause wait on deadlines of their own: a long bound). */
export function runEnded(db: Db, runId: string, timeoutMs = 120_000): Promise<RunRecord> {
  return until(async () => {
    const run = await getRun(db, runId);
    return run && TERMINAL_STATUSES.has(run.status) ? run : undefined;
  }, `run ${runId} to end`, timeoutMs);
}

/** What the model was sent as the result of `toolCallId`, in the requests a fake Chat Completions server recorded. */
export function toolResultSent(requests: readonly { body: unknown }[], toolCallId: string): string | undefined {
  for (const request of requests) {
    const messages = (request.body as { messages?: { role: string; tool_call_id?: string; content: string }[] }).messages ?? [];
    const found = messages.find((m) => m.role === "tool" && m.tool_call_id === toolCallId);
    if (found) return found.content;
  }
  return undefined;
}
