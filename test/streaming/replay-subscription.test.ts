import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { putConnection, subscribe } from "../../shared/aws/connections";
import type { FramePusher } from "../../shared/aws/push";
import { createRun, markEnded, type RunRecord } from "../../shared/aws/runs";
import { RunEventEmitter } from "../../shared/events/emitter";
import { eventsReplayMethod } from "../../functions/ws-api/methods/runs";
import type { MethodInput } from "../../functions/ws-api/methods/types";
import { startTestDb, type TestDb } from "../support/local-db";

/**
 * events.replay follows the live stream (issue 18), on dynalite with a
 * recording pusher: no clock, no sleeps. The emitter is opened and has
 * fanned out (so it holds a subscriber list) before the client arrives,
 * which is exactly when the old time-based cache lost the next event.
 */
let t: TestDb;
beforeAll(async () => {
  t = await startTestDb();
});
afterAll(async () => t?.close());

function recordingPusher() {
  const frames = new Map<string, { event?: string; seq?: number; payload?: { seq?: number; runId?: string } }[]>();
  const pusher: FramePusher = {
    async push(connectionId, frame) {
      frames.set(connectionId, [...(frames.get(connectionId) ?? []), frame as never]);
      return "sent";
    },
    async disconnect() {},
  };
  /** The agent-event seqs a connection got, in arrival order. */
  const seqs = (connectionId: string) =>
    (frames.get(connectionId) ?? []).filter((f) => f.event === "agent").map((f) => f.payload?.seq ?? f.seq);
  return { pusher, seqs };
}

let counter = 0;
async function runningRun(sessionKey: string): Promise<RunRecord> {
  const run: RunRecord = {
    v: 1, runId: `run_replay_${++counter}`, sessionKey, sessionId: `sess_${sessionKey}`, message: "hi", requestHash: "h", source: "ws",
    status: "running", model: "offline/echo", timeoutMs: 0, acceptedAt: t.db.now(), startedAt: t.db.now(),
  };
  await createRun(t.db, run);
  return run;
}

const replay = (deps: object, connectionId: string, params: Record<string, unknown>) =>
  eventsReplayMethod(deps as never, { connectionId, requestId: "r1", params, context: {} } as MethodInput) as Promise<Record<string, unknown>>;

describe("events.replay subscribes, then replays", () => {
  it("a client that only calls events.replay gets the missed events, then the live ones: no gap, in order", async () => {
    const { pusher, seqs } = recordingPusher();
    const run = await runningRun("replay-1");
    const emitter = await RunEventEmitter.open({ db: t.db, pusher, retentionDays: 1 }, run.runId, run.sessionKey);
    for (let i = 1; i <= 5; i += 1) emitter.emit("assistant", { delta: `d${i}` });
    await emitter.flush();
    await putConnection(t.db, "late");
    const answer = await replay({ db: t.db, pusher }, "late", { runId: run.runId, afterSeq: 2 });
    expect(answer).toMatchObject({ afterSeq: 2, lastSeq: 5, count: 3, subscribed: true });
    for (let i = 6; i <= 8; i += 1) emitter.emit("assistant", { delta: `d${i}` });
    await emitter.flush();
    expect(seqs("late")).toEqual([3, 4, 5, 6, 7, 8]);
  });

  it("accepts `after` (the REST event log's name) as well as `afterSeq`; a finished run needs no subscription", async () => {
    const { pusher, seqs } = recordingPusher();
    const run = await runningRun("replay-2");
    const emitter = await RunEventEmitter.open({ db: t.db, pusher, retentionDays: 1 }, run.runId, run.sessionKey);
    for (let i = 1; i <= 3; i += 1) emitter.emit("assistant", { delta: `d${i}` });
    await emitter.flush();
    await markEnded(t.db, run.runId, { status: "ok", endedAt: t.db.now() });
    await putConnection(t.db, "after");
    expect(await replay({ db: t.db, pusher }, "after", { runId: run.runId, after: 1 })).toMatchObject({ afterSeq: 1, count: 2, subscribed: false });
    expect(seqs("after")).toEqual([2, 3]);
  });

  it("a run-scoped subscription gets only that run's events; a session subscriber gets every run's", async () => {
    const { pusher, seqs } = recordingPusher();
    const first = await runningRun("replay-3");
    const second = await runningRun("replay-3");
    const a = await RunEventEmitter.open({ db: t.db, pusher, retentionDays: 1 }, first.runId, first.sessionKey);
    const b = await RunEventEmitter.open({ db: t.db, pusher, retentionDays: 1 }, second.runId, second.sessionKey);
    await putConnection(t.db, "scoped");
    await putConnection(t.db, "session");
    await replay({ db: t.db, pusher }, "scoped", { runId: first.runId });
    await subscribe(t.db, "session", "replay-3");
    a.emit("assistant", { delta: "a" });
    b.emit("assistant", { delta: "b" });
    await Promise.all([a.flush(), b.flush()]);
    expect(seqs("scoped")).toEqual([1]);
    expect(seqs("session")).toEqual([1, 1]);
  });
});

describe("a new subscriber never misses an event fanned out after its subscription was acknowledged", () => {
  it("even from an emitter that already holds a subscriber list (sessions.subscribe mid-run)", async () => {
    const { pusher, seqs } = recordingPusher();
    const run = await runningRun("sub-1");
    await putConnection(t.db, "early");
    await subscribe(t.db, "early", "sub-1");
    const emitter = await RunEventEmitter.open({ db: t.db, pusher, retentionDays: 1 }, run.runId, run.sessionKey);
    emitter.emit("assistant", { delta: "one" });
    await emitter.flush();
    // Acknowledged (subscribe returned) before the next emission: it must get it.
    await putConnection(t.db, "joiner");
    await subscribe(t.db, "joiner", "sub-1");
    emitter.emit("assistant", { delta: "two" });
    await emitter.flush();
    expect(seqs("early")).toEqual([1, 2]);
    expect(seqs("joiner")).toEqual([2]);
  });
});
