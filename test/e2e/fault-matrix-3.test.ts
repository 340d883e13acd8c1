/**
 * The fault matrix, third part (issue 16): the boundaries parts 1 and 2 leave
 * out, on the template-deployed local stack.
 * - REST intake killed before / after each durable write (run record, lane,
 *   queue), past its timeout, throttled past the SDK's retries: the client
 *   retries with its idempotency key (what a client does with a 5xx) and the
 *   run starts once.
 * - run-finalize (FinalizeRun: the Attempt's inline finalize gave up) killed
 *   before / after its terminal write, past its timeout, throttled.
 * - The lane hand-off to the next queued message killed between its writes,
 *   in the Attempt that finalized inline and in run-finalize.
 * - decide killed around the run start it repeats after a first attempt died.
 * No case runs the sweeper (the template's every-minute tick is off): each
 * outcome is reached by the functions' own retries, the state machine's
 * Retry/Catch, or the client's retry.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FaultPlan, type FaultRule } from "../../infra/local/faults";
import { startLocalStack, type LocalStack } from "../../infra/local/stack";
import { getLane } from "../../shared/aws/lanes";
import { getRun } from "../../shared/aws/runs";
import { loadAgentConfig } from "../../shared/config/config";
import { runIdForIdempotencyKey } from "../../shared/core/ids";
import { endedRun, executionsOf, expectRunInvariants } from "../support/fault-invariants";
import { TestWsClient } from "../support/ws-client";
import { GatedModel } from "../support/gated-model";

const plan = new FaultPlan();
const model = new GatedModel();
let stack: LocalStack;

beforeAll(async () => {
  const baseURL = await model.start();
  const config = loadAgentConfig({ OPENAI_API_KEY: "test", OPENAI_BASE_URL: baseURL, MODEL: "openai/gpt-4o" });
  stack = await startLocalStack({ config, faults: plan, sweepIntervalMs: 0, asyncRetryDelayMs: 50 });
}, 240_000);
afterAll(async () => {
  await stack?.close();
  await model.close();
});

const kill = (when: "before" | "after") => ({ kind: "kill", when }) as const;
const THROTTLE = { kind: "throttle" } as const;
const PTEE = { kind: "throttle", code: "ProvisionedThroughputExceededException" } as const;

/** The ids of a case: its session, its run, and the follow-up queued behind it (hand-off cases). */
interface Ids {
  s: string;
  runId: string;
  nextRunId: string;
}

// Durable writes by what their request body says (scoped to the case's session or run).
const runPut = ({ s }: Ids) => ["\"sk\":{\"S\":\"RUN\"}", s];
const laneAppend = ({ s }: Ids) => ["list_append", `LANE#${s}`];
const terminalWrite = ({ runId }: Ids) => [":endedAt", runId];
// The hand-off: the ended run's lane freed (activeRunId removed), then claimed for the next message.
const laneRelease = ({ s }: Ids) => ["REMOVE", "activeRunId", `LANE#${s}`];
const laneClaimOfNext = ({ s, nextRunId }: Ids) => ["activeRunId = :active", `LANE#${s}`, nextRunId];
// The Attempt's inline finalize gives up (its terminal write throttled past the client's 4 tries): FinalizeRun runs.
const inlineFinalizeGivesUp = (ids: Ids): FaultRule => ({ at: "edge", caller: "attempt", action: "dynamodb:UpdateItem", bodyIncludes: terminalWrite(ids), effect: THROTTLE, times: 4 });

interface Case {
  name: string;
  rules: (ids: Ids) => FaultRule[];
  /** Over WebSocket: the requester must get its final `res`. */
  ws?: boolean;
  /** The fault removes the connection: the final `res` cannot reach it (the run still ends). */
  gone?: boolean;
  /** A follow-up is queued behind the run before it answers: the fault hits the hand-off to it. */
  next?: boolean;
  expectError?: boolean;
}

