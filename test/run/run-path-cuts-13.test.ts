import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../shared/aws/dynamo";
import { getRun } from "../../shared/aws/runs";
import { getSession, listSessions, resetSession, touchSession } from "../../shared/aws/sessions";
import { readTranscript } from "../../shared/aws/transcript";
import { startRun } from "../../shared/run/start-run";
import { LaneHarness } from "../lanes/harness";
import { FakeExecutions, runDeps, Tables, testConfig } from "../lanes/support";

/**
 * Issue 15, part 13: a session's first run does not write the session twice.
 * The intake creates the session (and its index copy) for the run's first
 * message; the run's start then touched it again (`updatedAt`, `lastRunId`:
 * an UpdateItem and the index put, 2 WRU). The intake now creates it with
 * the run as its `lastRunId` and marks the run `openedSession`, and that
 * run's start reads the session (it needs the current session id: a reset
 * may have come in between) instead of writing it.
 */
let tables: Tables;
beforeAll(async () => {
  tables = await Tables.start();
});
afterAll(async () => tables?.close());

type Sent = { name: string; pk: string; sk: string };

/** The table, with every request on a session's own items (SESSION, its index copy) recorded. */
function watchingSessions(db: Db) {
  const sent: Sent[] = [];
  const doc = {
    send: (command: { constructor: { name: string }; input: { Key?: { pk?: string; sk?: string }; Item?: { pk?: string; sk?: string } } }) => {
      const key = command.input.Key ?? command.input.Item;
      const pk = String(key?.pk ?? "");
      const sk = String(key?.sk ?? "");
      if ((pk.startsWith("SESSION#") && sk === "SESSION") || pk === "SESSIONS") sent.push({ name: command.constructor.name, pk, sk });
      return db.doc.send(command as never);
    },
  };
  return { sent, db: { ...db, doc } as unknown as Db };
}

const calls = (sent: Sent[]) => sent.map((entry) => `${entry.name} ${entry.pk === "SESSIONS" ? "index" : "session"}`);

async function acceptedFirst(sessionKey: string) {
  const base = await tables.fresh();
  const h = new LaneHarness(base, testConfig());
  const accepted = await h.accept(sessionKey, "hello");
  await h.dispatch();
  return { base, h, runId: accepted.runId };
}

describe("a session's first run", () => {
  it("is the session's lastRunId from its creation, and the run record says it opened the session", async () => {
    const { base, runId } = await acceptedFirst("opened-a");
    const session = await getSession(base, "opened-a");
    expect(session?.lastRunId).toBe(runId);
    expect((await getRun(base, runId))?.openedSession).toBe(true);
    // The listing (the index copy) names it too.
    expect((await listSessions(base)).find((s) => s.sessionKey === "opened-a")?.lastRunId).toBe(runId);
  });

  it("starts with one read of the session and no write to it or its index", async () => {
    const { base, runId } = await acceptedFirst("opened-b");
    const before = await getSession(base, "opened-b");
    const watched = watchingSessions(base);
    await startRun(runDeps(watched.db, testConfig(), new FakeExecutions()), runId);
    expect(calls(watched.sent)).toEqual(["GetCommand session"]);
    expect(await getSession(base, "opened-b")).toEqual(before);
    const run = await getRun(base, runId);
    expect(run).toMatchObject({ status: "running", sessionId: before!.sessionId, userEntrySeq: expect.any(Number) });
    const transcript = await readTranscript(base, before!.sessionId);
    expect(transcript.filter((entry) => entry.message.role === "user").map((entry) => entry.message.content)).toEqual(["hello"]);
  });

  it("touches the session as before when another run of the key touched it since (it started ahead of this one)", async () => {
    const { base, runId } = await acceptedFirst("opened-c");
    await touchSession(base, "opened-c", "run_other").then(({ indexed }) => indexed);
    base.advance(1_000);
    const watched = watchingSessions(base);
    await startRun(runDeps(watched.db, testConfig(), new FakeExecutions()), runId);
    expect(calls(watched.sent)).toEqual(["GetCommand session", "UpdateCommand session", "PutCommand index"]);
    const session = await getSession(base, "opened-c");
    expect(session?.lastRunId).toBe(runId);
    expect((await listSessions(base)).find((s) => s.sessionKey === "opened-c")).toMatchObject({ lastRunId: runId, updatedAt: session!.updatedAt });
  });

  it("adopts the session a reset switched the key to between its intake and its start", async () => {
    const { base, runId } = await acceptedFirst("opened-d");
    const opened = await getSession(base, "opened-d");
    await resetSession(base, "opened-d", opened!.sessionId, "ses_after_reset");
    await startRun(runDeps(base, testConfig(), new FakeExecutions()), runId);
    expect((await getRun(base, runId))?.sessionId).toBe("ses_after_reset");
    const transcript = await readTranscript(base, "ses_after_reset");
    expect(transcript.filter((entry) => entry.message.role === "user").map((entry) => entry.message.content)).toEqual(["hello"]);
    expect(await readTranscript(base, opened!.sessionId)).toEqual([]);
  });
});

describe("a later run of the session", () => {
  it("did not open it, and its start touches the session and its index copy as before", async () => {
    const { base, h, runId: first } = await acceptedFirst("opened-e");
    await startRun(runDeps(base, testConfig(), new FakeExecutions()), first);
    await h.finish(first);
    base.advance(1_000);
    const second = await h.accept("opened-e", "again");
    await h.dispatch();
    expect((await getRun(base, second.runId))?.openedSession).toBeUndefined();
    expect((await getSession(base, "opened-e"))?.lastRunId).toBe(first);
    const watched = watchingSessions(base);
    await startRun(runDeps(watched.db, testConfig(), new FakeExecutions()), second.runId);
    expect(calls(watched.sent)).toEqual(["UpdateCommand session", "PutCommand index"]);
    expect((await getSession(base, "opened-e"))?.lastRunId).toBe(second.runId);
  });
});
