/**
 * A crash between the final send of a channel reply and its ledger write
 * (issue 13, "Done means"), on the template-deployed local stack with the
 * fault-injection layer (infra/local/faults.ts): the function delivering the
 * reply dies right after the fake Telegram accepted the final sendMessage
 * and right before the DynamoDB write recording it (`kill` `before` on that
 * UpdateItem). Its retry finds the part claimed with an unknown outcome and
 * never sends it again (at most once): the chat shows the final text once and
 * the run ended once.
 *
 * The streamed preview is refused (a scripted 400 on the chat's first
 * sendMessage, a clean failure that frees part 0), so the final reply is a
 * fresh send, the case where a second try could duplicate it (a final *edit*
 * repeats harmlessly).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { FaultPlan } from "../../infra/local/faults";
import { readEvents } from "../../shared/aws/event-log";
import { getLane } from "../../shared/aws/lanes";
import { getRun, TERMINAL_STATUSES, type RunRecord } from "../../shared/aws/runs";
import { readLedger } from "../../shared/channels/ledger";
import { chat } from "../support/fake-openai-server";
import { until } from "../support/until";
import { postTelegram, startChannelStack, stopChannelStack, telegramUpdate, type ChannelStack } from "../support/channel-stack";

const plan = new FaultPlan();
let env: ChannelStack;
// A loaded shared machine: wait for conditions, generously, never for time.
vi.setConfig({ testTimeout: 300_000 });

beforeAll(async () => {
  env = await startChannelStack({ faults: plan });
}, 180_000);
afterAll(async () => stopChannelStack(env ?? {}));

const ended = (runId: string) =>
  until<RunRecord>(async () => {
    const run = await getRun(env.stack.deps.db, runId);
    return run && TERMINAL_STATUSES.has(run.status) ? run : undefined;
  }, `run ${runId} to end`, 240_000);

describe("a crash between the final send and its ledger write", () => {
  it("does not send the reply twice; the run ends once", async () => {
    const chatId = "851";
    const finalText = "The crash-window answer, delivered once.";
    env.telegram.scriptWhen((call) => call.path.endsWith("/sendMessage") && String(call.body.chat_id) === chatId, {
      status: 400,
      body: { ok: false, error_code: 400, description: "Bad Request: preview refused by the test" },
    });
    // The ledger write that records the final send (part state `sent`, with its text): the deliverer dies before it lands.
    plan.add({ at: "edge", action: "dynamodb:UpdateItem", bodyIncludes: ['"DELIVERY"', '"sent"', finalText], effect: { kind: "kill", when: "before" } });
    env.oai.enqueue(chat.text(finalText));
    const posted = await postTelegram(env.stack, telegramUpdate("crash between send and ledger", { id: Number(chatId), type: "private" }, { id: Number(chatId) }));
    expect(posted.status).toBe(200);
    const runId = String(posted.body.runId);

    const run = await ended(runId);
    expect(run.status).toBe("ok");
    // The retry settles the reply: the ledger closes with part 0 still claimed (outcome unknown), never re-sent.
    await until(async () => ((await readLedger(env.stack.deps.db, runId))?.done ? true : undefined), "the ledger to close", 240_000);
    await env.stack.idle();
    expect(plan.pending, "the kill fired").toBe(0);
    expect(plan.hits).toHaveLength(1);
    // The Attempt finalizes inline (shared/run/folded-step.ts): it is the one delivering, and the one killed.
    expect(plan.hits[0].detail).toBe("attempt dynamodb:UpdateItem");

    // The first sendMessage is the preview's, refused; after it, the final text went out once.
    const sends = env.telegram.method("sendMessage").filter((call) => String(call.body.chat_id) === chatId);
    expect(sends.slice(1).map((call) => call.body.text)).toEqual([finalText]);
    expect(env.telegram.messagesIn(chatId)).toEqual([finalText]);
    expect((await readLedger(env.stack.deps.db, runId))?.parts["0"]?.state).toBe("sending");

    // Ended once: one start, one terminal lifecycle event, last; the lane is free.
    const log = await readEvents(env.stack.deps.db, runId);
    expect(log.filter((e) => e.stream === "lifecycle" && e.data.phase === "start")).toHaveLength(1);
    expect(log.filter((e) => e.stream === "lifecycle" && (e.data.phase === "end" || e.data.phase === "error"))).toHaveLength(1);
    expect(log[log.length - 1].stream).toBe("lifecycle");
    expect((await getLane(env.stack.deps.db, run.sessionKey)).activeRunId).toBeUndefined();
  });
});
