import { createRun, getRun, markEnqueued, requestAbort, type RunRecord } from "../aws/runs";
import { getLane } from "../aws/lanes";
import { readRunAndLane, type RunAndLane } from "../aws/read-together";
import { isStartable } from "../aws/lane-runs";
import { touchLaneRegistry } from "../aws/lane-registry";
import { resolveSessionIndexing, type KnownSession } from "../aws/sessions";
import type { Db } from "../aws/dynamo";
import type { RunExecutions } from "../aws/executions";
import { wakePausedRun } from "../aws/paused-runs";
import type { FramePusher } from "../aws/push";
import type { RunQueue } from "../aws/run-queue";
import type { AgentConfig } from "../config/config";
import { newRunId, runIdForIdempotencyKey, sha256Hex } from "../core/ids";
import { planAdmission, runsAhead, type Admission, type LaneState } from "../core/lanes";
import { priorityOf, resolveQueueSettings, type QueueMode, type QueueSettings, type Trigger } from "../core/queue-settings";
import { ensureInLane } from "../lanes/pump";
import { ApiError } from "../protocol/errors";
import type { AgentRequest } from "../protocol/agent-request";
import type { Log } from "../ports/run-deps";
import { replyToRequester } from "../events/final-response";
import { joinLane, QUEUE_FULL_ERROR } from "./admission";
import { saveSessionQueue } from "./session-queue";
import type { Caller } from "../core/access";
import { refuseClientToolCollisions } from "./client-tool-names";
import { ownedOrNone, owns, requireModelAllowed, tenantIdempotencyKey } from "../tenancy/guard";

export interface IntakeDeps {
  db: Db;
  queue: RunQueue;
  config: AgentConfig;
  /** Stamped on each accepted run (the deployed configuration's version). */
  configVersion?: string;
  /** With a WebSocket management endpoint (ws-api), a message dropped for the cap gets its requester's final answer at once. */
  pusher?: FramePusher;
  log?: Log;
  runtime?: { webSocketManagementEndpoint?: string };
  /** Wakes a run paused for input when a newer message interrupts it (intakes that may SendTaskSuccess). */
  executions?: RunExecutions;
  /** Tools registered by plugins: a client tool may not take their names. */
  pluginTools?: readonly { name: string }[];
  /**
   * Answers the chat of a channel message the intake ended without running it
   * (dropped or refused for the session queue cap): shared/channels/unstarted-reply.ts,
   * wired by shared/runtime/app-deps.ts (channels sit above the intake). Never throws.
   */
  answerUnstarted?: (runId: string) => Promise<void>;
}

/** What the caller learns about its message (seed 001 "Puesta en cola"; issue 6). */
export type IntakeStatus = "accepted" | "queued" | "steered" | "collected" | "rejected";

export interface AcceptedRun {
  runId: string;
  status: IntakeStatus;
  acceptedAt: number;
  /** The message's place in its session's acceptance order (1, 2, ...): runs start in this order. */
  seq?: number;
  sessionKey: string;
  sessionId: string;
  /** True when this request repeated an earlier one (same idempotency key): nothing new started. */
  duplicate: boolean;
  /** The queue mode that applied. */
  queueMode: QueueMode;
  /** queued / collected: how many runs start before this message, the running one included (1 = next). */
  position?: number;
  /** steered: the run expected to take the message at its next model call. */
  intoRunId?: string;
  /** interrupt: the run asked to stop so this one can run. */
  interruptedRunId?: string;
  /** rejected: `busy` (queue mode reject, or a heartbeat) or `queue_full` (cap with drop policy `new`). */
  reason?: "busy" | "queue_full";
  activeRunId?: string;
}

export interface AcceptOptions {
  /** The WebSocket request to answer with the final `res` when the run ends. */
  requester?: RunRecord["requester"];
  /** Who sends it: the run and a new session belong to its tenant; its model allow-list applies. */
  caller?: Caller;
  /** A channel message: where the reply goes (delivered when the run ends). */
  channelTarget?: RunRecord["channelTarget"];
  /**
   * The admission's reads as the entry point made them (readAdmission), because it needed the session
   * first (a WebSocket `agent` checks the tenant before it subscribes): not read again.
   */
  admission?: AdmissionRead;
  /**
   * A write the entry point started that must land before the run can join
   * its lane (where it may start, or steer into the running run, and emit):
   * the WebSocket `agent` subscription, written beside the session and the
   * run record instead of before them. Its failure fails the intake there.
   */
  beforeLane?: Promise<unknown>;
}