const INTAKE_CASES: Case[] = [
  { name: "rest-api killed before the run record", rules: (ids) => [{ at: "edge", caller: "rest-api", action: "dynamodb:PutItem", bodyIncludes: runPut(ids), effect: kill("before") }] },
  { name: "rest-api killed after the run record", rules: (ids) => [{ at: "edge", caller: "rest-api", action: "dynamodb:PutItem", bodyIncludes: runPut(ids), effect: kill("after") }] },
  { name: "rest-api killed before joining the lane", rules: (ids) => [{ at: "edge", caller: "rest-api", action: "dynamodb:UpdateItem", bodyIncludes: laneAppend(ids), effect: kill("before") }] },
  { name: "rest-api killed after joining the lane", rules: (ids) => [{ at: "edge", caller: "rest-api", action: "dynamodb:UpdateItem", bodyIncludes: laneAppend(ids), effect: kill("after") }] },
  { name: "rest-api killed before SendMessage", rules: ({ runId }) => [{ at: "edge", caller: "rest-api", action: "sqs:SendMessage", bodyIncludes: runId, effect: kill("before") }] },
  { name: "rest-api killed after SendMessage", rules: ({ runId }) => [{ at: "edge", caller: "rest-api", action: "sqs:SendMessage", bodyIncludes: runId, effect: kill("after") }] },
  { name: "rest-api past its timeout after the run record", rules: (ids) => [{ at: "edge", caller: "rest-api", action: "dynamodb:PutItem", bodyIncludes: runPut(ids), effect: { kind: "timeout" } }] },
  { name: "Lambda TooManyRequestsException invoking rest-api", rules: () => [{ at: "invoke", function: "rest-api", effect: THROTTLE }] },
  { name: "DynamoDB ProvisionedThroughputExceededException (x4, past the client's tries) on rest-api's run record", rules: (ids) => [{ at: "edge", caller: "rest-api", action: "dynamodb:PutItem", bodyIncludes: runPut(ids), effect: PTEE, times: 4 }] },
  { name: "DynamoDB ThrottlingException (x4) on rest-api's lane join", rules: (ids) => [{ at: "edge", caller: "rest-api", action: "dynamodb:UpdateItem", bodyIncludes: laneAppend(ids), effect: THROTTLE, times: 4 }] },
  { name: "SQS throttling (x3, past the SQS client's tries) on rest-api's SendMessage", rules: ({ runId }) => [{ at: "edge", caller: "rest-api", action: "sqs:SendMessage", bodyIncludes: runId, effect: THROTTLE, times: 3 }] },
];

const FINALIZE_CASES: Case[] = [
  { name: "run-finalize killed before its terminal write", ws: true, rules: (ids) => [inlineFinalizeGivesUp(ids), { at: "edge", caller: "run-finalize", action: "dynamodb:UpdateItem", bodyIncludes: terminalWrite(ids), effect: kill("before") }] },
  { name: "run-finalize killed after its terminal write", ws: true, rules: (ids) => [inlineFinalizeGivesUp(ids), { at: "edge", caller: "run-finalize", action: "dynamodb:UpdateItem", bodyIncludes: terminalWrite(ids), effect: kill("after") }] },
  { name: "run-finalize past its timeout after its terminal write", ws: true, rules: (ids) => [inlineFinalizeGivesUp(ids), { at: "edge", caller: "run-finalize", action: "dynamodb:UpdateItem", bodyIncludes: terminalWrite(ids), effect: { kind: "timeout" } }] },
  { name: "Lambda TooManyRequestsException invoking run-finalize", ws: true, rules: (ids) => [inlineFinalizeGivesUp(ids), { at: "invoke", function: "run-finalize", effect: THROTTLE }] },
  { name: "DynamoDB ProvisionedThroughputExceededException (x4) on run-finalize's terminal write", ws: true, rules: (ids) => [inlineFinalizeGivesUp(ids), { at: "edge", caller: "run-finalize", action: "dynamodb:UpdateItem", bodyIncludes: terminalWrite(ids), effect: PTEE, times: 4 }] },
  { name: "PostToConnection 429 (x3) on run-finalize's posts", ws: true, rules: (ids) => [inlineFinalizeGivesUp(ids), { at: "edge", caller: "run-finalize", action: "execute-api:ManageConnections", effect: { kind: "status", statusCode: 429, errorType: "LimitExceededException" }, times: 3 }] },
  { name: "PostToConnection 500 (x3) on run-finalize's posts", ws: true, rules: (ids) => [inlineFinalizeGivesUp(ids), { at: "edge", caller: "run-finalize", action: "execute-api:ManageConnections", effect: { kind: "status", statusCode: 500, errorType: "InternalServerErrorException" }, times: 3 }] },
  { name: "PostToConnection GoneException on run-finalize's final answer", ws: true, gone: true, rules: (ids) => [inlineFinalizeGivesUp(ids), { at: "edge", caller: "run-finalize", action: "execute-api:ManageConnections", bodyIncludes: '"type":"res"', effect: { kind: "status", statusCode: 410, errorType: "GoneException" } }] },
];

