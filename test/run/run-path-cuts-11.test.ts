import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { globalLaneHead } from "../../shared/aws/global-lane";
import { pumpGlobalLane } from "../../shared/lanes/global";
import { CLAIM_GRACE_MS } from "../../shared/core/lanes";
import { sweep } from "../../shared/sweeper/sweep";
import { LaneHarness } from "../lanes/harness";
import { Tables, testConfig } from "../lanes/support";
import { oneSlotHeld, watchingLane, type Sent } from "./lane-watch";

/**
 * Issue 15, stop 26: a saturated global lane's hand-offs without the chase.
 * Counted on one 100-session level (16 slots, 300 runs), the lane's partition
 * took about 20 requests per run where a hand-off needs 9: concurrent pumps
 * found a taken waiter still listed and each claimed, removed and looked
 * further, and every hand-off looked at the head once more after filling
 * the lane. Now the taker removes the waiter's item right after its claim,
 * the pump that removes the item is the one that starts the run (exactly
 * one, whichever claimed), and a claim answers the slots it left in use.
 *
 * And a session's next message is queued for a slot once: the pump that
 * claims a session lane writes who it is, and another pump that finds the
 * run not started yet leaves the start to that claimer for 30 s (its own
 * retry, or the sweeper, covers its crash).
 */
let tables: Tables;
beforeAll(async () => {
  tables = await Tables.start();
});
afterAll(async () => tables?.close());

/** A global lane of one slot held by a running run, and a second run waiting for it. */
async function oneWaiter(prefix: string) {
  const { base, h, holder } = await oneSlotHeld(tables, prefix);
  const waiting = await h.accept(`${prefix}-b`, "second");
  await h.dispatch();
  expect(h.executions.created).toEqual([holder.runId]);
  return { base, h, holder, waiting };
}

const names = (sent: Sent[]) => sent.map((entry) => `${entry.name} ${entry.sk.startsWith("W#") ? "W#" : entry.sk}`);
const isRemoval = (entry: Sent) => entry.name === "DeleteCommand" && entry.sk.startsWith("W#");

describe("a release that hands its slot to the first waiter", () => {
  it("claims, removes the waiter's item, and stops: the claim said the lane is full again, no look at the head", async () => {
    const { base, h, holder, waiting } = await oneWaiter("fill");
    const watched = watchingLane(base);
    await h.finish(holder.runId, "ok", watched.db);
    expect(h.executions.created).toEqual([holder.runId, waiting.runId]);
    expect(names(watched.sent)).toEqual(["UpdateCommand SLOTS", "QueryCommand (query)", "UpdateCommand SLOTS", "DeleteCommand W#"]);
    const head = await globalLaneHead(base);
    expect(Object.keys(head.holders)).toEqual([waiting.runId]);
    expect(head.firstWaiter).toBeUndefined();
  });

  it("looks further while its claim left a slot free", async () => {
    const base = await tables.fresh();
    const h = new LaneHarness(base, testConfig({ globalCap: 2 }));
    const holders = [await h.accept("two-a", "a"), await h.accept("two-b", "b")];
    await h.dispatch();
    for (const run of holders) await h.start(run.runId);
    const waiters = [await h.accept("two-c", "c"), await h.accept("two-d", "d")];
    await h.dispatch();
    // Both holders end; the first hand-off is cut off before its release's pump (as if it died there).
    const watched = watchingLane(base);
    watched.state.before = async (entry) => {
      if (entry.name === "QueryCommand") throw new Error("killed before its pump");
    };
    await expect(h.finish(holders[0]!.runId, "ok", watched.db)).rejects.toThrow("killed");
    // The second release leaves one slot in use of two: its pump hands out both, one claim each.
    await h.finish(holders[1]!.runId);
    expect(h.executions.created.slice(2)).toEqual(waiters.map((run) => run.runId));
    expect((await globalLaneHead(base)).firstWaiter).toBeUndefined();
  });
});