/** The run id a request gets (its idempotency key within the caller's tenant, else a new one) and the admission's reads for it. */
export interface AdmissionRead {
  runId: string;
  read: RunAndLane;
}

/**
 * The reads acceptRun starts with (the run, the session's lane and the
 * session, one request), for an entry point that must see the session before
 * it hands the request to the intake: the same reads are then not made twice.
 */
export async function readAdmission(deps: Pick<IntakeDeps, "db">, request: AgentRequest, caller: Caller | undefined): Promise<AdmissionRead> {
  const runId = runIdOf(request, caller);
  return { runId, read: await readRunAndLane(deps.db, runId, request.sessionKey, { withSession: true }) };
}

function runIdOf(request: AgentRequest, caller: Caller | undefined): string {
  const dedupeKey = dedupeKeyOf(request);
  return dedupeKey ? runIdForIdempotencyKey(tenantIdempotencyKey(caller, dedupeKey)) : newRunId();
}

/**
 * Intake: resolve the session, decide with the session lane what happens to
 * the message (its queue mode when the session is busy), write the run
 * record, join the lane, enqueue a pointer on the FIFO queue (the dispatcher
 * pumps the lane), answer at once.
 *
 * Crash safety: record -> lane -> queue -> `enqueuedAt` (the lane's registry
 * entry written beside the queue steps), each idempotent. A
 * repeat of the same request (same idempotency key -> same run id) finishes
 * whatever is missing; the FIFO deduplication id (the run id) makes a double
 * send harmless, and the lane never holds a message twice.
 */
export async function acceptRun(deps: IntakeDeps, request: AgentRequest, source: RunRecord["source"], options: AcceptOptions = {}): Promise<AcceptedRun> {
  const { caller } = options;
  requireModelAllowed(caller, request.model ?? deps.config.model);
  if (request.clientTools) refuseClientToolCollisions(request.clientTools, deps);
  const requestHash = hashRequest(request);
  // The run, session and lane reads do not depend on each other: one request (BatchGetItem), so the answer
  // (a webhook's 200, the REST 202) waits one round trip instead of three. On a repeat the other two are unused.
  const { runId, read } = options.admission ?? (await readAdmission(deps, request, caller));
  const existing = read.run;
  if (existing && caller && !owns(caller, existing)) throw new ApiError("IDEMPOTENCY_CONFLICT", "idempotencyKey was already used for a different request");
  if (existing) return resumeExisting(deps, existing, requestHash, options.beforeLane);

  // One read of the session serves the tenant check and the resolve.
  const known: KnownSession = { record: caller ? ownedOrNone(caller, read.session, request.sessionKey) : read.session };
  // A new session's index copy is written beside the run record (both awaited before the lane).
  const { session, indexed, created: openedSession } = await resolveSessionIndexing(deps.db, request.sessionKey, caller?.tenantId, known, runId);
  const { scope, ...requested } = request.queue ?? {};
  if (scope === "session") await saveSessionQueue(deps.db, request.sessionKey, requested);
  const settings = boundedCap(deps.config.lanes, resolveQueueSettings(deps.config.lanes, {
    request: requested,
    session: scope === "session" ? requested : session.queue,
    channel: request.channel ? deps.config.lanes.byChannel[request.channel] : undefined,
  }));
  const trigger: Trigger = request.trigger ?? (source === "webhook" ? "webhook" : "user");
  const lane = read.lane;
  const admission = planAdmission(lane, settings, trigger, priorityOf(trigger));
  const base = { runId, acceptedAt: deps.db.now(), sessionKey: request.sessionKey, sessionId: session.sessionId, duplicate: false, queueMode: settings.mode };
  if (admission.action === "reject") {
    await indexed;
    return { ...base, status: "rejected", reason: admission.reason, ...(lane.activeRunId ? { activeRunId: lane.activeRunId } : {}) };
  }

  const run = newRunRecord(deps, request, {
    ...base,
    source,
    requestHash,
    admission,
    settings,
    requester: options.requester,
    tenantId: caller?.tenantId,
    channelTarget: options.channelTarget,
    openedSession,
  });
  const [created] = await Promise.all([createRun(deps.db, run), indexed]);
  if (!created) {
    // A concurrent duplicate won the conditional put: answer with its record.
    const winner = await getRun(deps.db, runId);
    if (!winner) throw new Error(`run ${runId} vanished during intake`);
    return resumeExisting(deps, winner, requestHash, options.beforeLane);
  }
  await options.beforeLane;
  const joined = await joinLane(deps.db, run, settings);
  if (!joined.joined) {
    await deps.answerUnstarted?.(runId);
    return { ...base, status: "rejected", reason: joined.reason };
  }
  // The sweeper's registry of busy lanes is written after the append (so it never forgets a busy lane)
  // and beside the queue send, not before it: the dispatcher starts the run one round trip sooner.
  // A crash before it landed is finished by the request's repeat (resumeExisting).
  const registered = touchLaneRegistry(deps.db, run.sessionKey);
  registered.catch(() => undefined); // awaited below, whatever happens before
  for (const droppedId of joined.dropped) await answerDropped(deps, droppedId);
  if (admission.interrupt) await interrupt(deps, admission.interrupt);
  const seq = joined.lane.accepted;
  await Promise.all([enqueue(deps, run, seq), registered]);
  return { ...base, ...(seq !== undefined ? { seq } : {}), ...answerOf(admission, joined.lane, runId) };
}

