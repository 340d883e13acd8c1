/**
 * Watches the raw bytes a client sends and reports the first data frame whose
 * payload is larger than the limit. API Gateway caps frames at 32 KB and
 * messages at 128 KB; `ws` has one `maxPayload` for both, so the message
 * limit goes to `ws` and the frame limit is checked here, on the wire,
 * without touching `ws` internals.
 *
 * Frame layout (RFC 6455 section 5.2): 2 bytes, then a 16- or 64-bit
 * extended length when the 7-bit length is 126 or 127, then a 4-byte mask
 * key when the mask bit is set, then the payload.
 */
const MAX_HEADER_BYTES = 14;

export class FrameSizeGuard {
  private header = Buffer.alloc(0);
  private payloadLeft = 0;

  constructor(private readonly limitBytes: number) {}

  /** Returns the offending payload length, or undefined while every frame fits. */
  feed(chunk: Buffer): number | undefined {
    let offset = 0;
    while (offset < chunk.length) {
      if (this.payloadLeft > 0) {
        const skipped = Math.min(this.payloadLeft, chunk.length - offset);
        this.payloadLeft -= skipped;
        offset += skipped;
        continue;
      }
      // Headers are at most 14 bytes and may straddle chunks, so collect up to that many.
      const carried = this.header.length;
      this.header = Buffer.concat([this.header, chunk.subarray(offset, offset + MAX_HEADER_BYTES - carried)]);
      const parsed = parseFrameHeader(this.header);
      if (parsed === undefined) return undefined; // the header continues in the next chunk
      offset += parsed.headerBytes - carried;
      this.header = Buffer.alloc(0);
      if (parsed.isData && parsed.payloadBytes > this.limitBytes) return parsed.payloadBytes;
      this.payloadLeft = parsed.payloadBytes;
    }
    return undefined;
  }
}

interface FrameHeader {
  headerBytes: number;
  payloadBytes: number;
  /** Continuation, text or binary; control frames are capped at 125 bytes by the protocol. */
  isData: boolean;
}

function parseFrameHeader(bytes: Buffer): FrameHeader | undefined {
  if (bytes.length < 2) return undefined;
  const opcode = bytes[0] & 0x0f;
  const masked = (bytes[1] & 0x80) !== 0;
  const shortLength = bytes[1] & 0x7f;
  const extendedBytes = shortLength === 126 ? 2 : shortLength === 127 ? 8 : 0;
  const headerBytes = 2 + extendedBytes + (masked ? 4 : 0);
  if (bytes.length < headerBytes) return undefined;
  const payloadBytes =
    extendedBytes === 0 ? shortLength : extendedBytes === 2 ? bytes.readUInt16BE(2) : Number(bytes.readBigUInt64BE(2));
  return { headerBytes, payloadBytes, isData: opcode <= 0x2 };
}
