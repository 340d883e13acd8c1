/**
 * An `agent` frame whose invocation fails on every one of Lambda's
 * asynchronous retries (review follow-up to issue 16): the client is not left
 * without an answer. Lambda's failure record reaches ws-api through the
 * WsMethodFailures queue (infra/async-invocations.ts), which answers the
 * request id with an error; the same frame sent again finishes the intake.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ASYNC_INVOCATION } from "../../infra/async-invocations";
import { FaultPlan } from "../../infra/local/faults";
import { startLocalStack, type LocalStack } from "../../infra/local/stack";
import { getLane } from "../../shared/aws/lanes";
import { RETRIES_EXHAUSTED_MESSAGE } from "../../functions/ws-api/retries-exhausted";
import { endedRun, expectRunInvariants } from "../support/fault-invariants";
import { TestWsClient } from "../support/ws-client";

const plan = new FaultPlan();
let stack: LocalStack;

beforeAll(async () => {
  stack = await startLocalStack({ faults: plan, sweepIntervalMs: 0, asyncRetryDelayMs: 50, env: {} });
}, 240_000);
afterAll(async () => stack?.close());

const TRIES = ASYNC_INVOCATION["ws-api"].retryAttempts + 1;

describe("WebSocket agent frame failing every retry", () => {
  it("answers its request id with an error, and the same frame sent again runs once", async () => {
    const sessionKey = "ws-exhausted";
    const client = await TestWsClient.open(stack.webSocketUrl);
    await client.request("connect", { auth: { token: stack.authToken } });
    plan.clear();
    // Every try dies after the run record and the lane append, before the queue send.
    plan.add({ at: "edge", caller: "ws-api", action: "sqs:SendMessage", effect: { kind: "kill", when: "before" }, times: TRIES });
    const frame = JSON.stringify({ type: "req", id: "req-exhausted", method: "agent", params: { sessionKey, message: "hello" } });
    client.sendRaw(frame);

    const failed = await client.waitFor((f) => f.type === "res" && f.id === "req-exhausted", 240_000);
    expect(failed).toMatchObject({ ok: false, error: { code: "UNAVAILABLE", message: RETRIES_EXHAUSTED_MESSAGE, details: { retryable: true, attempts: TRIES } } });
    expect(plan.pending, "every try failed").toBe(0);

    client.sendRaw(frame);
    const accepted = await client.waitFor((f) => f.type === "res" && f.id === "req-exhausted" && f.ok === true, 240_000);
    const run = await endedRun(stack, accepted.payload.runId as string);
    await stack.idle();
    await expectRunInvariants(stack, run, "ok");
    expect((await getLane(stack.deps.db, sessionKey)).accepted, "one message joined the lane").toBe(1);
    await client.close();
  }, 300_000);
});