const HANDOFF_CASES: Case[] = [
  { name: "attempt (inline finalize) killed after freeing the lane, before the next message's claim", next: true, rules: (ids) => [{ at: "edge", caller: "attempt", action: "dynamodb:UpdateItem", bodyIncludes: laneRelease(ids), effect: kill("after") }] },
  { name: "attempt (inline finalize) killed after claiming the lane for the next message (before its StartExecution)", next: true, rules: (ids) => [{ at: "edge", caller: "attempt", action: "dynamodb:UpdateItem", bodyIncludes: laneClaimOfNext(ids), effect: kill("after") }] },
  { name: "attempt (inline finalize) killed before the next message's StartExecution", next: true, rules: ({ nextRunId }) => [{ at: "edge", caller: "attempt", action: "states:StartExecution", bodyIncludes: nextRunId, effect: kill("before") }] },
  { name: "run-finalize killed after claiming the lane for the next message", next: true, rules: (ids) => [inlineFinalizeGivesUp(ids), { at: "edge", caller: "run-finalize", action: "dynamodb:UpdateItem", bodyIncludes: laneClaimOfNext(ids), effect: kill("after") }] },
];

// The first Attempt dies before it starts the run: RecoverAttempt (decide) starts it again, and is faulted there.
const firstAttemptDies = (): FaultRule => ({ at: "edge", caller: "attempt", action: "dynamodb:UpdateItem", bodyIncludes: ":running", effect: kill("before") });
const DECIDE_CASES: Case[] = [
  { name: "decide killed before its run start write (after the first attempt died)", expectError: true, rules: () => [firstAttemptDies(), { at: "edge", caller: "decide", action: "dynamodb:UpdateItem", bodyIncludes: ":running", effect: kill("before") }] },
  { name: "decide killed after its run start write", expectError: true, rules: () => [firstAttemptDies(), { at: "edge", caller: "decide", action: "dynamodb:UpdateItem", bodyIncludes: ":running", effect: kill("after") }] },
  { name: "DynamoDB ThrottlingException (x2) on decide's run start write", rules: () => [firstAttemptDies(), { at: "edge", caller: "decide", action: "dynamodb:UpdateItem", bodyIncludes: ":running", effect: THROTTLE, times: 2 }] },
];

/** POST /v1/agent until it is accepted: a client retries a 5xx, a 429 or a dropped connection with the same idempotency key. */
async function postUntilAccepted(body: Record<string, unknown>): Promise<{ runId: string; status: string; tries: number }> {
  for (let tries = 1; ; tries += 1) {
    let why: string;
    try {
      const res = await fetch(`${stack.restUrl}/v1/agent`, { method: "POST", headers: { authorization: `Bearer ${stack.authToken}`, "content-type": "application/json" }, body: JSON.stringify(body) });
      const answer = (await res.json().catch(() => ({}))) as { runId?: string; status?: string };
      // 202 accepted; 200 when a retry finds the run its first try created (`cached`).
      if (res.status === 202 || res.status === 200) return { runId: answer.runId!, status: answer.status!, tries };
      why = `${res.status} ${JSON.stringify(answer)}`;
      if (res.status !== 429 && res.status < 500) throw new Error(`intake answered ${why}`);
    } catch (error) {
      if (String(error).includes("intake answered")) throw error;
      why = String(error);
    }
    if (tries >= 8) throw new Error(`intake kept failing: ${why}`);
    await new Promise((resolve) => setTimeout(resolve, 250 * tries));
  }
}

