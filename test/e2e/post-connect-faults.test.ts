/**
 * Faults on ws-api's post-connect step: the asynchronous Invoke that
 * `$connect` makes of its own function to post `connect.challenge` and
 * enforce the auth deadline (functions/ws-api/auth-deadline.ts). Lambda runs
 * it from its async queue: a throttled try goes back to the queue without
 * using a retry, a function error is retried (ws-api: 2 retries), and a step
 * that failed every retry reaches ws-api as a failure record
 * (WsMethodFailures), which enforces the deadline the step could not. The
 * fault plan's invoke faults reach this invocation as they reach every
 * trigger's (infra/local/stack.ts, aroundInvocations).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ASYNC_INVOCATION } from "../../infra/async-invocations";
import { FaultPlan, type FaultRule } from "../../infra/local/faults";
import { startLocalStack, type LocalStack } from "../../infra/local/stack";
import { createApiKey } from "../../shared/aws/api-keys";
import { CHALLENGE_EVENT } from "../../shared/events/challenge";
import { TestWsClient } from "../support/ws-client";

const plan = new FaultPlan();
let stack: LocalStack;
let apiKey: string;

beforeAll(async () => {
  stack = await startLocalStack({ faults: plan, sweepIntervalMs: 0, asyncRetryDelayMs: 50, env: {} });
  apiKey = (await createApiKey(stack.deps.db, { tenantId: "acme", name: "ops", scopes: ["operator.admin"] })).key;
}, 240_000);
afterAll(async () => stack?.close());

/** Every try of the step fails: the first try and each of ws-api's retries. */
const EVERY_TRY = ASYNC_INVOCATION["ws-api"].retryAttempts + 1;
/** Only the step's invocations: its event is `{ agentRunner: "post-connect", ... }` (shared/events/challenge.ts). */
const stepFault = (effect: { kind: "throttle" } | { kind: "crash" }, times: number): FaultRule => ({ at: "invoke", function: "ws-api", eventIncludes: '"agentRunner":"post-connect"', effect, times });

const isChallenge = (frame: { type: string; event?: string }) => frame.type === "event" && frame.event === CHALLENGE_EVENT;
const closed = (client: TestWsClient) => new Promise<void>((resolve) => (client.closeCode !== undefined ? resolve() : client.socket.once("close", () => resolve())));

describe("ws-api's post-connect step under faults", () => {
  it("throttled more times than it has retries: put back each time, it still posts the challenge", async () => {
    plan.clear();
    plan.add(stepFault({ kind: "throttle" }, EVERY_TRY + 1));
    const client = await TestWsClient.open(stack.webSocketUrl);
    await client.waitFor(isChallenge);
    expect(plan.pending, "every throttle fired").toBe(0);
    expect(await client.request("connect", { auth: { token: stack.authToken } })).toMatchObject({ ok: true, payload: { type: "hello-ok" } });
    await stack.idle();
    expect(client.closeCode).toBeUndefined();
    await client.close();
  }, 120_000);

  it("crashed once: retried, it posts the challenge", async () => {
    plan.clear();
    plan.add(stepFault({ kind: "crash" }, 1));
    const client = await TestWsClient.open(stack.webSocketUrl);
    await client.waitFor(isChallenge);
    expect(plan.pending).toBe(0);
    expect(await client.request("connect", { auth: { token: stack.authToken } })).toMatchObject({ ok: true });
    await client.close();
  }, 120_000);

  it("crashed on every try: its failure record closes the socket that never authenticated", async () => {
    plan.clear();
    plan.add(stepFault({ kind: "crash" }, EVERY_TRY));
    const client = await TestWsClient.open(stack.webSocketUrl);
    // Only the step posts the challenge, and no try of it ran; the failure record waits out the deadline and closes.
    await closed(client);
    expect(plan.pending).toBe(0);
    expect(client.frames.filter(isChallenge)).toEqual([]);
    expect(client.closeCode).toBeDefined();
    await stack.idle();
  }, 120_000);

  it("crashed on every try: its failure record leaves a socket the $connect authorizer let in open", async () => {
    plan.clear();
    plan.add(stepFault({ kind: "crash" }, EVERY_TRY));
    const client = await TestWsClient.open(stack.webSocketUrl, { headers: { authorization: `Bearer ${apiKey}` } });
    // Idle: every try crashed and the failure record was consumed (the stack waits for the queue's consumer).
    await stack.idle();
    expect(plan.pending).toBe(0);
    expect(client.closeCode).toBeUndefined();
    expect(await client.request("sessions.list", {})).toMatchObject({ ok: true });
    await client.close();
  }, 120_000);
});
