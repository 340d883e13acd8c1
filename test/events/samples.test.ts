import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLambdaContext } from "../../infra/local/lambda-context";
import { startLocalStack, type LocalStack } from "../../infra/local/stack";
import { getConnection } from "../../shared/aws/connections";
import { createRun, getRun } from "../../shared/aws/runs";
import { resolveSession } from "../../shared/aws/sessions";
import { loadAgentConfig } from "../../shared/config/config";
import { runIdForIdempotencyKey } from "../../shared/core/ids";
import { sampleEvent } from "../support/events";

let stack: LocalStack;
const context = (name: string, timeoutMs = 60_000) => createLambdaContext(name, timeoutMs);
/** The deployed function (its bundle, in its sandbox); the context argument is Lambda's own there. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const deployed = (key: string) => (event: unknown, _context?: unknown): Promise<any> => stack.functions[key].pool.invoke(event);

beforeAll(async () => {
  stack = await startLocalStack({ config: loadAgentConfig({}), authToken: "sample-token" });
});
afterAll(async () => stack?.close());

describe("sample events drive every handler", () => {
  it("rest-api: POST /v1/agent, wait on an unknown run, history", async () => {
    const rest = deployed("rest-api");
    const accepted = await rest(sampleEvent("rest-post-agent.json"), context("rest-api"));
    expect(accepted.statusCode).toBe(202);
    const runId = JSON.parse(accepted.body).runId;
    expect(runId).toBe(runIdForIdempotencyKey("sample-k1"));
    const missing = await rest(sampleEvent("rest-post-wait.json"), context("rest-api"));
    expect(missing.statusCode).toBe(404);
    await stack.idle();
    const history = await rest(sampleEvent("rest-get-history.json"), context("rest-api"));
    expect(history.statusCode).toBe(200);
    expect(JSON.parse(history.body).messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant", "tool_result", "assistant"]);
  });

  it("ws-api: $connect, connect, agent, unknown method, $disconnect", async () => {
    const ws = deployed("ws-api");
    const connectionId = sampleEvent("ws-connect.json").requestContext.connectionId;
    expect(await ws(sampleEvent("ws-connect.json"), context("ws-api"))).toEqual({ statusCode: 200 });
    expect((await getConnection(stack.deps.db, connectionId))?.authenticated).toBe(false);
    await ws(sampleEvent("ws-message-connect.json"), context("ws-api"));
    expect((await getConnection(stack.deps.db, connectionId))?.authenticated).toBe(true);
    await ws(sampleEvent("ws-message-agent.json"), context("ws-api"));
    expect(await getRun(stack.deps.db, runIdForIdempotencyKey("sample-ws-k1"))).toMatchObject({ source: "ws", message: "hello" });
    expect(await ws(sampleEvent("ws-message-unknown.json"), context("ws-api"))).toEqual({ statusCode: 200 });
    await ws(sampleEvent("ws-disconnect.json"), context("ws-api"));
    expect(await getConnection(stack.deps.db, connectionId)).toBeUndefined();
    await stack.idle();
  });

  it("state machine tasks: attempt (first, then looping), decide, run-finalize on run_sample", async () => {
    const session = await resolveSession(stack.deps.db, "samples");
    await createRun(stack.deps.db, {
      v: 1, runId: "run_sample", sessionKey: "samples", sessionId: session.sessionId, message: "hi from a sample",
      requestHash: "x", source: "rest", status: "accepted", model: "offline/echo", timeoutMs: 60_000, acceptedAt: Date.now(),
    });
    // The first Attempt gets the execution's input `{runId}`: it starts the run, and finalizes it inline.
    const step = await deployed("attempt")(sampleEvent("attempt-first-task.json"), context("attempt", 900_000));
    expect(step).toMatchObject({ runId: "run_sample", loop: { iteration: 1 }, decision: { action: "finalize", status: "ok" }, finished: { status: "ok" } });
    const recovered = await deployed("decide")(sampleEvent("decide-task-crash.json"), context("decide"));
    // A Lambda timeout counts as an idle timeout: one same-model retry (the decision names its branch).
    expect(recovered.decision).toEqual({ action: "attempt", reason: "same_model_idle_retry" });
    // FinalizeRun after the Attempt already finalized (a retried hand-over): idempotent, same answer.
    const ended = await deployed("run-finalize")(sampleEvent("run-finalize-task.json"), context("run-finalize"));
    expect(ended).toEqual({ runId: "run_sample", status: "ok" });
    expect((await getRun(stack.deps.db, "run_sample"))?.result?.payloads[0].text).toContain("hi from a sample");
  });

  it("dispatcher: an already finished run in the batch is acknowledged; an unknown run fails alone", async () => {
    const dispatcher = deployed("dispatcher");
    const batch = sampleEvent("dispatcher-sqs-fifo-batch.json");
    expect(await dispatcher(batch, context("dispatcher"))).toEqual({ batchItemFailures: [] });
    const poison = { Records: [{ ...batch.Records[0], messageId: "poison-1", body: JSON.stringify({ v: 1, runId: "run_nobody" }) }] };
    expect(await dispatcher(poison, context("dispatcher"))).toEqual({ batchItemFailures: [{ itemIdentifier: "poison-1" }] });
  });

  it("openai-api: POST /v1/chat/completions through InvokeWithResponseStream (prelude, 8 NUL bytes, JSON body)", async () => {
    const chunks: Buffer[] = [];
    await stack.functions["openai-api"].pool.invokeStream(sampleEvent("openai-chat-completions.json"), (chunk) => chunks.push(chunk));
    const bytes = Buffer.concat(chunks);
    const at = bytes.indexOf(Buffer.alloc(8));
    expect(JSON.parse(bytes.subarray(0, at).toString("utf8"))).toMatchObject({ statusCode: 200, headers: { "x-openclaw-session-key": "agent:main:openai-user:sample-user" } });
    const completion = JSON.parse(bytes.subarray(at + 8).toString("utf8"));
    expect(completion).toMatchObject({ object: "chat.completion", choices: [{ message: { role: "assistant" }, finish_reason: "stop" }] });
    expect(completion.choices[0].message.content).toContain("hello");
  });
});
