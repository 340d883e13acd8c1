/**
 * The invariants every fault case asserts (issue 16), on the template-deployed
 * stack's durable state: the run ended once (terminal status, an answer or a
 * clear error), its message is in the transcript once, no orphan tool_use,
 * the event log has no gap (one start, one terminal event, last), the lane is
 * released. Outcomes, not state names or call counts.
 */
import { ListExecutionsCommand, SFNClient } from "@aws-sdk/client-sfn";
import { expect } from "vitest";
import { ADMIN_CREDENTIALS, type LocalStack } from "../../infra/local/stack";
import { readEvents } from "../../shared/aws/event-log";
import { getLane } from "../../shared/aws/lanes";
import { getRun, TERMINAL_STATUSES, type RunRecord } from "../../shared/aws/runs";
import { readEntries } from "../../shared/aws/transcript";

/** Until the run is terminal; meanwhile the sweeper's tick runs (what the every-minute schedule does, sooner). */
export async function endedRun(stack: LocalStack, runId: string, options: { sweep?: boolean; timeoutMs?: number } = {}): Promise<RunRecord> {
  const deadline = Date.now() + (options.timeoutMs ?? 240_000);
  for (;;) {
    const run = await getRun(stack.deps.db, runId);
    if (run && TERMINAL_STATUSES.has(run.status)) return run;
    if (Date.now() > deadline) throw new Error(`run ${runId} did not end (${run?.status})`);
    if (options.sweep !== false) await stack.sweepNow().catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

export async function expectRunInvariants(stack: LocalStack, run: RunRecord, expected: "ok" | "error"): Promise<void> {
  expect(run.status, JSON.stringify({ error: run.error, meta: run.result?.meta })).toBe(expected);
  if (expected === "ok") expect(run.result?.payloads.length).toBeGreaterThan(0);
  else expect(run.error, "a clear error").toMatch(/\w/);
  const entries = await readEntries(stack.deps.db, run.sessionId);
  const messages = entries.filter((e: any) => e.kind === undefined || e.kind === "message").map((e: any) => e.message ?? e);
  const users = messages.filter((m: any) => m.role === "user").length;
  // Answered: its message once. Ended with an error before its attempt: at most once.
  if (expected === "ok") expect(users, "the message is in the transcript once").toBe(1);
  else expect(users, "the message is in the transcript at most once").toBeLessThanOrEqual(1);
  const toolUses = messages.flatMap((m: any) => (Array.isArray(m.content) ? m.content : [])).filter((b: any) => b.type === "tool_call").map((b: any) => b.id);
  const results = new Set(messages.filter((m: any) => m.role === "tool_result").map((m: any) => m.toolCallId));
  for (const id of toolUses) expect(results.has(id), `tool_use ${id} has its result`).toBe(true);
  const log = await readEvents(stack.deps.db, run.runId, 0, 1000);
  expect(log.map((e) => e.seq), "event seqs gap-free").toEqual(log.map((_, i) => i + 1));
  const terminal = log.filter((e) => e.stream === "lifecycle" && (e.data.phase === "end" || e.data.phase === "error"));
  expect(terminal, "one terminal event").toHaveLength(1);
  expect(log[log.length - 1].stream).toBe("lifecycle");
  expect(log.filter((e) => e.stream === "lifecycle" && e.data.phase === "start").length).toBeLessThanOrEqual(1);
  await expectLaneReleased(stack, run.sessionKey);
}

export async function expectLaneReleased(stack: LocalStack, sessionKey: string): Promise<void> {
  const lane = await getLane(stack.deps.db, sessionKey);
  expect(lane.activeRunId, "lane released").toBeUndefined();
  expect(lane.waiting, "nothing left waiting").toHaveLength(0);
}

/** The Step Functions executions of a run (`<runId>` and any re-drive `<runId>-r<n>`). */
export async function executionsOf(stack: LocalStack, runId: string): Promise<string[]> {
  const sfn = new SFNClient({ region: "us-east-1", endpoint: stack.endpoints.stepFunctions, credentials: ADMIN_CREDENTIALS });
  const names: string[] = [];
  let nextToken: string | undefined;
  do {
    const page = await sfn.send(new ListExecutionsCommand({ stateMachineArn: stack.deps.runtime.stateMachineArn, maxResults: 1000, nextToken }));
    for (const execution of page.executions ?? []) if (execution.name === runId || execution.name?.startsWith(`${runId}-`)) names.push(execution.name);
    nextToken = page.nextToken;
  } while (nextToken);
  return names;
}
