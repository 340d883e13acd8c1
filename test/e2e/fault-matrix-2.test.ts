/**
 * The fault matrix, second part (issue 16): the boundaries the first part
 * (fault-matrix.test.ts) leaves out, on the template-deployed local stack.
 * - WebSocket intake (async route, retried as Lambda retries an async event):
 *   killed before / after each durable write, past its timeout, throttled,
 *   and PostToConnection failing on its answer. Frames carry no idempotency
 *   key, so a retry that started a second run would show (two lane entries).
 *   Failing on every retry, the frame is still answered on its request id
 *   (Lambda's failure record through WsMethodFailures, ws-api answers it).
 * - The dispatcher killed between its writes (lane claim, StartExecution, the
 *   SQS delete), and a redelivered message after the run ended.
 * - RecoverAttempt (decide) throttled, crashed, past its timeout.
 * - The sweeper crashed, past its timeout, throttled, killed after its write.
 * Each case asserts outcomes on durable state (tests/support/fault-invariants):
 * the run ends once with an answer or a clear error, one lane entry, at most
 * one execution started by the lane, event seqs gap-free, lane released,
 * and the fault really fired.
 */
import { GetQueueAttributesCommand, SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ASYNC_INVOCATION } from "../../infra/async-invocations";
import { FaultPlan, type FaultRule } from "../../infra/local/faults";
import { RETRIES_EXHAUSTED_MESSAGE } from "../../functions/ws-api/retries-exhausted";
import { ADMIN_CREDENTIALS, startLocalStack, type LocalStack } from "../../infra/local/stack";
import { getLane } from "../../shared/aws/lanes";
import { getRun } from "../../shared/aws/runs";
import { runIdForIdempotencyKey } from "../../shared/core/ids";
import { endedRun, executionsOf, expectRunInvariants } from "../support/fault-invariants";
import { TestWsClient } from "../support/ws-client";

const plan = new FaultPlan();
let stack: LocalStack;

beforeAll(async () => {
  stack = await startLocalStack({ faults: plan, sweepIntervalMs: 0, asyncRetryDelayMs: 50, env: {} });
}, 240_000);
afterAll(async () => stack?.close());

const kill = (when: "before" | "after") => ({ kind: "kill", when }) as const;
const THROTTLE = { kind: "throttle" } as const;

/** Rules of one case; `s` is the case's session key, `runId` its run (REST cases: known before the post). */
type Rules = (s: string, runId: string) => FaultRule[];

// The run record put, the lane append, the queue send: each write of the intake, for this session only.
const runPut = (s: string) => ["\"sk\":{\"S\":\"RUN\"}", s];
const laneAppend = (s: string) => ["list_append", `LANE#${s}`];
const laneClaim = (s: string) => ["activeRunId = :active", `LANE#${s}`];

interface WsCase {
  name: string;
  rules: Rules;
  /** The fault removes the connection: no answer reaches the client; the run still ends. */
  gone?: boolean;
}

