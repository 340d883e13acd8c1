import type { ApiGatewayManagementApiClient } from "@aws-sdk/client-apigatewaymanagementapi";
import type { LazyClient } from "./clients";

// The SDK package loads with the client (./clients.ts): never at the function's import.
const sdk = () => import("@aws-sdk/client-apigatewaymanagementapi");

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

export function createFramePusher(management: LazyClient<ApiGatewayManagementApiClient> | null): FramePusher {
  return {
    async push(connectionId, frame) {
      if (!management) return "gone";
      const data = Buffer.from(JSON.stringify(frame), "utf8");
      if (data.byteLength > MAX_WS_MESSAGE_BYTES) {
        throw new FrameTooLargeError(`frame of ${data.byteLength} bytes exceeds ${MAX_WS_MESSAGE_BYTES}`);
      }
      const [client, { PostToConnectionCommand, GoneException }] = await Promise.all([management(), sdk()]);
      try {
        await client.send(new PostToConnectionCommand({ ConnectionId: connectionId, Data: data }));
        return "sent";
      } catch (error) {
        if (error instanceof GoneException || (error as { name?: string }).name === "GoneException") return "gone";
        throw error;
      }
    },
    async disconnect(connectionId) {
      if (!management) return;
      const [client, { DeleteConnectionCommand }] = await Promise.all([management(), sdk()]);
      await client.send(new DeleteConnectionCommand({ ConnectionId: connectionId })).catch((error: unknown) => {
        if ((error as { name?: string }).name !== "GoneException") throw error;
      });
    },
  };
}
