import {
  DeleteConnectionCommand,
  GoneException,
  PostToConnectionCommand,
  type ApiGatewayManagementApiClient,
} from "@aws-sdk/client-apigatewaymanagementapi";

/** API Gateway WebSocket limits: 128 KB per message (frames of 32 KB on the wire). */
export const MAX_WS_MESSAGE_BYTES = 128 * 1024;

export type PushOutcome = "sent" | "gone";

/** Sends frames to WebSocket clients through the API Gateway Management API. */
export interface FramePusher {
  push(connectionId: string, frame: unknown): Promise<PushOutcome>;
  disconnect(connectionId: string): Promise<void>;
}

export class FrameTooLargeError extends Error {
  override readonly name = "FrameTooLargeError";
}

export function createFramePusher(client: ApiGatewayManagementApiClient | null): FramePusher {
  return {
    async push(connectionId, frame) {
      if (!client) return "gone";
      const data = Buffer.from(JSON.stringify(frame), "utf8");
      if (data.byteLength > MAX_WS_MESSAGE_BYTES) {
        throw new FrameTooLargeError(`frame of ${data.byteLength} bytes exceeds ${MAX_WS_MESSAGE_BYTES}`);
      }
      try {
        await client.send(new PostToConnectionCommand({ ConnectionId: connectionId, Data: data }));
        return "sent";
      } catch (error) {
        if (error instanceof GoneException || (error as { name?: string }).name === "GoneException") return "gone";
        throw error;
      }
    },
    async disconnect(connectionId) {
      if (!client) return;
      await client.send(new DeleteConnectionCommand({ ConnectionId: connectionId })).catch((error: unknown) => {
        if ((error as { name?: string }).name !== "GoneException") throw error;
      });
    },
  };
}