describe("two pumps handing a slot to the same waiter", () => {
  it("start it once: the one that removes its item, whichever of them claimed the slot", async () => {
    const { base, h, holder, waiting } = await oneWaiter("twice");
    const watched = watchingLane(base);
    let second = false;
    watched.state.before = async (entry) => {
      if (second || !isRemoval(entry)) return;
      second = true;
      // The taker claimed the slot and is about to remove the item: another pump (a waiter's enqueue, the sweeper) runs now.
      await pumpGlobalLane(h.deps);
      expect(h.executions.created).toEqual([holder.runId, waiting.runId]);
    };
    await h.finish(holder.runId, "ok", watched.db);
    expect(second).toBe(true);
    expect(h.executions.calls, "one StartExecution for the waiter").toBe(2);
    expect(h.executions.created).toEqual([holder.runId, waiting.runId]);
    expect((await globalLaneHead(base)).firstWaiter).toBeUndefined();
  });

  it("a taker killed between its claim and the removal: the retried hand-off starts the waiter, once", async () => {
    const { base, h, holder, waiting } = await oneWaiter("killed");
    const watched = watchingLane(base);
    watched.state.before = async (entry) => {
      if (isRemoval(entry)) throw new Error("killed after the claim");
    };
    await expect(h.finish(holder.runId, "ok", watched.db)).rejects.toThrow("killed");
    expect(Object.keys((await globalLaneHead(base)).holders)).toEqual([waiting.runId]);
    expect(h.executions.created).toEqual([holder.runId]);
    // Step Functions retries run-finalize: the slot is released already, the head shows a listed waiter holding a slot.
    await h.finish(holder.runId);
    expect(h.executions.created).toEqual([holder.runId, waiting.runId]);
    expect((await globalLaneHead(base)).firstWaiter).toBeUndefined();
  });
});

/**
 * Session `s` runs P on the only global slot while session `o`'s run waits
 * for it; `s`'s next message N is accepted but not yet dispatched. P's end
 * gives the slot to `o` and claims `s`'s lane for N (queued for a slot).
 */
async function nextClaimedByHandOff(prefix: string, globalCap = 1) {
  const base = await tables.fresh();
  const h = new LaneHarness(base, testConfig({ globalCap }));
  const previous = await h.accept(`${prefix}-s`, "first");
  await h.dispatch();
  await h.start(previous.runId);
  const other = globalCap === 1 ? await h.accept(`${prefix}-o`, "other") : undefined;
  await h.dispatch();
  const next = await h.accept(`${prefix}-s`, "second");
  return { base, h, previous, other, next };
}

describe("a session's next message that the previous run's hand-off claimed", () => {
  it("is queued for a global slot once: its admission leaves the start to the hand-off", async () => {
    const { base, h, previous, other, next } = await nextClaimedByHandOff("once");
    await h.finish(previous.runId);
    expect((await h.lane("once-s")).claimedBy).toBe(`handoff:${previous.runId}`);
    expect((await globalLaneHead(base)).firstWaiter?.runId).toBe(next.runId);
    const watched = watchingLane(base);
    await h.dispatch(watched.db);
    expect(names(watched.sent), "no second claim, head read, waiter item or pump").toEqual([]);
    await h.start(other!.runId);
    await h.finish(other!.runId);
    expect(h.executions.created).toEqual([previous.runId, other!.runId, next.runId]);
  });

  it("whose hand-off died between the claim and the start is started by the hand-off's retry, once", async () => {
    const { base, h, previous, next } = await nextClaimedByHandOff("retry", 2);
    const watched = watchingLane(base);
    let slotWrites = 0;
    watched.state.before = async (entry) => {
      // The release of P's slot, then N's claim of one: die there.
      if (entry.name === "UpdateCommand" && (slotWrites += 1) === 2) throw new Error("killed before the start");
    };
    await expect(h.finish(previous.runId, "ok", watched.db)).rejects.toThrow("killed");
    await h.dispatch();
    expect(h.executions.created, "the admission left the start to the claimer").toEqual([previous.runId]);
    await h.finish(previous.runId);
    expect(h.executions.created).toEqual([previous.runId, next.runId]);
    // Once it runs, a further retry and a redelivered admission start nothing.
    await h.start(next.runId);
    await h.finish(previous.runId);
    await h.dispatch();
    expect(h.executions.calls).toBe(2);
  });

  it("whose hand-off died and never came back is started by the sweeper, and by its admission once the claim is 30 s old", async () => {
    for (const recovery of ["sweeper", "late admission"] as const) {
      const { base, h, previous, next } = await nextClaimedByHandOff(`gone-${recovery.length}`, 2);
      const watched = watchingLane(base);
      let slotWrites = 0;
      watched.state.before = async (entry) => {
        if (entry.name === "UpdateCommand" && (slotWrites += 1) === 2) throw new Error("killed before the start");
      };
      await expect(h.finish(previous.runId, "ok", watched.db)).rejects.toThrow("killed");
      if (recovery === "sweeper") {
        await h.dispatch();
        await sweep({ ...h.deps });
      } else {
        base.advance(CLAIM_GRACE_MS);
        await h.dispatch();
      }
      expect(h.executions.created, recovery).toEqual([previous.runId, next.runId]);
    }
  });
});
