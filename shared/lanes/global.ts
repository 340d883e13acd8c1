import {
  addGlobalWaiter,
  acquireSlot,
  globalLaneHead,
  listGlobalWaiters,
  markNeedsRenewal,
  markWaiters,
  releaseSlot,
  releaseSlotCounting,
  removeGlobalWaiter,
  waitersMarked,
  type AfterRelease,
  type GlobalWaiter,
  type SlotClaim,
} from "../aws/global-lane";
import { getRun, recordExecution, TERMINAL_STATUSES, type RunRecord } from "../aws/runs";
import { isStartable } from "../aws/lane-runs";
import { PRIORITY } from "../core/queue-settings";
import { globalCap, type LaneDeps } from "./deps";

/** Bounds one pump's work; whatever is left is started by the next hand-off or the sweeper. */
const MAX_GLOBAL_STARTS = 100;

/**
 * Starts the execution of a run that owns its session lane: through the
 * global lane when it is on (a slot first, or a place in the global queue).
 * Every step is idempotent: a slot is keyed by run, and the execution's name
 * is the run id, so Step Functions refuses a second one.
 *
 * `justRead`: the caller read `run` in this same admission, so a slot newly
 * taken for it is not checked with another read first. What that read
 * guarded, a run that ended meanwhile keeping a slot, is covered after the
 * start instead: an aborted run's execution starts and its finalize frees the
 * slot; an execution that already existed (the run started elsewhere, and may
 * have ended) makes us read the record then and give the slot back if it ended.
 */
export async function ensureStarted(deps: LaneDeps, run: RunRecord, justRead = false): Promise<void> {
  const cap = globalCap(deps);
  const slot = cap > 0 ? await slotInTurn(deps, run.runId, cap, justRead) : "go";
  if (slot === "gone") {
    // The slot we briefly held may have made another pump think the lane was full: pass it on.
    await pumpGlobalLane(deps);
    return;
  }
  if (typeof slot === "object" && "full" in slot) {
    const waiter = { runId: run.runId, sessionKey: run.sessionKey, priority: run.lane?.priority ?? PRIORITY.normal, acceptedAt: run.acceptedAt };
    await addGlobalWaiter(deps.db, waiter, slot.waitersUntil);
    // A slot may have freed between our acquire and our enqueue: its releaser may have missed us.
    await pumpGlobalLane(deps);
    return;
  }
  const started = await startExecution(deps, run.runId);
  if (typeof slot === "object" && started.alreadyStarted) await giveBackIfGone(deps, run.runId, slot.since);
}

/** A slot newly taken without a read for a run whose execution already existed: kept only while the run may still start or runs. */
async function giveBackIfGone(deps: LaneDeps, runId: string, since: number): Promise<void> {
  const now = await getRun(deps.db, runId);
  if (now && !TERMINAL_STATUSES.has(now.status)) return;
  if (await releaseSlot(deps.db, runId, since)) await pumpGlobalLane(deps);
}

/** No slot now: the run waits; `waitersUntil` is the waiters mark the lane's head showed. */
type NoSlot = { full: true; waitersUntil?: number };

/**
 * Runs already waiting for a slot go first: a newcomer only takes a free
 * slot when nobody waits (otherwise it queues, and the pump hands slots out
 * in order). A run that already holds a slot (an earlier caller died before
 * starting it) just goes.
 */
async function slotInTurn(deps: LaneDeps, runId: string, cap: number, justRead: boolean): Promise<"go" | "gone" | { since: number } | NoSlot> {
  const claim = await claimInTurn(deps, runId, cap);
  if ("full" in claim) return claim;
  if (claim.outcome === "held") return "go";
  if (claim.outcome === "full") return { full: true };
  return justRead ? { since: claim.since } : confirmStartable(deps, runId, claim.since);
}

/**
 * One conditional write when nobody waits (the usual case): the claim is
 * refused while the lane is full or the waiters mark holds. A refused claim
 * looks at the lane's head, holders, first waiter and mark in one read: a
 * free slot with nobody in line (a mark that outlived its waiters) is then
 * taken; otherwise the run waits, behind the mark the head showed.
 */
async function claimInTurn(deps: LaneDeps, runId: string, cap: number): Promise<SlotClaim | NoSlot> {
  const claim = await acquireSlot(deps.db, runId, cap, { deferToWaiters: true });
  if (claim.outcome !== "full") return claim;
  const { holders, firstWaiter, waitersUntil } = await globalLaneHead(deps.db);
  const heldSince = holders[runId];
  if (heldSince !== undefined) return { outcome: "held", since: heldSince, inUse: Object.keys(holders).length };
  if (Object.keys(holders).length >= cap || firstWaiter) return { full: true, waitersUntil };
  return acquireSlot(deps.db, runId, cap);
}

async function startExecution(deps: LaneDeps, runId: string): Promise<{ alreadyStarted: boolean }> {
  const started = await deps.executions.start(runId);
  // The first execution's ARN is written by the run start (markRunning); any other is recorded here.
  if (started.executionArn && started.executionArn !== deps.executions.firstExecutionArn?.(runId)) await recordExecution(deps.db, runId, started.executionArn);
  return { alreadyStarted: started.alreadyStarted === true };
}

