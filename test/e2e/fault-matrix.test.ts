/**
 * Faults at the boundaries of the template-deployed local stack (issue 16):
 * each case arms one fault (infra/local/faults.ts), sends one message on a
 * fresh session and asserts the invariants: the run ends exactly once with a
 * terminal status and an answer, its message is in the transcript once, no
 * orphan tool_use, the event log has no gap (one start, the terminal event
 * last), the lane is released, and the fault really fired. The table is the
 * matrix of docs/fault-tolerance.md.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FaultPlan, type FaultRule } from "../../infra/local/faults";
import { startLocalStack, type LocalStack } from "../../infra/local/stack";
import { getLane } from "../../shared/aws/lanes";
import { readEntries } from "../../shared/aws/transcript";
import { getRun } from "../../shared/aws/runs";
import { readEvents } from "../../shared/aws/event-log";
import { TestWsClient } from "../support/ws-client";

const plan = new FaultPlan();
let stack: LocalStack;

beforeAll(async () => {
  stack = await startLocalStack({ faults: plan, sweepIntervalMs: 0, asyncRetryDelayMs: 50, env: {} });
});
afterAll(async () => stack?.close());

interface Case {
  name: string;
  rules: FaultRule[];
  /** Over WebSocket (the requester gets its final `res`); REST otherwise. */
  ws?: boolean;
  /** Asks for the calculator tool (a tool_use / tool_result pair in the transcript). */
  tool?: boolean;
  /** Ends `error` by design (nothing left to retry); the answer is the error. */
  expectError?: boolean;
  /** The run ends in the loop execution the run machine handed it to: no re-drive rescued it. */
  handedOff?: boolean;
}

