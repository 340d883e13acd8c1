import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { startLocalApiGateway, type LocalApiGateway } from "../../infra/local/api-gateway";

let gateway: LocalApiGateway;
const routes: string[] = [];

beforeAll(async () => {
  gateway = await startLocalApiGateway({
    port: 0,
    stage: "local",
    restHandler: async () => ({ statusCode: 200, body: "{}" }),
    webSocketHandler: async (event) => {
      routes.push(event.requestContext.routeKey);
      return { statusCode: 200 };
    },
    webSocketRoutes: ["connect"],
  });
});
afterAll(async () => gateway.close());

describe("local front door: WebSocket on the root path", () => {
  it("accepts an upgrade on / as OpenClaw's local addressing does, like /ws", async () => {
    const origin = gateway.webSocketUrl.replace(/\/ws$/, "/");
    const socket = new WebSocket(origin);
    await new Promise<void>((resolve, reject) => {
      socket.once("open", () => resolve());
      socket.once("error", reject);
    });
    socket.close();
    await new Promise((resolve) => socket.once("close", resolve));
    expect(routes).toContain("$connect");
    const rest = await fetch(`${gateway.restUrl}/`);
    expect(rest.status).toBe(200);
  });
});
