/**
 * Figure 5: what streaming costs. One subscribed client, one run that
 * streams N tokens (one model delta per word) at a given pace; counted:
 * WebSocket posts (every PostToConnection, metered) and event-log writes (the
 * items of the run's log in DynamoDB: text is logged in batches), per 1000 tokens. Deltas are coalesced by the
 * attempt sink (DELTA_FLUSH_MS / DELTA_FLUSH_CHARS), so the pace matters as much as the count.
 */
import type { LocalStack } from "../../infra/local/stack";
import { eventLogItemCount, readEvents } from "../../shared/aws/event-log";
import { sumOf } from "../../shared/aws/metering";
import { driveRun, openClient } from "../harness";
import { PRICES } from "../prices";
import type { BenchModelServer } from "../model-server";
import type { UsageRecorder } from "../recorder";
import type { Frame } from "../../test/support/ws-client";

export interface StreamCase {
  tokens: number;
  /** Delay between SSE frames (0 = as fast as the socket takes them). */
  delayMs: number;
}

export interface StreamResult extends StreamCase {
  tokensPerSecond: number;
  runMs: number;
  events: number;
  assistantEvents: number;
  posts: number;
  /** Mean bytes per posted frame (assistant events carry the text so far, so this grows with the answer). */
  meanPostBytes: number;
  /** What the client received, by kind (`event:agent`, `event:chat`, `res`). */
  frames: Record<string, number>;
  eventLogWrites: number;
  /** Every DynamoDB write request of the run (run record, transcript, lane, event log). */
  dynamoWriteRequests: number;
  /** Some assistant frame carried the text so far (`text` longer than its `delta`). */
  framesCarryText: boolean;
  writeUnits: number;
  per1000Tokens: { posts: number; eventLogWrites: number; writeUnits: number; dollars: number };
}

export async function measureStreaming(stack: LocalStack, model: BenchModelServer, recorder: UsageRecorder, cases: readonly StreamCase[]): Promise<StreamResult[]> {
  const results: StreamResult[] = [];
  for (const [i, streamCase] of cases.entries()) {
    const client = await openClient(stack);
    try {
      await stack.idle();
      await new Promise((resolve) => setTimeout(resolve, 100));
      const mark = recorder.mark();
      const seenFrames = client.frames.length;
      const tag = `stream-${i}-${streamCase.tokens}-${streamCase.delayMs}`;
      const run = await driveRun(client, {
        sessionKey: `bench-${tag}`,
        shape: "stream",
        runTag: tag,
        params: { words: streamCase.tokens, delayMs: streamCase.delayMs },
      });
      await stack.idle();
      const window = recorder.since(mark);
      const events = await readEvents(stack.deps.db, run.runId);
      // Every log item is one conditional put (a batch of text events, or one other event). Posts are
      // every frame the run caused on the wire: agent events (the client declares `surface-agent`), the `agent` answers.
      const logItems = await eventLogItemCount(stack.deps.db, run.runId);
      const posts = window.sdk["apigw-management:PostToConnection"]?.calls ?? 0;
      const frames = framesOf(client.frames.slice(seenFrames), run.runId);
      const writeUnits = sumOf(window.sdk, "dynamodb", "writeUnits");
      const scale = 1000 / streamCase.tokens;
      const dollars = posts * PRICES.apiGateway.perWebSocketMessage + writeUnits * PRICES.dynamodb.perWriteRequestUnit;
      results.push({
        ...streamCase,
        // The pace the model streamed at (its own time), not diluted by the run's overhead.
        tokensPerSecond: streamCase.tokens / (model.statsOf(tag).serverMs / 1000),
        runMs: Math.round(run.ms),
        events: events.length,
        assistantEvents: events.filter((event) => event.stream === "assistant").length,
        posts,
        meanPostBytes: posts ? Math.round((window.sdk["apigw-management:PostToConnection"]?.bytes ?? 0) / posts) : 0,
        frames,
        eventLogWrites: logItems,
        dynamoWriteRequests: writeRequests(window.sdk),
        framesCarryText: carriesText(client.frames.slice(seenFrames), run.runId),
        writeUnits,
        per1000Tokens: { posts: posts * scale, eventLogWrites: logItems * scale, writeUnits: writeUnits * scale, dollars: dollars * scale },
      });
    } finally {
      await client.close();
    }
  }
  return results;
}

function framesOf(frames: Frame[], runId: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const frame of frames) {
    if (frame.type === "event" && frame.payload?.runId !== runId) continue;
    const kind = frame.type === "event" ? `event:${frame.event}` : frame.type;
    counts[kind] = (counts[kind] ?? 0) + 1;
  }
  return counts;
}

const WRITE_OPERATIONS = ["PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"];

function writeRequests(sdk: Record<string, { calls: number }>): number {
  return WRITE_OPERATIONS.reduce((sum, op) => sum + (sdk[`dynamodb:${op}`]?.calls ?? 0), 0);
}

function carriesText(frames: Frame[], runId: string): boolean {
  return frames.some((frame) => {
    const data = frame.payload?.data as { text?: unknown; delta?: unknown } | undefined;
    return frame.type === "event" && frame.payload?.runId === runId && frame.payload?.stream === "assistant" && typeof data?.text === "string" && data.text.length > String(data.delta ?? "").length;
  });
}