const CASES: Case[] = [
  // The first Attempt task starts the run and the last one finalizes it (shared/run/folded-step.ts).
  { name: "first attempt killed before markRunning", rules: [{ at: "edge", caller: "attempt", action: "dynamodb:UpdateItem", bodyIncludes: ":running", effect: { kind: "kill", when: "before" } }] },
  { name: "first attempt killed after markRunning", rules: [{ at: "edge", caller: "attempt", action: "dynamodb:UpdateItem", bodyIncludes: ":running", effect: { kind: "kill", when: "after" } }] },
  // The run start's lifecycle `start` is logged beside the attempt's first reads, not before them (issue 15).
  { name: "first attempt killed before its lifecycle start is logged", rules: [{ at: "edge", caller: "attempt", action: "dynamodb:PutItem", bodyIncludes: '"phase":{"S":"start"}', effect: { kind: "kill", when: "before" } }] },
  { name: "first attempt killed after its lifecycle start is logged", rules: [{ at: "edge", caller: "attempt", action: "dynamodb:PutItem", bodyIncludes: '"phase":{"S":"start"}', effect: { kind: "kill", when: "after" } }] },
  { name: "attempt killed before its attempt record", tool: true, rules: [{ at: "edge", caller: "attempt", action: "dynamodb:PutItem", bodyIncludes: "ATTEMPT#", effect: { kind: "kill", when: "before" } }] },
  { name: "attempt killed after its attempt record", tool: true, rules: [{ at: "edge", caller: "attempt", action: "dynamodb:PutItem", bodyIncludes: "ATTEMPT#", effect: { kind: "kill", when: "after" } }] },
  { name: "attempt past its Lambda timeout", rules: [{ at: "edge", caller: "attempt", action: "dynamodb:PutItem", bodyIncludes: "ATTEMPT#", effect: { kind: "timeout" } }] },
  { name: "attempt killed before its inline terminal write", ws: true, rules: [{ at: "edge", caller: "attempt", action: "dynamodb:UpdateItem", bodyIncludes: ":endedAt", effect: { kind: "kill", when: "before" } }] },
  { name: "attempt killed after its inline terminal write", ws: true, rules: [{ at: "edge", caller: "attempt", action: "dynamodb:UpdateItem", bodyIncludes: ":endedAt", effect: { kind: "kill", when: "after" } }] },
  { name: "attempt past its timeout after its inline terminal write", ws: true, rules: [{ at: "edge", caller: "attempt", action: "dynamodb:UpdateItem", bodyIncludes: ":endedAt", effect: { kind: "timeout" } }] },
  // The run machine's Attempt hands an unfinished run to the loop machine (shared/run/hand-off.ts). Five throttled
  // terminal writes make its inline finalize give up, so it hands the finalize on; then it dies around the hand-off.
  { name: "attempt killed after starting the loop execution it hands the run to, before naming it on the run", handedOff: true, rules: [
    { at: "edge", action: "dynamodb:UpdateItem", bodyIncludes: ":endedAt", effect: { kind: "throttle" }, times: 5 },
    { at: "edge", caller: "attempt", action: "states:StartExecution", effect: { kind: "kill", when: "after" } },
  ] },
  { name: "attempt killed after naming its hand-off on the run", handedOff: true, rules: [
    { at: "edge", action: "dynamodb:UpdateItem", bodyIncludes: ":endedAt", effect: { kind: "throttle" }, times: 5 },
    { at: "edge", caller: "attempt", action: "dynamodb:UpdateItem", bodyIncludes: ["executionArn = :arn", "run-continued"], effect: { kind: "kill", when: "after" } },
  ] },
  { name: "Step Functions throttling on the hand-off's StartExecution", handedOff: true, rules: [
    { at: "edge", action: "dynamodb:UpdateItem", bodyIncludes: ":endedAt", effect: { kind: "throttle" }, times: 5 },
    { at: "edge", caller: "attempt", action: "states:StartExecution", effect: { kind: "throttle" }, times: 2 },
  ] },
  { name: "Lambda TooManyRequestsException invoking attempt", rules: [{ at: "invoke", function: "attempt", effect: { kind: "throttle" } }] },
  // No case throttles run-finalize's invocation: a clean run never invokes it (the Attempt finalizes inline).
  { name: "DynamoDB ThrottlingException (x2) on the attempt's reads", rules: [{ at: "edge", caller: "attempt", action: "dynamodb:Query", effect: { kind: "throttle" }, times: 2 }] },
  { name: "DynamoDB ProvisionedThroughputExceededException (x4, past the DynamoDB client's 4 tries) on the attempt's record", rules: [{ at: "edge", caller: "attempt", action: "dynamodb:PutItem", bodyIncludes: "ATTEMPT#", effect: { kind: "throttle", code: "ProvisionedThroughputExceededException" }, times: 4 }] },
  // Any caller: the inline finalize's SDK tries take what they meet; if it gives up, FinalizeRun's take the rest.
  { name: "DynamoDB ThrottlingException (x5) on the terminal write", ws: true, rules: [{ at: "edge", action: "dynamodb:UpdateItem", bodyIncludes: ":endedAt", effect: { kind: "throttle" }, times: 5 }] },
  { name: "SQS throttling on the intake's SendMessage", rules: [{ at: "edge", caller: "rest-api", action: "sqs:SendMessage", effect: { kind: "throttle" }, times: 2 }] },
  { name: "Step Functions throttling on the dispatcher's StartExecution", rules: [{ at: "edge", caller: "dispatcher", action: "states:StartExecution", effect: { kind: "throttle" }, times: 2 }] },
  { name: "PostToConnection 429 on the attempt's events", ws: true, rules: [{ at: "edge", caller: "attempt", action: "execute-api:ManageConnections", effect: { kind: "status", statusCode: 429, errorType: "LimitExceededException" }, times: 3 }] },
  { name: "PostToConnection 500 on the attempt's events", ws: true, rules: [{ at: "edge", caller: "attempt", action: "execute-api:ManageConnections", effect: { kind: "status", statusCode: 500, errorType: "InternalServerErrorException" }, times: 3 }] },
  { name: "PostToConnection GoneException on the final answer", ws: true, rules: [{ at: "edge", caller: "attempt", action: "execute-api:ManageConnections", bodyIncludes: '"type":"res"', effect: { kind: "status", statusCode: 410, errorType: "GoneException" } }] },
];

