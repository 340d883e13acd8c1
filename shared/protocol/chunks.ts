import { randomUUID } from "node:crypto";
import { MAX_FRAME_BYTES } from "./limits";

/**
 * Frame splitting. A frame whose JSON is larger than one WebSocket frame is
 * sent as `count` chunk events; concatenating their `data` strings (in
 * `index` order) gives back the original frame's JSON text:
 *
 *   {"type":"event","event":"chunk","payload":{"chunkId":"…","index":0,"count":3,"data":"{\"type\":\"event\",…"},"seq":12}
 *
 * `seq` (when the original frame had one) is copied so a client can tell
 * which run event is arriving. Pure: used by the server to split and by
 * clients to reassemble.
 */
export const CHUNK_EVENT = "chunk";

export interface ChunkPayload {
  chunkId: string;
  index: number;
  count: number;
  data: string;
}

export interface ChunkFrame {
  type: "event";
  event: typeof CHUNK_EVENT;
  payload: ChunkPayload;
  seq?: number;
}

/** UTF-8 size of a frame as it goes on the wire. */
export function frameBytes(frame: unknown): number {
  return Buffer.byteLength(JSON.stringify(frame), "utf8");
}

/** The frame itself when it fits, else its chunks; every returned frame is at most `maxBytes`. */
export function splitFrame(frame: unknown, maxBytes = MAX_FRAME_BYTES, chunkId: string = randomUUID()): unknown[] {
  const text = JSON.stringify(frame);
  if (Buffer.byteLength(text, "utf8") <= maxBytes) return [frame];
  const seq = (frame as { seq?: unknown }).seq;
  const make = (data: string, index: number, count: number): ChunkFrame => ({
    type: "event",
    event: CHUNK_EVENT,
    payload: { chunkId, index, count, data },
    ...(typeof seq === "number" ? { seq } : {}),
  });
  // Room for the envelope with the largest index/count we could need.
  const envelope = frameBytes(make("", 999_999, 999_999));
  const budget = maxBytes - envelope;
  if (budget < 64) throw new RangeError(`maxBytes ${maxBytes} leaves no room for chunk data`);
  const slices = sliceToBudget(text, budget);
  return slices.map((data, index) => make(data, index, slices.length));
}

/**
 * Cuts `text` into pieces whose JSON string encoding fits `budget` bytes.
 * Escaping can grow a character to 6 bytes, so a piece shrinks until it fits.
 * A cut may fall inside a surrogate pair: JSON escapes the lone halves and the
 * concatenated strings restore the pair.
 */
function sliceToBudget(text: string, budget: number): string[] {
  const slices: string[] = [];
  let start = 0;
  let size = Math.floor(budget / 3);
  while (start < text.length) {
    let piece = text.slice(start, start + size);
    while (Buffer.byteLength(JSON.stringify(piece), "utf8") > budget) {
      piece = piece.slice(0, Math.max(1, Math.floor(piece.length / 2)));
    }
    slices.push(piece);
    start += piece.length;
    size = Math.max(size, piece.length);
  }
  return slices;
}

/** Client side: feed every frame; chunks are held until their frame is complete, other frames pass through. */
export class ChunkAssembler {
  private readonly pending = new Map<string, { parts: (string | undefined)[]; received: number }>();

  /** The complete frame (parsed) when this frame completes one, the frame itself when it is not a chunk, else undefined. */
  accept(frame: unknown): unknown {
    if (!isChunkFrame(frame)) return frame;
    const { chunkId, index, count, data } = frame.payload;
    const entry = this.pending.get(chunkId) ?? { parts: new Array<string | undefined>(count).fill(undefined), received: 0 };
    if (entry.parts[index] === undefined) {
      entry.parts[index] = data;
      entry.received += 1;
    }
    if (entry.received < count) {
      this.pending.set(chunkId, entry);
      return undefined;
    }
    this.pending.delete(chunkId);
    return JSON.parse(entry.parts.join(""));
  }

  /** Chunk sets still incomplete (a dropped connection loses them; replay re-sends the whole event). */
  get incomplete(): number {
    return this.pending.size;
  }
}

export function isChunkFrame(frame: unknown): frame is ChunkFrame {
  const f = frame as ChunkFrame | undefined;
  return f?.type === "event" && f.event === CHUNK_EVENT && typeof f.payload?.chunkId === "string";
}
