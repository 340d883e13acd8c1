import { PRIORITY, type QueueSettings, type Trigger } from "./queue-settings";

/**
 * The session lane as pure data, and every decision about it. The lane is one
 * DynamoDB item (see shared/aws/lanes.ts): the run that owns it and the
 * messages waiting for it, in the order the lane recorded them. Everything
 * here is a function of that state, so the I/O code only reads, decides with
 * these functions, and writes conditionally.
 */

/** How a waiting message leaves the lane. */
export type EntryKind =
  /** Becomes its own run when it reaches the head. */
  | "run"
  /** Taken by the active run at its next model call; if none takes it, it runs on its own. */
  | "steer"
  /** Coalesces with the collect messages next to it into one run, after the debounce. */
  | "collect";

export interface LaneEntry {
  runId: string;
  acceptedAt: number;
  kind: EntryKind;
  priority: number;
  /** Collect entries: how long the batch must be quiet before it runs. */
  debounceMs?: number;
}

/** Work the owner of the lane still has to do before it starts (written with the claim, so a crash cannot lose it). */
export interface PendingStart {
  /** Collect batch members (besides the owner) to fold into the owner's message. */
  members: string[];
  /** One-line summaries of messages dropped for the cap (drop policy `summarize`). */
  notes: string[];
}

export interface LaneState {
  activeRunId?: string;
  since?: number;
  /**
   * Which pump took the lane for `activeRunId` (a `Claimer`): that pump
   * starts the run, so another one that finds it claimed moments ago leaves
   * the start to it (claimedByAnother). Absent on lanes claimed before stop 26.
   */
  claimedBy?: string;
  waiting: LaneEntry[];
  /** Summaries of dropped messages, waiting for the next run to start. */
  dropped: string[];
  pending?: PendingStart;
  /** Bumped by every write; conditional writes compare it (optimistic concurrency on one item). */
  ver: number;
  /**
   * Messages the lane has taken so far: the session's acceptance sequence.
   * Taken in the same conditional write that appends a message, so a
   * message's number and its place in `waiting` never disagree, whatever
   * order concurrent intakes (or the queue) ran in.
   */
  accepted?: number;
}

export const EMPTY_LANE: LaneState = Object.freeze({ waiting: [], dropped: [], ver: 0 }) as LaneState;

/**
 * A pump's identity as a claimer of session lanes. The same work repeated
 * (Step Functions retrying a run's end, SQS redelivering an admission) is
 * the same claimer, so it finishes a start it began and crashed in; the
 * sweeper and other callers claim with none and always finish a start.
 */
export type Claimer = `admit:${string}` | `handoff:${string}`;

/** A claim younger than this, by another claimer, is left to it: its own retry or the sweeper covers its crash. */
export const CLAIM_GRACE_MS = 30_000;

/**
 * The lane was taken for its run by another pump moments ago: that pump
 * starts the run. Issue 15: on a saturated global lane, a session's next
 * message is often claimed by the previous run's hand-off while its own
 * admission arrives (or the other way round), and both queued it for a
 * global slot (a refused claim, a head read, the waiter's item and a pump:
 * four requests, for about 250 of 300 runs in one 100-session level).
 */
export function claimedByAnother(lane: LaneState, me: Claimer | undefined, now: number): boolean {
  if (me === undefined || lane.claimedBy === undefined || lane.claimedBy === me || lane.since === undefined) return false;
  return now - lane.since < CLAIM_GRACE_MS;
}

export function isBusy(lane: LaneState): boolean {
  return lane.activeRunId !== undefined || lane.waiting.length > 0;
}

/** Waiting entries in the order they will start: higher priority first, then lane order. */
export function startOrder(waiting: readonly LaneEntry[]): LaneEntry[] {
  return waiting
    .map((entry, index) => ({ entry, index }))
    .sort((a, b) => b.entry.priority - a.entry.priority || a.index - b.index)
    .map(({ entry }) => entry);
}

/** Runs ahead of `runId`: the active one plus the waiting entries that start before it. */
export function runsAhead(lane: LaneState, runId: string): number {
  const order = startOrder(dedupe(lane.waiting));
  const index = order.findIndex((entry) => entry.runId === runId);
  const before = index < 0 ? order.length : index;
  return (lane.activeRunId !== undefined && lane.activeRunId !== runId ? 1 : 0) + before;
}

/** A re-sent append can leave a run twice in the list; only its first place counts. */
export function dedupe(waiting: readonly LaneEntry[]): LaneEntry[] {
  const seen = new Set<string>();
  return waiting.filter((entry) => (seen.has(entry.runId) ? false : (seen.add(entry.runId), true)));
}

