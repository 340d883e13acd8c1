import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getConnection, markAuthenticated, putConnection } from "../../shared/aws/connections";
import type { FramePusher } from "../../shared/aws/push";
import { AUTH_DEADLINE_MS, AUTH_POLL_DELAYS_MS, closeIfStillAnonymous } from "../../functions/ws-api/auth-deadline";
import type { Db } from "../../shared/aws/dynamo";
import { startTestDb, type TestDb } from "../support/local-db";

/**
 * The post-connect step's auth deadline (functions/ws-api/auth-deadline.ts),
 * on a real table and a clock that moves only when the step sleeps: what a
 * client does "meanwhile" happens inside a chosen sleep.
 */
let t: TestDb;
let clock = Date.UTC(2026, 11, 7);
let db: Db;
beforeAll(async () => {
  t = await startTestDb();
  db = { ...t.db, now: () => clock };
});
afterAll(async () => t.close());

function recordingPusher() {
  const disconnected: string[] = [];
  const pusher: FramePusher = {
    push: async () => "sent",
    disconnect: async (connectionId) => {
      disconnected.push(connectionId);
    },
  };
  return { pusher, disconnected };
}

/** A sleep that advances the test clock, and runs `during(n)` inside the n-th sleep (0-based). */
function clockSleep(during?: (n: number) => Promise<void>) {
  const slept: number[] = [];
  const sleep = async (ms: number) => {
    const n = slept.length;
    slept.push(ms);
    clock += ms;
    await during?.(n);
  };
  return { sleep, slept };
}

describe("closeIfStillAnonymous", () => {
  it("returns at the first look after the socket authenticated in band, without closing it", async () => {
    const id = "deadline-inband";
    await putConnection(db, id, "nonce");
    const { pusher, disconnected } = recordingPusher();
    const { sleep, slept } = clockSleep(async (n) => {
      if (n === 0) await markAuthenticated(db, id);
    });
    expect(await closeIfStillAnonymous({ db: db, pusher, sleep }, id, db.now())).toBe(false);
    // One short wait, not the deadline: the invocation ends about 100 ms after the `connect`.
    expect(slept).toEqual([AUTH_POLL_DELAYS_MS[0]]);
    expect(disconnected).toEqual([]);
  });

  it("looks more and more rarely, and returns as soon as a later look finds the socket authenticated", async () => {
    const id = "deadline-late";
    await putConnection(db, id, "nonce");
    const { pusher, disconnected } = recordingPusher();
    const { sleep, slept } = clockSleep(async (n) => {
      if (n === 3) await markAuthenticated(db, id);
    });
    expect(await closeIfStillAnonymous({ db: db, pusher, sleep }, id, db.now())).toBe(false);
    expect(slept).toEqual(AUTH_POLL_DELAYS_MS.slice(0, 4));
    expect(disconnected).toEqual([]);
  });

  it("closes a socket still anonymous at the deadline, having waited exactly the deadline in all", async () => {
    const id = "deadline-idle";
    await putConnection(db, id, "nonce");
    const { pusher, disconnected } = recordingPusher();
    const { sleep, slept } = clockSleep();
    expect(await closeIfStillAnonymous({ db: db, pusher, sleep }, id, db.now())).toBe(true);
    expect(slept.reduce((a, b) => a + b, 0)).toBe(AUTH_DEADLINE_MS);
    expect(Math.max(...slept)).toBe(AUTH_POLL_DELAYS_MS[AUTH_POLL_DELAYS_MS.length - 1]);
    expect(disconnected).toEqual([id]);
  });

  it("waits only what is left of the deadline for a socket that opened a while ago", async () => {
    const id = "deadline-old";
    await putConnection(db, id, "nonce");
    const { pusher, disconnected } = recordingPusher();
    const { sleep, slept } = clockSleep();
    const connectedAt = db.now() - (AUTH_DEADLINE_MS - 50);
    expect(await closeIfStillAnonymous({ db: db, pusher, sleep }, id, connectedAt)).toBe(true);
    expect(slept).toEqual([50]);
    expect(disconnected).toEqual([id]);
  });

  it("does nothing for a socket let in with a key at $connect, or one already gone", async () => {
    await putConnection(db, "deadline-keyed", "nonce", { keyId: "key_1", keyName: "ops", tenantId: "t1", scopes: ["operator.read"] });
    expect((await getConnection(db, "deadline-keyed"))?.authenticated).toBe(true);
    const { pusher, disconnected } = recordingPusher();
    const { sleep, slept } = clockSleep();
    expect(await closeIfStillAnonymous({ db: db, pusher, sleep }, "deadline-keyed", db.now())).toBe(false);
    expect(await closeIfStillAnonymous({ db: db, pusher, sleep }, "deadline-never-was", db.now())).toBe(false);
    expect(slept).toEqual([]);
    expect(disconnected).toEqual([]);
  });
});