interface NewRun {
  runId: string;
  acceptedAt: number;
  sessionId: string;
  source: RunRecord["source"];
  requestHash: string;
  admission: Extract<Admission, { action: "join" }>;
  settings: QueueSettings;
  requester: RunRecord["requester"] | undefined;
  tenantId: string | undefined;
  channelTarget?: RunRecord["channelTarget"];
  /** The intake created the session with this run as its lastRunId. */
  openedSession: boolean;
}

function newRunRecord(deps: IntakeDeps, request: AgentRequest, fields: NewRun): RunRecord {
  const { admission, settings } = fields;
  return {
    v: 1,
    runId: fields.runId,
    ...(fields.tenantId ? { tenantId: fields.tenantId } : {}),
    sessionKey: request.sessionKey,
    sessionId: fields.sessionId,
    message: request.message,
    ...(request.idempotencyKey ? { idempotencyKey: request.idempotencyKey } : {}),
    requestHash: fields.requestHash,
    source: fields.source,
    status: admission.answer === "accepted" ? "accepted" : "queued",
    model: request.model ?? deps.config.model,
    ...(deps.configVersion ? { configVersion: deps.configVersion } : {}),
    timeoutMs: runTimeoutMs(deps.config, request.timeoutSeconds),
    acceptedAt: fields.acceptedAt,
    lane: {
      kind: admission.kind,
      priority: admission.priority,
      mode: settings.mode,
      ...(admission.kind === "collect" ? { debounceMs: settings.debounceMs } : {}),
    },
    ...(fields.requester ? { requester: fields.requester } : {}),
    ...(fields.channelTarget ? { channelTarget: fields.channelTarget } : {}),
    ...(fields.openedSession ? { openedSession: true as const } : {}),
    ...(request.thinking ? { thinking: request.thinking } : {}),
    ...(request.extraSystemPrompt ? { extraSystemPrompt: request.extraSystemPrompt } : {}),
    ...(request.streamThinking ? { streamThinking: true } : {}),
    ...(request.clientTools ? { clientTools: request.clientTools } : {}),
    ...(request.clientToolTimeoutSeconds ? { clientToolTimeoutSeconds: request.clientToolTimeoutSeconds } : {}),
  };
}

type Placement = Pick<AcceptedRun, "status" | "position" | "intoRunId" | "interruptedRunId" | "activeRunId">;

function answerOf(admission: Extract<Admission, { action: "join" }>, lane: LaneState, runId: string): Placement {
  const ahead = runsAhead(lane, runId);
  const activeRunId = lane.activeRunId !== runId ? lane.activeRunId : undefined;
  const place = { position: Math.max(1, ahead), ...(activeRunId ? { activeRunId } : {}) };
  if (admission.answer === "accepted" && ahead === 0) return { status: "accepted" };
  if (admission.answer === "steered") return { status: "steered", ...(admission.into ? { intoRunId: admission.into } : {}) };
  if (admission.answer === "collected") return { status: "collected", ...place };
  return { status: "queued", ...place, ...(admission.interrupt ? { interruptedRunId: admission.interrupt } : {}) };
}

/** `beforeLane`: as in AcceptOptions, waited for before this may join the lane (a run a crash left out of it). */
async function resumeExisting(deps: IntakeDeps, run: RunRecord, requestHash: string, beforeLane?: Promise<unknown>): Promise<AcceptedRun> {
  if (run.requestHash !== requestHash) {
    throw new ApiError("IDEMPOTENCY_CONFLICT", "idempotencyKey was already used for a different request", {
      runId: run.runId,
    });
  }
  // Finish what a crashed first attempt left undone: the lane and its registry entry, then the queue.
  await beforeLane;
  if (isStartable(run)) {
    // Already waiting: the registry entry, written beside the first attempt's send, may be missing (an
    // append here registers the lane itself).
    const waiting = await ensureInLane(deps.db, run);
    if (waiting) await touchLaneRegistry(deps.db, run.sessionKey);
  }
  if (run.enqueuedAt === undefined && isStartable(run)) await enqueue(deps, run);
  return { ...(await currentAnswer(deps, run)), duplicate: true };
}