const WS_CASES: WsCase[] = [
  { name: "ws-api killed before the run record", rules: (s) => [{ at: "edge", caller: "ws-api", action: "dynamodb:PutItem", bodyIncludes: runPut(s), effect: kill("before") }] },
  { name: "ws-api killed after the run record", rules: (s) => [{ at: "edge", caller: "ws-api", action: "dynamodb:PutItem", bodyIncludes: runPut(s), effect: kill("after") }] },
  { name: "ws-api killed before joining the lane", rules: (s) => [{ at: "edge", caller: "ws-api", action: "dynamodb:UpdateItem", bodyIncludes: laneAppend(s), effect: kill("before") }] },
  { name: "ws-api killed after joining the lane", rules: (s) => [{ at: "edge", caller: "ws-api", action: "dynamodb:UpdateItem", bodyIncludes: laneAppend(s), effect: kill("after") }] },
  { name: "ws-api killed before SendMessage", rules: () => [{ at: "edge", caller: "ws-api", action: "sqs:SendMessage", effect: kill("before") }] },
  { name: "ws-api killed after SendMessage", rules: () => [{ at: "edge", caller: "ws-api", action: "sqs:SendMessage", effect: kill("after") }] },
  { name: "ws-api past its timeout after the run record", rules: (s) => [{ at: "edge", caller: "ws-api", action: "dynamodb:PutItem", bodyIncludes: runPut(s), effect: { kind: "timeout" } }] },
  { name: "Lambda TooManyRequestsException invoking ws-api", rules: () => [{ at: "invoke", function: "ws-api", effect: THROTTLE }] },
  { name: "DynamoDB ProvisionedThroughputExceededException (x3) on ws-api's run record", rules: (s) => [{ at: "edge", caller: "ws-api", action: "dynamodb:PutItem", bodyIncludes: runPut(s), effect: { kind: "throttle", code: "ProvisionedThroughputExceededException" }, times: 3 }] },
  { name: "SQS throttling (x3) on ws-api's SendMessage", rules: () => [{ at: "edge", caller: "ws-api", action: "sqs:SendMessage", effect: THROTTLE, times: 3 }] },
  { name: "PostToConnection 429 (x3) on ws-api's answer", rules: () => [{ at: "edge", caller: "ws-api", action: "execute-api:ManageConnections", effect: { kind: "status", statusCode: 429, errorType: "LimitExceededException" }, times: 3 }] },
  { name: "PostToConnection 500 (x3) on ws-api's answer", rules: () => [{ at: "edge", caller: "ws-api", action: "execute-api:ManageConnections", effect: { kind: "status", statusCode: 500, errorType: "InternalServerErrorException" }, times: 3 }] },
  { name: "PostToConnection GoneException on ws-api's answer", gone: true, rules: () => [{ at: "edge", caller: "ws-api", action: "execute-api:ManageConnections", effect: { kind: "status", statusCode: 410, errorType: "GoneException" } }] },
];

interface RestCase {
  name: string;
  rules: Rules;
  expectError?: boolean;
  /** Asks for the calculator tool (the attempt crash lands between tool turns). */
  tool?: boolean;
}

// An attempt that dies after its attempt record: the state machine's Catch runs RecoverAttempt (decide).
const attemptDies = (): FaultRule => ({ at: "edge", caller: "attempt", action: "dynamodb:PutItem", bodyIncludes: "ATTEMPT#", effect: kill("after") });
// A dispatcher that dies after its lane claim: the lane names the run, no execution exists (the sweeper's work).
const dispatcherDiesAfterClaim = (s: string): FaultRule => ({ at: "edge", caller: "dispatcher", action: "dynamodb:UpdateItem", bodyIncludes: laneClaim(s), effect: kill("after") });

const REST_CASES: RestCase[] = [
  { name: "dispatcher killed before its lane claim", rules: (s) => [{ at: "edge", caller: "dispatcher", action: "dynamodb:UpdateItem", bodyIncludes: laneClaim(s), effect: kill("before") }] },
  { name: "dispatcher killed after its lane claim (before StartExecution)", rules: (s) => [dispatcherDiesAfterClaim(s)] },
  { name: "dispatcher past its timeout after its lane claim", rules: (s) => [{ at: "edge", caller: "dispatcher", action: "dynamodb:UpdateItem", bodyIncludes: laneClaim(s), effect: { kind: "timeout" } }] },
  { name: "dispatcher killed after StartExecution (the SQS delete never happens)", rules: (_s, runId) => [{ at: "edge", caller: "dispatcher", action: "states:StartExecution", bodyIncludes: runId, effect: kill("after") }] },
  { name: "DynamoDB ProvisionedThroughputExceededException (x3) on the dispatcher's lane claim", rules: (s) => [{ at: "edge", caller: "dispatcher", action: "dynamodb:UpdateItem", bodyIncludes: laneClaim(s), effect: { kind: "throttle", code: "ProvisionedThroughputExceededException" }, times: 3 }] },
  { name: "Lambda TooManyRequestsException invoking the dispatcher", rules: () => [{ at: "invoke", function: "dispatcher", effect: THROTTLE }] },
  { name: "decide (RecoverAttempt) throttled after an attempt crash", tool: true, rules: () => [attemptDies(), { at: "invoke", function: "decide", effect: THROTTLE }] },
  { name: "decide (RecoverAttempt) crashed after an attempt crash", tool: true, expectError: true, rules: () => [attemptDies(), { at: "invoke", function: "decide", effect: { kind: "crash" } }] },
  { name: "decide (RecoverAttempt) past its timeout after an attempt crash", tool: true, expectError: true, rules: () => [attemptDies(), { at: "invoke", function: "decide", effect: { kind: "timeout" } }] },
  { name: "sweeper crashed on the tick that would repair a lost dispatch", rules: (s) => [dispatcherDiesAfterClaim(s), { at: "invoke", function: "sweeper", effect: { kind: "crash" } }] },
  { name: "sweeper past its timeout on that tick", rules: (s) => [dispatcherDiesAfterClaim(s), { at: "invoke", function: "sweeper", effect: { kind: "timeout" } }] },
  { name: "sweeper throttled (Lambda TooManyRequestsException) on that tick", rules: (s) => [dispatcherDiesAfterClaim(s), { at: "invoke", function: "sweeper", effect: THROTTLE }] },
  { name: "DynamoDB ThrottlingException (x4, past the DynamoDB client's 4 tries) on the sweeper's lane read", rules: (s) => [dispatcherDiesAfterClaim(s), { at: "edge", caller: "sweeper", action: "dynamodb:GetItem", bodyIncludes: `LANE#${s}`, effect: THROTTLE, times: 4 }] },
  { name: "sweeper killed after its StartExecution", rules: (s, runId) => [dispatcherDiesAfterClaim(s), { at: "edge", caller: "sweeper", action: "states:StartExecution", bodyIncludes: runId, effect: kill("after") }] },
];