/**
 * Gives free global slots to the runs waiting for them, best priority first,
 * then in acceptance order. Called after every release and every enqueue, so
 * no wake-up is lost: whichever of the two happens last sees the other (a
 * release sees the mark a waiter sets before it enqueues).
 *
 * Concurrent pumps find the same first waiter (every release pumps): one
 * takes its slot, the others find it held. Whichever removes the waiter's
 * item starts it (`handOver`): exactly one start per waiter, and a taker
 * killed between its claim and the removal leaves a held slot and the item,
 * which the next pump hands over. The removal comes right after the claim,
 * before the run read and the start, so other pumps rarely find a taken
 * waiter still listed (each such find costs a claim or a removal). Before
 * stop 25 every pump that found a taken waiter read the run and started it
 * again: 1,358 StartExecution calls for 300 runs of 100 sessions on 16 slots.
 * A taker killed after the removal and before its start leaves the run
 * holding a slot without an execution: the sweeper's visit of its lane
 * starts it (ensureStarted: held, go).
 *
 * A claim answers how many slots its write left in use, so a pump that just
 * filled the lane stops there, without a look at the head (one Query less
 * per hand-off on a saturated lane).
 */
export async function pumpGlobalLane(deps: LaneDeps, afterRelease?: AfterRelease): Promise<void> {
  const cap = globalCap(deps);
  if (cap <= 0) return;
  for (let step = 0; step < MAX_GLOBAL_STARTS; step += 1) {
    const next = await nextWaiter(deps, cap, step === 0 ? afterRelease : undefined);
    if (!next) return;
    const claim = next.held ?? (await acquireSlot(deps.db, next.waiter.runId, cap));
    if (claim.outcome === "full") {
      await renewMarkIfDue(deps, next.waitersUntil);
      return;
    }
    const kept = await handOver(deps, next.waiter, claim);
    // A slot given back leaves the claim's count stale: the next step reads the head.
    if (kept && claim.inUse >= cap) {
      await renewMarkIfDue(deps, claim.waitersUntil);
      return;
    }
  }
}

/**
 * The waiter's slot is taken (by this pump, or held from an earlier claim):
 * the pump that removes its item starts it. False when the slot this pump
 * took is given back: the run started or ended meanwhile (an ended run
 * never keeps a slot). A held slot of a run that is no longer startable is
 * its own: its end frees it.
 */
async function handOver(deps: LaneDeps, waiter: GlobalWaiter, claim: { outcome: "acquired" | "held"; since: number }): Promise<boolean> {
  const removed = await removeGlobalWaiter(deps.db, waiter);
  if (!removed && claim.outcome === "held") return true;
  const run = await getRun(deps.db, waiter.runId);
  if (run && isStartable(run)) {
    if (removed) await startExecution(deps, waiter.runId);
    return true;
  }
  if (claim.outcome === "held") return true;
  await releaseSlot(deps.db, waiter.runId, claim.since);
  return false;
}

type NextWaiter = { waiter: GlobalWaiter; waitersUntil?: number; held?: SlotClaim & { outcome: "held" } };

/**
 * The run to hand a free slot to; none when the lane is full (whoever frees a
 * slot pumps again) or nobody waits. The first step of a releaser's pump counts
 * from its release's own answer and lists the waiters only while the waiters
 * mark holds (a waiter marks before it enqueues); any other step reads the
 * holders, the first waiter and the mark in one request. A first waiter that
 * already holds a slot (its taker is between its claim and the item's
 * removal, or died there) is handed over without a claim, full lane or not.
 */
async function nextWaiter(deps: LaneDeps, cap: number, afterRelease: AfterRelease | undefined): Promise<NextWaiter | undefined> {
  if (afterRelease !== undefined) {
    if (afterRelease.inUse >= cap || !waitersMarked(afterRelease.waitersUntil, deps.db.now())) return undefined;
    const [waiter] = await listGlobalWaiters(deps.db, 1);
    return waiter && { waiter, waitersUntil: afterRelease.waitersUntil };
  }
  const { holders, firstWaiter, waitersUntil } = await globalLaneHead(deps.db);
  if (!firstWaiter) return undefined;
  const inUse = Object.keys(holders).length;
  const heldSince = holders[firstWaiter.runId];
  if (heldSince !== undefined) return { waiter: firstWaiter, held: { outcome: "held", since: heldSince, inUse, ...(waitersUntil === undefined ? {} : { waitersUntil }) } };
  if (inUse < cap) return { waiter: firstWaiter, ...(waitersUntil === undefined ? {} : { waitersUntil }) };
  // Runs wait behind a full lane: the releases to come must keep looking for them.
  await renewMarkIfDue(deps, waitersUntil);
  return undefined;
}

async function renewMarkIfDue(deps: LaneDeps, waitersUntil: number | undefined): Promise<void> {
  if (markNeedsRenewal(waitersUntil, deps.db.now())) await markWaiters(deps.db);
}

/** A slot newly taken, without a read before, for a run that started or ended meanwhile is given back at once: an ended run never keeps a slot. */
async function confirmStartable(deps: LaneDeps, runId: string, since: number): Promise<"go" | "gone"> {
  const run = await getRun(deps.db, runId);
  if (run && isStartable(run)) return "go";
  await releaseSlot(deps.db, runId, since);
  return "gone";
}

/** Frees the run's slot (if it held one) and hands it on. */
export async function releaseGlobalSlot(deps: LaneDeps, runId: string): Promise<void> {
  if (globalCap(deps) <= 0) return;
  await pumpGlobalLane(deps, await releaseSlotCounting(deps.db, runId));
}

/** The sweeper: slots still held by runs that ended (their hand-off never ran). */
export async function freeSlotsOfEndedRuns(deps: LaneDeps, holders: Record<string, number>): Promise<string[]> {
  const freed: string[] = [];
  for (const runId of Object.keys(holders)) {
    const run = await getRun(deps.db, runId);
    if (run && !TERMINAL_STATUSES.has(run.status) && run.status !== "steered" && run.status !== "collected") continue;
    if (await releaseSlot(deps.db, runId)) freed.push(runId);
  }
  if (freed.length > 0 || globalCap(deps) > 0) await pumpGlobalLane(deps);
  return freed;
}
