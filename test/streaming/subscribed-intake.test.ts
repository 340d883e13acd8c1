import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getConnection, isFollowing, putConnection, subscribers } from "../../shared/aws/connections";
import type { Db } from "../../shared/aws/dynamo";
import { getLane } from "../../shared/aws/lanes";
import { getRun } from "../../shared/aws/runs";
import { getSession } from "../../shared/aws/sessions";
import { AgentConfigSchema } from "../../shared/config/config";
import { readAdmission } from "../../shared/intake/intake";
import { acceptSubscribed } from "../../functions/ws-api/methods/subscribed-intake";
import { startTestDb, type TestDb } from "../support/local-db";

let t: TestDb;
beforeAll(async () => {
  t = await startTestDb();
});
afterAll(async () => t?.close());

/** What the watcher reads of a document-client command. */
type AnyCommand = { input: object; constructor: { name: string } };

/** The table as the intake sees it, with every write's item key logged when it is sent and when it lands. */
function watchedDb(hold: (pk: string) => Promise<void> | undefined): { db: Db; log: string[] } {
  const log: string[] = [];
  const send = async (command: AnyCommand) => {
    const input = command.input as { Key?: { pk: string }; Item?: { pk: string } };
    const pk = (input.Key ?? input.Item)?.pk;
    const write = command.constructor.name !== "GetCommand" && command.constructor.name !== "BatchGetCommand" && command.constructor.name !== "QueryCommand";
    if (write && pk) log.push(`sent ${pk.replace(/#.*/, "")}`);
    if (pk) await hold(pk);
    const out = await t.db.doc.send(command as never);
    if (write && pk) log.push(`landed ${pk.replace(/#.*/, "")}`);
    return out;
  };
  return { db: { ...t.db, doc: { send } as unknown as Db["doc"] }, log };
}

describe("a WebSocket message's intake with its subscription", () => {
  const config = AgentConfigSchema.parse({});
  const queue = { send: async () => undefined };

  it("writes the subscription beside the session and the run record, and joins the lane only after it landed", async () => {
    // Prepare: the subscription's item is held until the run record has been sent
    await putConnection(t.db, "sub-1");
    let runSent!: () => void;
    const runWasSent = new Promise<void>((resolve) => (runSent = resolve));
    const { db, log } = watchedDb((pk) => {
      if (pk.startsWith("RUN#")) runSent();
      return pk.startsWith("SUBS#") ? runWasSent : undefined;
    });
    const request = { sessionKey: "s-side", message: "hello", idempotencyKey: "k-side" };
    const connection = await getConnection(t.db, "sub-1");
    // Act
    const admission = await readAdmission({ db }, request, undefined);
    const accepted = await acceptSubscribed({ db, queue, config }, { connectionId: "sub-1", connection }, request, { admission });
    // Assess: the run record went out while the subscription was still on its way...
    expect(log.indexOf("sent RUN")).toBeLessThan(log.indexOf("landed SUBS"));
    expect(log.indexOf("sent SESSION")).toBeLessThan(log.indexOf("landed SUBS"));
    // ...and the lane was joined only after the subscription and the connection's sets landed.
    const laneSent = log.indexOf("sent LANE");
    // (The run record's second write, enqueuedAt, comes after the queue.)
    for (const step of ["landed SUBS", "landed CONN"]) expect(log.lastIndexOf(step)).toBeLessThan(laneSent);
    expect(log.indexOf("landed RUN")).toBeLessThan(laneSent);
    expect(accepted.status).toBe("accepted");
    expect(await subscribers(t.db, "s-side")).toEqual(["sub-1"]);
    expect(isFollowing(await getConnection(t.db, "sub-1"), "s-side", t.db.now())).toBe(true);
    expect((await getLane(t.db, "s-side")).waiting.map((entry) => entry.runId)).toEqual([accepted.runId]);
  });

  it("a subscription that fails fails the request before the lane: the run waits unqueued for the retry, which finishes it", async () => {
    await putConnection(t.db, "sub-2");
    let failing = true;
    const { db } = watchedDb((pk) => (failing && pk.startsWith("SUBS#") ? Promise.reject(new Error("ProvisionedThroughputExceededException")) : undefined));
    const request = { sessionKey: "s-fail", message: "hello", idempotencyKey: "k-fail" };
    const connection = await getConnection(t.db, "sub-2");
    const admission = await readAdmission({ db }, request, undefined);
    await expect(acceptSubscribed({ db, queue, config }, { connectionId: "sub-2", connection }, request, { admission })).rejects.toThrow("ProvisionedThroughputExceededException");
    // Nothing joined the lane or the queue; the session and the run record may exist (a crash there leaves the same).
    expect((await getLane(t.db, "s-fail")).waiting).toEqual([]);
    expect(await getSession(t.db, "s-fail")).toBeDefined();
    // Lambda retries the route: the same key finishes what the first attempt left undone.
    failing = false;
    const retried = await acceptSubscribed({ db, queue, config }, { connectionId: "sub-2", connection }, request, { admission: await readAdmission({ db }, request, undefined) });
    expect(retried.duplicate).toBe(true);
    expect((await getLane(t.db, "s-fail")).waiting.map((entry) => entry.runId)).toEqual([retried.runId]);
    expect(await getRun(t.db, retried.runId)).toMatchObject({ status: "accepted", enqueuedAt: expect.any(Number) });
    expect(await subscribers(t.db, "s-fail")).toEqual(["sub-2"]);
  });
});
