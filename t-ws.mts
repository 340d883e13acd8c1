import { startStackWithFakeOpenAI } from "./test/support/fake-openai-stack.ts";
import { chat } from "./test/support/fake-openai-server.ts";
import { cliAgent, cliConnect } from "./test/support/openclaw-frames.ts";
import { TestWsClient } from "./test/support/ws-client.ts";
const { stack, oai } = await startStackWithFakeOpenAI();
async function session(scopes?: string[]) {
  const client = await TestWsClient.open(stack.webSocketUrl);
  await client.waitFor((f) => f.type === "event", 15_000);
  const connect = cliConnect(stack.authToken, scopes);
  client.sendRaw(JSON.stringify(connect));
  await client.waitFor((f) => f.type === "res" && f.id === connect.id);
  return client;
}
oai.enqueue(chat.text("pong"));
const client = await session(); console.log("s1");
const watcher = await session(["operator.read"]); console.log("s2");
console.log(await watcher.request("sessions.subscribe", { sessionKey: "agent:main:explicit:proto-a1" }));
const agent = cliAgent("Say pong", { sessionId: "proto-a1" });
client.sendRaw(JSON.stringify(agent));
console.log(JSON.stringify(await client.waitFor((f) => f.type === "res" && f.id === agent.id)).slice(0, 200));
try { console.log(JSON.stringify(await client.waitFor((f) => f.type === "res" && f.id === agent.id && f.payload?.status !== "accepted", 20000)).slice(0, 300)); } catch (e) { console.log("final missing", client.frames.map((f) => f.event ?? f.type)); }
await stack.close(); await oai.close();
