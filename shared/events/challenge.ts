import { randomUUID } from "node:crypto";
import { getConnection } from "../aws/connections";
import type { Db } from "../aws/dynamo";
import type { FramePusher } from "../aws/push";

/**
 * `connect.challenge`: the first frame of every connection (OpenClaw's client
 * sends nothing before it and gives up after 15 s). API Gateway accepts a
 * PostToConnection only once $connect has returned, so the post happens in a
 * step after it (an asynchronous self-invocation, in AWS and on the local
 * stack alike) and retries with backoff until the connection is usable.
 */
export const CHALLENGE_EVENT = "connect.challenge";

/** The event the $connect handler schedules; ws-api recognises it by `agentRunner`. */
export interface PostConnectEvent {
  agentRunner: "post-connect";
  connectionId: string;
  nonce: string;
  ts: number;
}

export function isPostConnectEvent(event: unknown): event is PostConnectEvent {
  return (event as PostConnectEvent | undefined)?.agentRunner === "post-connect";
}

export function newPostConnectEvent(connectionId: string, now: number): PostConnectEvent {
  return { agentRunner: "post-connect", connectionId, nonce: randomUUID(), ts: now };
}

export function challengeFrame(event: PostConnectEvent) {
  return { type: "event", event: CHALLENGE_EVENT, payload: { nonce: event.nonce, ts: event.ts } };
}

/** Backoff between tries; the total (about 10 s) stays inside the client's 15 s watchdog. */
export const CHALLENGE_RETRY_DELAYS_MS = [20, 40, 80, 150, 300, 500, 800, 1000, 1000, 1000, 1000, 1000, 1500, 1500, 1500];

export interface ChallengeDeps {
  db: Db;
  pusher: FramePusher;
  sleep?: (ms: number) => Promise<void>;
}

/** For the detached local step: its timers must not keep a closing process alive. */
export const unrefSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/** Posts the challenge; true once delivered, false when the connection never became usable (or left). */
export async function postChallenge(deps: ChallengeDeps, event: PostConnectEvent): Promise<boolean> {
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const frame = challengeFrame(event);
  for (let attempt = 0; ; attempt += 1) {
    const outcome = await deps.pusher.push(event.connectionId, frame).catch(() => "error" as const);
    if (outcome === "sent") return true;
    const delay = CHALLENGE_RETRY_DELAYS_MS[attempt];
    if (delay === undefined) return false;
    // After a few misses, stop early if the client already left ($disconnect removed the record).
    if (attempt >= 3 && !(await getConnection(deps.db, event.connectionId))) return false;
    await sleep(delay);
  }
}