async function untilStatus(runId: string, status: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while ((await getRun(stack.deps.db, runId))?.status !== status) {
    if (Date.now() > deadline) throw new Error(`run ${runId} never became ${status}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function runCase(c: Case, index: number, group: string): void {
  it(c.name, async () => {
    const s = `fault3-${group}-${index}`;
    const ids: Ids = { s, runId: runIdForIdempotencyKey(`k-${s}`), nextRunId: runIdForIdempotencyKey(`k-${s}-next`) };
    plan.clear();
    plan.add(...c.rules(ids));
    const message = `{${s}} hello`;
    // A follow-up must wait behind the run: its answer is held until the follow-up is queued.
    const gate = c.next ? model.hold(s) : undefined;
    let client: TestWsClient | undefined;
    if (c.ws) {
      client = await TestWsClient.open(stack.webSocketUrl);
      await client.request("connect", { auth: { token: stack.authToken } });
      const res = await client.request("agent", { sessionKey: s, message, idempotencyKey: `k-${s}` }, 120_000);
      expect(res.payload.runId).toBe(ids.runId);
    } else expect((await postUntilAccepted({ sessionKey: s, message, idempotencyKey: `k-${s}`, queue: { mode: "followup" } })).runId).toBe(ids.runId);
    if (c.next) {
      const next = await postUntilAccepted({ sessionKey: s, message: `{${s}-next} and then`, idempotencyKey: `k-${s}-next`, queue: { mode: "followup" } });
      expect(next.runId).toBe(ids.nextRunId);
      await untilStatus(ids.nextRunId, "queued");
      gate!();
    }
    const run = await endedRun(stack, ids.runId, { sweep: false });
    const nextRun = c.next ? await endedRun(stack, ids.nextRunId, { sweep: false }) : undefined;
    await stack.idle();
    expect(plan.pending, "the fault fired").toBe(0);
    if (nextRun) {
      // Both messages answered, each once, in acceptance order; the lane released after the second.
      expect(run.status).toBe("ok");
      expect(nextRun.status).toBe("ok");
      expect(nextRun.startedAt!).toBeGreaterThanOrEqual(run.endedAt!);
      expect(model.answers(`${s}-next`)).toBe(1);
      expect(await executionsOf(stack, ids.nextRunId), "one execution for the follow-up").toHaveLength(1);
      expect((await getLane(stack.deps.db, s)).accepted, "two messages joined the lane").toBe(2);
    } else {
      await expectRunInvariants(stack, run, c.expectError ? "error" : "ok");
      expect((await getLane(stack.deps.db, s)).accepted, "one message joined the lane (a retried intake started no second run)").toBe(1);
    }
    if (!c.expectError) expect(model.answers(s), "one model answer for the message").toBe(1);
    expect(await executionsOf(stack, ids.runId), "one execution").toHaveLength(1);
    if (client && c.gone) await client.close();
    else if (client) {
      await client.waitFor((f) => f.type === "res" && f.payload?.runId === ids.runId && f.payload?.status !== "accepted", 120_000);
      await client.close();
    }
  }, 300_000);
}

describe("fault matrix, part 3: REST intake (the client retries with its idempotency key)", () => {
  for (const [index, c] of INTAKE_CASES.entries()) runCase(c, index, "intake");
});

describe("fault matrix, part 3: run-finalize", () => {
  for (const [index, c] of FINALIZE_CASES.entries()) runCase(c, index, "finalize");
});

describe("fault matrix, part 3: the lane hand-off to the next queued message", () => {
  for (const [index, c] of HANDOFF_CASES.entries()) runCase(c, index, "handoff");
});

describe("fault matrix, part 3: decide around the run start it repeats", () => {
  for (const [index, c] of DECIDE_CASES.entries()) runCase(c, index, "decide");
});