/** A repeated request learns where its message is now. */
async function currentAnswer(deps: IntakeDeps, run: RunRecord): Promise<AcceptedRun> {
  const base = {
    runId: run.runId,
    acceptedAt: run.acceptedAt,
    ...(run.seq !== undefined ? { seq: run.seq } : {}),
    sessionKey: run.sessionKey,
    sessionId: run.sessionId,
    duplicate: true,
    queueMode: run.lane?.mode ?? deps.config.lanes.mode,
  };
  if (run.status === "steered" || run.status === "collected") return { ...base, status: run.status, ...(run.mergedInto ? { intoRunId: run.mergedInto } : {}) };
  if (run.status === "error" && run.error === QUEUE_FULL_ERROR) return { ...base, status: "rejected", reason: "queue_full" };
  if (!isStartable(run)) return { ...base, status: "accepted" };
  const lane = await getLane(deps.db, run.sessionKey);
  if (lane.activeRunId === run.runId) return { ...base, status: "accepted" };
  const kind = run.lane?.kind ?? "run";
  const answer = kind === "steer" ? "steered" : kind === "collect" ? "collected" : "queued";
  return { ...base, ...answerOf({ action: "join", kind, priority: run.lane?.priority ?? 0, answer, into: lane.activeRunId }, lane, run.runId) };
}

async function enqueue(deps: IntakeDeps, run: RunRecord, seq?: number): Promise<void> {
  await deps.queue.send({ runId: run.runId, sessionKey: run.sessionKey });
  await markEnqueued(deps.db, run.runId, seq);
}

async function answerDropped(deps: IntakeDeps, runId: string): Promise<void> {
  await deps.answerUnstarted?.(runId);
  // Without an endpoint a push reports every connection gone; never let that remove a live one.
  if (!deps.runtime?.webSocketManagementEndpoint || !deps.pusher || !deps.log) return;
  await replyToRequester({ db: deps.db, pusher: deps.pusher, log: deps.log }, runId);
}

/** The configured `lanes.maxCap` bounds whatever cap a request or a session override asked for. */
function boundedCap(lanes: AgentConfig["lanes"], settings: QueueSettings): QueueSettings {
  return { ...settings, cap: Math.min(settings.cap, lanes.maxCap ?? settings.cap) };
}

function hashRequest(request: AgentRequest): string {
  const base: unknown[] = [request.sessionKey, request.message, request.model ?? null, request.timeoutSeconds ?? null];
  // Lane options only join the hash when given, so requests without them hash as before.
  const lane = [request.queue ?? null, request.channel ?? null, request.trigger ?? null];
  const hashed = lane.every((v) => v === null) ? base : [...base, ...lane];
  // Client tools join the hash only when given, so requests without them hash as before.
  const tools = request.clientTools ? [request.clientTools, request.clientToolTimeoutSeconds ?? null] : [];
  return sha256Hex(JSON.stringify(tools.length > 0 ? [...hashed, ...tools] : hashed));
}

/** The run's budget: the request's timeout bounded by the configured one (0 = unlimited). */
function runTimeoutMs(config: AgentConfig, requestedSeconds: number | undefined): number {
  const configured = config.agent.timeoutSeconds;
  if (requestedSeconds === undefined) return configured * 1000;
  if (configured === 0) return requestedSeconds * 1000;
  return Math.min(requestedSeconds, configured) * 1000;
}

/**
 * What makes two requests one message: the caller's idempotency key, else
 * the sender's message id within its routing (channel and session), the
 * tuple OpenClaw's queue dedupe uses.
 */
function dedupeKeyOf(request: AgentRequest): string | undefined {
  if (request.idempotencyKey) return request.idempotencyKey;
  if (request.messageId) return `message:${request.channel ?? ""}:${request.sessionKey}:${request.messageId}`;
  return undefined;
}

/** Interrupt mode: the running run stops at its next boundary; a paused one is woken to stop now. */
async function interrupt(deps: IntakeDeps, runId: string): Promise<void> {
  await requestAbort(deps.db, runId, "interrupted by a newer message");
  if (deps.executions) await wakePausedRun(deps.db, deps.executions, runId);
}