export function withoutRuns(waiting: readonly LaneEntry[], runIds: Iterable<string>): LaneEntry[] {
  const drop = new Set(runIds);
  return waiting.filter((entry) => !drop.has(entry.runId));
}

export function isWaiting(lane: LaneState, runId: string): boolean {
  return lane.activeRunId === runId || lane.waiting.some((entry) => entry.runId === runId);
}

// ---------------------------------------------------------------- admission

export type Admission =
  | { action: "reject"; reason: "busy" | "queue_full" }
  | {
      action: "join";
      kind: EntryKind;
      priority: number;
      /** What the caller is told. */
      answer: "accepted" | "queued" | "steered" | "collected";
      /** interrupt: the run to abort before this one runs. */
      interrupt?: string;
      /** steer: the run expected to take the message. */
      into?: string;
    };

/**
 * What happens to a new message, given the lane as intake read it. An idle
 * lane takes every message as a run; a busy one applies the queue mode. A
 * heartbeat never queues behind a busy session (OpenClaw drops it).
 */
export function planAdmission(lane: LaneState, settings: QueueSettings, trigger: Trigger, priority: number): Admission {
  if (!isBusy(lane)) return { action: "join", kind: "run", priority, answer: "accepted" };
  if (settings.mode === "reject" || trigger === "heartbeat") return { action: "reject", reason: "busy" };
  if (lane.waiting.length >= settings.cap && settings.drop === "new") return { action: "reject", reason: "queue_full" };
  const active = lane.activeRunId;
  switch (settings.mode) {
    case "steer":
      return active
        ? { action: "join", kind: "steer", priority, answer: "steered", into: active }
        : { action: "join", kind: "run", priority, answer: "queued" };
    case "collect":
      return { action: "join", kind: "collect", priority, answer: "collected" };
    case "interrupt":
      return active
        ? { action: "join", kind: "run", priority: PRIORITY.interrupt, answer: "queued", interrupt: active }
        : { action: "join", kind: "run", priority, answer: "queued" };
    default:
      return { action: "join", kind: "run", priority, answer: "queued" };
  }
}

/** The entry to drop when the cap is reached: the oldest waiting message. */
export function dropVictim(lane: LaneState): LaneEntry | undefined {
  return lane.waiting[0];
}

// ---------------------------------------------------------------- next start

export type NextStart =
  | { type: "none" }
  /** A collect batch whose debounce has not passed: nothing starts before `dueAt`. */
  | { type: "not_due"; dueAt: number }
  | { type: "start"; owner: LaneEntry; members: LaneEntry[] };

/**
 * Who gets the free lane: the first entry in start order. A collect entry
 * takes the collect entries right behind it in the lane along (one batch,
 * lane order kept), and the batch waits until the newest of them has been
 * quiet for its debounce.
 */
export function nextStart(lane: LaneState, now: number): NextStart {
  const waiting = dedupe(lane.waiting);
  const [first] = startOrder(waiting);
  if (!first) return { type: "none" };
  if (first.kind !== "collect") return { type: "start", owner: first, members: [] };
  const members: LaneEntry[] = [];
  for (let i = waiting.indexOf(first) + 1; i < waiting.length && waiting[i].kind === "collect"; i += 1) members.push(waiting[i]);
  const batch = [first, ...members];
  const dueAt = Math.max(...batch.map((entry) => entry.acceptedAt + (entry.debounceMs ?? 0)));
  return dueAt > now ? { type: "not_due", dueAt } : { type: "start", owner: first, members };
}

// ---------------------------------------------------------------- composed prompts

const SUMMARY_CHARS = 120;

/** One line that stands for a dropped message (drop policy `summarize`). */
export function summaryLine(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= SUMMARY_CHARS ? flat : `${flat.slice(0, SUMMARY_CHARS - 1)}…`;
}

/**
 * The user message a run starts with when the lane folded other messages
 * into it: summaries of dropped messages first, then, for a collect batch,
 * every message in lane order; otherwise the run's own message unchanged.
 */
export function composeRunMessage(own: string, memberTexts: readonly string[], notes: readonly string[]): string {
  const parts: string[] = [];
  if (notes.length > 0) {
    const noun = notes.length === 1 ? "message was" : "messages were";
    parts.push(`[Queue overflow] ${notes.length} earlier ${noun} dropped because the session queue was full:\n${notes.map((n) => `- ${n}`).join("\n")}`);
  }
  if (memberTexts.length === 0) {
    parts.push(own);
  } else {
    const all = [own, ...memberTexts];
    parts.push(`[Queued messages while the agent was busy]\n\n${all.map((text, i) => `---\nQueued #${i + 1}\n${text}`).join("\n\n")}`);
  }
  return parts.join("\n\n");
}
