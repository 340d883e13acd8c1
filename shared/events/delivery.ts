import type { FramePusher, PushOutcome } from "../aws/push";
import { splitFrame } from "../protocol/chunks";
import { MAX_FRAME_BYTES } from "../protocol/limits";

/**
 * Sends one protocol frame to one connection, split into `chunk` events when
 * it is larger than a WebSocket frame. Chunks go out in order, one
 * PostToConnection each; the first `gone` stops the rest.
 */
export async function deliverFrame(pusher: FramePusher, connectionId: string, frame: unknown, maxBytes = MAX_FRAME_BYTES): Promise<PushOutcome> {
  for (const part of splitFrame(frame, maxBytes)) {
    if ((await pusher.push(connectionId, part)) === "gone") return "gone";
  }
  return "sent";
}