async function laneEntries(sessionKey: string): Promise<number> {
  return (await getLane(stack.deps.db, sessionKey)).accepted ?? 0;
}

describe("fault matrix, part 2: WebSocket intake (async route, Lambda's retries)", () => {
  for (const [index, c] of WS_CASES.entries()) {
    it(c.name, async () => {
      const sessionKey = `fault2-ws-${index}`;
      const client = await TestWsClient.open(stack.webSocketUrl);
      await client.request("connect", { auth: { token: stack.authToken } });
      plan.clear();
      // Armed after `connect`: the faults are for the `agent` frame's invocation.
      // Gone: a key of our own, since the client never learns the run id from an answer.
      const key = c.gone ? { idempotencyKey: `k-${sessionKey}` } : {};
      plan.add(...c.rules(sessionKey, c.gone ? runIdForIdempotencyKey(`k-${sessionKey}`) : ""));
      const id = `req-${index}`;
      client.sendRaw(JSON.stringify({ type: "req", id, method: "agent", params: { sessionKey, message: `hello ws ${index}`, ...key } }));
      // The final answer comes on the request id whatever happened to the first one (lost with a killed invocation, refused by a 429).
      const runId = c.gone
        ? runIdForIdempotencyKey(`k-${sessionKey}`)
        : ((await client.waitFor((f) => f.type === "res" && f.id === id && f.payload?.status === "ok", 240_000)).payload.runId as string);
      const run = await endedRun(stack, runId);
      await stack.idle();
      expect(plan.pending, "the fault fired").toBe(0);
      await expectRunInvariants(stack, run, "ok");
      expect(await laneEntries(sessionKey), "one message joined the lane (no second run from a retry)").toBe(1);
      expect(await executionsOf(stack, runId)).toHaveLength(1);
      await client.close();
    }, 300_000);
  }
});

