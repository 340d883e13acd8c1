import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRun } from "../../shared/aws/runs";
import { endedChannelRun } from "../support/ended-run";
import { ChannelsConfigSchema } from "../../shared/config/channels-config";
import { deliverChannelReply } from "../../shared/channels/deliver";
import { readLedger } from "../../shared/channels/ledger";
import { silentLog } from "../../shared/run/deps";
import { RecordingServer } from "../support/recording-server";
import { startTestDb, type TestDb } from "../support/local-db";

/**
 * Issue 13: a hook's replyUrl must pass the SSRF guard in AWS
 * (`allowPrivateReplyUrls` is false there; only `npm start` sets it). A
 * loopback URL is refused before anything is sent, once: a refusal is final,
 * not retried with backoff.
 */
let testDb: TestDb;
let receiver: RecordingServer;

beforeAll(async () => {
  [testDb, receiver] = await Promise.all([startTestDb(), new RecordingServer(() => ({ status: 200, body: { ok: true } })).start()]);
});
afterAll(async () => {
  await receiver?.close();
  await testDb?.close();
});

const SECRET = `whsec_${Buffer.from("hook-guard-secret").toString("base64")}`;

async function endedHookRun(runId: string, replyUrl: string): Promise<void> {
  const run = endedChannelRun(runId, "hook:default:guard", "the answer", { kind: "hook", accountId: "default", replyUrl });
  expect(await createRun(testDb.db, run)).toBe(true);
}

describe("hook replyUrl and the SSRF guard", () => {
  it("refuses a loopback replyUrl when private reply URLs are not allowed, without retrying", async () => {
    const sleeps: number[] = [];
    const retry = { attempts: 5, baseDelayMs: 1, maxDelayMs: 1, sleep: async (ms: number) => void sleeps.push(ms) };
    const channels = ChannelsConfigSchema.parse({ hooks: { default: { secret: SECRET } } });
    await endedHookRun("run_guarded", `${receiver.origin}/private`);
    await deliverChannelReply({ db: testDb.db, channels, log: silentLog, retry }, "run_guarded");
    expect(receiver.callsTo("/private")).toEqual([]);
    expect(sleeps).toEqual([]);
    const ledger = await readLedger(testDb.db, "run_guarded");
    expect(ledger?.done).toBe(true);
    expect(ledger?.parts["0"]?.state).toBe("failed");
  });

  it("delivers to the same loopback URL once private reply URLs are allowed (npm start)", async () => {
    const channels = ChannelsConfigSchema.parse({ hooks: { default: { secret: SECRET } }, allowPrivateReplyUrls: true });
    await endedHookRun("run_allowed", `${receiver.origin}/allowed`);
    await deliverChannelReply({ db: testDb.db, channels, log: silentLog }, "run_allowed");
    expect(receiver.callsTo("/allowed")).toHaveLength(1);
    expect(receiver.callsTo("/allowed")[0].body).toMatchObject({ type: "agent.reply", runId: "run_allowed", text: "the answer" });
  });
});
