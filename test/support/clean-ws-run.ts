import type { EdgeCall } from "../../infra/local/aws-edge";
import { startLocalStack } from "../../infra/local/stack";
import { loadAgentConfig } from "../../shared/config/config";
import { chat, FakeOpenAIServer } from "./fake-openai-server";
import { TestWsClient } from "./ws-client";

/**
 * One clean WebSocket `agent` run ("hello" -> "the answer") on the
 * template-deployed local stack, every AWS call its functions make passed to
 * `onEdgeCall`; `onConnected` runs between the client's `connect` and its
 * `agent` request (to leave the connect's own calls out). Answers the run id
 * once the run's lifecycle end arrived and the stack is idle.
 */
export async function cleanWsRun(
  run: { sessionKey: string; idempotencyKey: string },
  onEdgeCall: (call: EdgeCall) => void,
  onConnected: () => void = () => undefined,
): Promise<string> {
  const oai = await FakeOpenAIServer.start();
  const config = loadAgentConfig({ OPENAI_API_KEY: "test", OPENAI_BASE_URL: oai.baseURL, MODEL: "openai/gpt-4o" });
  const stack = await startLocalStack({ config, observe: { onEdgeCall } });
  try {
    const client = await TestWsClient.open(stack.webSocketUrl);
    try {
      await client.request("connect", { auth: { token: stack.authToken } });
      oai.enqueue(chat.text("the answer"));
      onConnected();
      const accepted = await client.request("agent", { sessionKey: run.sessionKey, message: "hello", idempotencyKey: run.idempotencyKey });
      const runId = accepted.payload.runId as string;
      await client.waitFor((f) => f.type === "event" && f.payload?.runId === runId && f.payload?.stream === "lifecycle" && f.payload?.data?.phase === "end");
      await stack.idle();
      return runId;
    } finally {
      await client.close();
    }
  } finally {
    await stack.close();
    await oai.close();
  }
}
