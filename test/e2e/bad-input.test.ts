import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalStack, type LocalStack } from "../../infra/local/stack";
import { loadAgentConfig } from "../../shared/config/config";
import { TestWsClient } from "../support/ws-client";

let stack: LocalStack;
const url = (path: string) => `${stack.restUrl}${path}`;
const auth = (token = stack.authToken) => ({ authorization: `Bearer ${token}`, "content-type": "application/json" });

beforeAll(async () => {
  stack = await startLocalStack({ config: loadAgentConfig({}) });
});
afterAll(async () => stack?.close());

/** What requests wrote: the deployment's own items (API keys, config snapshots) are not theirs. */
const DEPLOYMENT_ITEMS = /^(APIKEY|CONFIG|RATE)#/;

async function allItems(): Promise<Record<string, unknown>[]> {
  const out = await stack.deps.db.doc.send(new ScanCommand({ TableName: stack.deps.db.table }));
  return (out.Items ?? []).filter((item) => !DEPLOYMENT_ITEMS.test(String(item.pk)));
}

async function post(path: string, body: string, headers: Record<string, string> = auth()) {
  const response = await fetch(url(path), { method: "POST", headers, body });
  return { status: response.status, body: (await response.json()) as any };
}

describe("bad input gets a precise 4xx and leaves nothing behind", () => {
  it("REST: token, JSON, fields, size, route", async () => {
    const valid = JSON.stringify({ sessionKey: "s", message: "hi" });
    expect(await post("/v1/agent", valid, { "content-type": "application/json" })).toMatchObject({ status: 401, body: { error: { code: "UNAUTHORIZED" } } });
    expect(await post("/v1/agent", valid, auth("wrong-token"))).toMatchObject({ status: 401, body: { error: { code: "UNAUTHORIZED" } } });
    expect(await post("/v1/agent", "{not json")).toMatchObject({ status: 400, body: { error: { code: "INVALID_REQUEST", message: expect.stringContaining("JSON") } } });
    const missing = await post("/v1/agent", JSON.stringify({ sessionKey: "s" }));
    expect(missing).toMatchObject({ status: 400, body: { error: { code: "INVALID_REQUEST" } } });
    expect(missing.body.error.details.issues[0].path).toBe("message");
    expect(await post("/v1/agent", JSON.stringify({ sessionKey: "s", message: "hi", surprise: 1 }))).toMatchObject({ status: 400 });
    expect(await post("/v1/agent", JSON.stringify({ sessionKey: "bad key with spaces", message: "hi" }))).toMatchObject({ status: 400 });
    const big = JSON.stringify({ sessionKey: "s", message: "x".repeat(256 * 1024 + 1) });
    expect(await post("/v1/agent", big)).toMatchObject({ status: 413, body: { error: { code: "PAYLOAD_TOO_LARGE" } } });
    const huge = JSON.stringify({ sessionKey: "s", message: "x".repeat(400 * 1024) });
    expect(await post("/v1/agent", huge)).toMatchObject({ status: 413 });
    const unknown = await fetch(url("/v1/nope"), { headers: auth() });
    expect(unknown.status).toBe(404);
    const wrongMethod = await fetch(url("/v1/agent"), { headers: auth() });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get("allow")).toBe("POST");
    const missingRun = await post("/v1/runs/run_missing/wait", "{}");
    expect(missingRun).toMatchObject({ status: 404, body: { error: { code: "NOT_FOUND" } } });
    expect(await allItems()).toEqual([]);
  });

  it("REST: reusing an idempotency key for a different request is a 409, and the first run is untouched", async () => {
    const first = await post("/v1/agent", JSON.stringify({ sessionKey: "idem", message: "one", idempotencyKey: "same" }));
    expect(first.status).toBe(202);
    const conflict = await post("/v1/agent", JSON.stringify({ sessionKey: "idem", message: "two", idempotencyKey: "same" }));
    expect(conflict).toMatchObject({ status: 409, body: { error: { code: "IDEMPOTENCY_CONFLICT", details: { runId: first.body.runId } } } });
    const waited = await post(`/v1/runs/${first.body.runId}/wait`, "{}");
    expect(waited.body.status).toBe("ok");
    const runs = (await allItems()).filter((item) => item.sk === "RUN");
    expect(runs.map((run) => run.message)).toEqual(["one"]);
  });

  it("WebSocket: bad frames, unknown methods, calls before connect, wrong token", async () => {
    // The earlier test's run may still be writing its last items (its lifecycle end is logged after the
    // terminal write that `wait` answers on): count only once the stack has gone idle.
    await stack.idle();
    const before = (await allItems()).filter((item) => String(item.pk).startsWith("RUN#")).length;
    const client = await TestWsClient.open(stack.webSocketUrl);
    try {
      client.sendRaw("{oops");
      expect(await client.waitFor((f) => f.type === "res" && f.id === null)).toMatchObject({ ok: false, error: { code: "INVALID_REQUEST" } });
      expect(await client.request("agent", { sessionKey: "w", message: "hi" })).toMatchObject({ ok: false, error: { code: "UNAUTHORIZED" } });
      expect(await client.request("connect", { auth: { token: "wrong" } })).toMatchObject({
        ok: false,
        error: { code: "UNAUTHORIZED", details: { code: "AUTH_TOKEN_MISMATCH" } },
      });
      expect(await client.request("connect", { auth: { token: stack.authToken } })).toMatchObject({ ok: true });
      expect(await client.request("no.such.method", {})).toMatchObject({ ok: false, error: { code: "UNKNOWN_METHOD" } });
      expect(await client.request("agent", { sessionKey: "w" })).toMatchObject({ ok: false, error: { code: "INVALID_REQUEST" } });
      expect(await client.request("agent.wait", { runId: "run_missing", timeoutMs: 10 })).toMatchObject({ ok: false, error: { code: "NOT_FOUND" } });
      const big = await client.request("agent", { sessionKey: "w", message: "x".repeat(100 * 1024) + "é".repeat(80 * 1024) }).catch((error: Error) => error);
      // Over API Gateway's 128 KB message limit the connection is closed (1009) before any handler runs.
      expect(big).toBeInstanceOf(Error);
      expect(client.closeCode).toBe(1009);
    } finally {
      await client.close();
    }
    const after = (await allItems()).filter((item) => String(item.pk).startsWith("RUN#")).length;
    expect(after).toBe(before);
  });
});
