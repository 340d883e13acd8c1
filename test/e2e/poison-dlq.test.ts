/**
 * Poison messages through the deployed local stack (issue 16): a run queue
 * message the dispatcher keeps failing on reaches the DLQ after the
 * template's maxReceiveCount (the RedrivePolicy the local deploy gives
 * fauxqs), with its reason recorded under its message id; nothing retries
 * forever. Nothing accepted is lost with it: intake put the run in its lane
 * before queueing the pointer, so the sweeper's next tick starts the run and
 * it ends with its answer; the lane is not left busy. A malformed body goes
 * the same way, with a PoisonMessageError reason.
 *
 * Timing only: the run queue's visibility timeout is shortened to 10 s (the
 * template's 180 s would make five receives take 15 minutes; still longer
 * than a failing dispatch, so receives never overlap); the receive count
 * that dead-letters a message is the template's.
 */
import { GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageCommand, SetQueueAttributesCommand, SQSClient, type Message } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FaultPlan } from "../../infra/local/faults";
import { ADMIN_CREDENTIALS, startLocalStack, type LocalStack } from "../../infra/local/stack";
import { getDispatchFailure } from "../../shared/aws/dispatch-failures";
import { getRun } from "../../shared/aws/runs";
import { runIdForIdempotencyKey } from "../../shared/core/ids";
import { endedRun, executionsOf, expectRunInvariants } from "../support/fault-invariants";

const plan = new FaultPlan();
let stack: LocalStack;
let sqs: SQSClient;
let queueUrl: string;
let dlqUrl: string;
let maxReceiveCount: number;

beforeAll(async () => {
  stack = await startLocalStack({ faults: plan, sweepIntervalMs: 0, env: {} });
  sqs = new SQSClient({ region: "us-east-1", endpoint: stack.endpoints.sqs, credentials: ADMIN_CREDENTIALS });
  queueUrl = stack.deps.runtime.queueUrl!;
  const attributes = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ["RedrivePolicy"] }));
  const policy = JSON.parse(attributes.Attributes?.RedrivePolicy ?? "{}") as { deadLetterTargetArn: string; maxReceiveCount: number | string };
  maxReceiveCount = Number(policy.maxReceiveCount);
  dlqUrl = stack.deployed.queueUrlForArn(policy.deadLetterTargetArn)!;
  await sqs.send(new SetQueueAttributesCommand({ QueueUrl: queueUrl, Attributes: { VisibilityTimeout: "10" } }));
}, 240_000);
afterAll(async () => {
  sqs?.destroy();
  await stack?.close();
});

/** The run queue's redrive policy, as the stack was synthesized (the FIFO queue with a DLQ). */
function templateMaxReceiveCount(): number {
  const queues = Object.values(stack.assembly.template.Resources ?? {}).filter((r) => r.Type === "AWS::SQS::Queue" && r.Properties?.RedrivePolicy && r.Properties?.FifoQueue);
  expect(queues).toHaveLength(1);
  return Number((queues[0].Properties!.RedrivePolicy as { maxReceiveCount: number }).maxReceiveCount);
}

async function untilDeadLettered(body: string): Promise<Message> {
  const deadline = Date.now() + 240_000;
  for (;;) {
    const out = await sqs.send(new ReceiveMessageCommand({ QueueUrl: dlqUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1, VisibilityTimeout: 0 }));
    const found = (out.Messages ?? []).find((m) => m.Body === body);
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no DLQ message ${body}`);
  }
}

describe("poison run-queue messages reach the DLQ (deployed stack)", () => {
  it("a pointer the dispatcher keeps failing on is dead-lettered after maxReceiveCount; its run still ends through its lane", async () => {
    expect(maxReceiveCount).toBe(templateMaxReceiveCount());
    const sessionKey = "poison-run";
    const runId = runIdForIdempotencyKey(`k-${sessionKey}`);
    // Step Functions refuses every start the dispatcher makes for this run (past the SDK's own retries, on every receive).
    plan.add({ at: "edge", caller: "dispatcher", action: "states:StartExecution", bodyIncludes: runId, effect: { kind: "throttle" }, times: 1000 });
    const res = await fetch(`${stack.restUrl}/v1/agent`, {
      method: "POST",
      headers: { authorization: `Bearer ${stack.authToken}`, "content-type": "application/json" },
      body: JSON.stringify({ sessionKey, message: "hello through the DLQ", idempotencyKey: `k-${sessionKey}` }),
    });
    expect(res.status).toBe(202);
    const parked = await untilDeadLettered(JSON.stringify({ v: 1, runId }));
    const failure = await getDispatchFailure(stack.deps.db, parked.MessageId!);
    expect(failure).toMatchObject({ runId, groupId: sessionKey, errorName: "ThrottlingException", receiveCount: maxReceiveCount, failures: maxReceiveCount });
    expect(failure?.reason).toMatch(/Rate exceeded/);
    // Visibly waiting, not lost: the run is accepted and owns its lane, no execution.
    expect((await getRun(stack.deps.db, runId))?.status).toMatch(/accepted|queued/);
    expect(await executionsOf(stack, runId)).toHaveLength(0);
    plan.clear();
    // The sweeper's tick (every minute in the template) starts it from the lane.
    const run = await endedRun(stack, runId);
    await stack.idle();
    await expectRunInvariants(stack, run, "ok");
    expect(await executionsOf(stack, runId)).toHaveLength(1);
  }, 400_000);

  it("a malformed body is dead-lettered with a PoisonMessageError reason and blocks nothing", async () => {
    const body = "{not a run pointer";
    await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body, MessageGroupId: "poison-body", MessageDeduplicationId: "poison-body-1" }));
    const parked = await untilDeadLettered(body);
    const failure = await getDispatchFailure(stack.deps.db, parked.MessageId!);
    expect(failure).toMatchObject({ groupId: "poison-body", errorName: "PoisonMessageError", receiveCount: maxReceiveCount });
    expect(failure?.reason).toMatch(/is not a run pointer/);
    // The same group still flows afterwards (FIFO: a dead-lettered head does not block its group).
    const res = await fetch(`${stack.restUrl}/v1/agent`, {
      method: "POST",
      headers: { authorization: `Bearer ${stack.authToken}`, "content-type": "application/json" },
      body: JSON.stringify({ sessionKey: "poison-body", message: "after the poison", idempotencyKey: "k-after-poison" }),
    });
    expect(res.status).toBe(202);
    const run = await endedRun(stack, ((await res.json()) as { runId: string }).runId, { sweep: false });
    await stack.idle();
    await expectRunInvariants(stack, run, "ok");
  }, 400_000);
});