describe("fault matrix, part 2: dispatcher, decide, sweeper", () => {
  // First: a queue with nothing in flight (later cases leave killed batches invisible for the visibility timeout).
  it("a message redelivered after its run ended (a lost SQS delete) starts nothing", async () => {
    plan.clear();
    const sessionKey = "fault2-redelivered";
    const idempotencyKey = `k-${sessionKey}`;
    const runId = await postAgent({ sessionKey, message: "hello once", idempotencyKey });
    const first = await endedRun(stack, runId);
    await stack.idle();
    // What SQS delivers again when the dispatcher died before its delete (a new dedupe id: a redelivery is not a new send).
    const sqs = new SQSClient({ region: "us-east-1", endpoint: stack.endpoints.sqs, credentials: ADMIN_CREDENTIALS });
    await sqs.send(new SendMessageCommand({ QueueUrl: stack.deps.runtime.queueUrl, MessageBody: JSON.stringify({ v: 1, runId }), MessageGroupId: sessionKey, MessageDeduplicationId: `${runId}-again` }));
    await untilQueueDrained(sqs);
    await stack.idle();
    const after = await getRun(stack.deps.db, runId);
    expect(after?.status).toBe(first.status);
    expect(after?.endedAt).toBe(first.endedAt);
    await expectRunInvariants(stack, after!, "ok");
    expect(await executionsOf(stack, runId)).toHaveLength(1);
  }, 300_000);

  for (const [index, c] of REST_CASES.entries()) {
    it(c.name, async () => {
      const sessionKey = `fault2-rest-${index}`;
      const idempotencyKey = `k-${sessionKey}`;
      const runId = runIdForIdempotencyKey(idempotencyKey);
      plan.clear();
      const hitsBefore = plan.hits.length;
      plan.add(...c.rules(sessionKey, runId));
      const message = c.tool ? "what is 6 * 7?" : `hello rest ${index}`;
      expect(await postAgent({ sessionKey, message, idempotencyKey })).toBe(runId);
      await untilFirstFaultFired(hitsBefore);
      const run = await endedRun(stack, runId);
      await stack.idle();
      expect(plan.pending, "the fault fired").toBe(0);
      await expectRunInvariants(stack, run, c.expectError ? "error" : "ok");
      expect(await laneEntries(sessionKey)).toBe(1);
      expect(await executionsOf(stack, runId), "one execution").toHaveLength(1);
    }, 300_000);
  }

});

async function postAgent(body: Record<string, unknown>): Promise<string> {
  const res = await fetch(`${stack.restUrl}/v1/agent`, {
    method: "POST",
    headers: { authorization: `Bearer ${stack.authToken}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(202);
  return ((await res.json()) as { runId: string }).runId;
}

/** Until the case's first fault fired (a sweeper fault must meet the dispatcher's damage, not an earlier tick). */
async function untilFirstFaultFired(hitsBefore: number): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (plan.hits.length === hitsBefore) {
    if (Date.now() > deadline) throw new Error("the case's first fault never fired");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function untilQueueDrained(sqs: SQSClient): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const out = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: stack.deps.runtime.queueUrl, AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"] }));
    const left = Number(out.Attributes?.ApproximateNumberOfMessages ?? 0) + Number(out.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0);
    if (left === 0) return;
    if (Date.now() > deadline) throw new Error(`${left} messages still on the run queue`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe("fault matrix, part 2: a WebSocket agent frame failing every retry", () => {
  const tries = ASYNC_INVOCATION["ws-api"].retryAttempts + 1;

  it("answers its request id with an error, and the same frame sent again runs once", async () => {
    const sessionKey = "fault2-ws-exhausted";
    const client = await TestWsClient.open(stack.webSocketUrl);
    await client.request("connect", { auth: { token: stack.authToken } });
    plan.clear();
    // Every try dies after the run record and the lane append, before the queue send.
    plan.add({ at: "edge", caller: "ws-api", action: "sqs:SendMessage", effect: kill("before"), times: tries });
    const frame = JSON.stringify({ type: "req", id: "req-exhausted", method: "agent", params: { sessionKey, message: "hello" } });
    client.sendRaw(frame);

    const failed = await client.waitFor((f) => f.type === "res" && f.id === "req-exhausted", 240_000);
    expect(failed).toMatchObject({ ok: false, error: { code: "UNAVAILABLE", message: RETRIES_EXHAUSTED_MESSAGE, details: { retryable: true, attempts: tries } } });
    expect(plan.pending, "every try failed").toBe(0);

    client.sendRaw(frame);
    const accepted = await client.waitFor((f) => f.type === "res" && f.id === "req-exhausted" && f.ok === true, 240_000);
    const run = await endedRun(stack, accepted.payload.runId as string);
    await stack.idle();
    await expectRunInvariants(stack, run, "ok");
    expect(await laneEntries(sessionKey), "one message joined the lane").toBe(1);
    await client.close();
  }, 300_000);
});