async function restAgent(sessionKey: string, message: string): Promise<string> {
  const res = await fetch(`${stack.restUrl}/v1/agent`, {
    method: "POST",
    headers: { authorization: `Bearer ${stack.authToken}`, "content-type": "application/json" },
    body: JSON.stringify({ sessionKey, message, idempotencyKey: `k-${sessionKey}` }),
  });
  expect(res.status).toBe(202);
  return ((await res.json()) as { runId: string }).runId;
}

async function ended(runId: string) {
  const deadline = Date.now() + 240_000;
  for (;;) {
    const run = await getRun(stack.deps.db, runId);
    if (run && ["ok", "error", "timeout", "aborted"].includes(run.status)) return run;
    if (Date.now() > deadline) throw new Error(`run ${runId} did not end (${run?.status})`);
    // A message the dispatcher could not start is redelivered after its visibility timeout; the sweeper's tick is quicker.
    await stack.sweepNow();
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe("fault matrix on the template-deployed stack", () => {
  for (const [index, c] of CASES.entries()) {
    it(c.name, async () => {
      plan.clear();
      plan.add(...c.rules);
      const sessionKey = `fault-${index}`;
      const message = c.tool ? "what is 6 * 7?" : `hello from case ${index}`;
      let client: TestWsClient | undefined;
      let runId: string;
      if (c.ws) {
        client = await TestWsClient.open(stack.webSocketUrl);
        await client.request("connect", { auth: { token: stack.authToken } });
        const res = await client.request("agent", { sessionKey, message, idempotencyKey: `k-${sessionKey}` });
        runId = res.payload.runId as string;
      } else runId = await restAgent(sessionKey, message);

      const run = await ended(runId);
      await stack.idle();
      expect(plan.pending, "the fault fired").toBe(0);
      // Ends exactly once, with an answer.
      expect(run.status, `${run.error} ${JSON.stringify(run.result?.meta?.reason)}`).toBe(c.expectError ? "error" : "ok");
      expect(run.result?.payloads.length).toBeGreaterThan(0);
      if (c.handedOff) expect(run.executionArn, "the run record names").toBe(stack.deps.executions.executionArn!(`${runId}-l`));
      // The message is in the transcript once, its answer after it; no orphan tool_use.
      const entries = await readEntries(stack.deps.db, run.sessionId);
      const messages = entries.filter((e: any) => e.kind === undefined || e.kind === "message").map((e: any) => e.message ?? e);
      const users = messages.filter((m: any) => m.role === "user");
      expect(users).toHaveLength(1);
      const toolUses = messages.flatMap((m: any) => (Array.isArray(m.content) ? m.content : [])).filter((b: any) => b.type === "tool_call").map((b: any) => b.id);
      const results = new Set(messages.filter((m: any) => m.role === "tool_result").map((m: any) => m.toolCallId));
      for (const id of toolUses) expect(results.has(id), `tool_use ${id} has its result`).toBe(true);
      // Event log: no gap, one start, the terminal event last.
      const log = await readEvents(stack.deps.db, runId);
      expect(log.map((e) => e.seq)).toEqual(log.map((_, i) => i + 1));
      expect(log.filter((e) => e.stream === "lifecycle" && e.data.phase === "start")).toHaveLength(1);
      expect(log.filter((e) => e.stream === "lifecycle" && (e.data.phase === "end" || e.data.phase === "error"))).toHaveLength(1);
      expect(log[log.length - 1].stream).toBe("lifecycle");
      // The lane is released.
      const lane = await getLane(stack.deps.db, sessionKey);
      expect(lane.activeRunId).toBeUndefined();
      expect(lane.waiting).toHaveLength(0);
      if (client) {
        // The requester got its final answer (unless the fault removed its connection).
        const gone = c.rules.some((r) => r.effect.kind === "status" && r.effect.statusCode === 410);
        if (!gone) await client.waitFor((f) => f.type === "res" && f.payload?.runId === runId && f.payload?.status !== "accepted");
        await client.close();
      }
    }, 300_000);
  }
});
