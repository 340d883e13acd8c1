import { DeleteTableCommand, DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalStack, type LocalStack } from "../../infra/local/stack";
import { loadAgentConfig } from "../../shared/config/config";
import { TestWsClient } from "../support/ws-client";

/**
 * Review defects at the entry points, through the template-deployed local
 * stack: 5 (inherited WebSocket method names), 8 (internal error text),
 * 9 (percent-encoding, id lengths, prototype keys).
 */
let stack: LocalStack;
const functionLog: string[] = [];
const url = (path: string) => `${stack.restUrl}${path}`;
const auth = () => ({ authorization: `Bearer ${stack.authToken}`, "content-type": "application/json" });

beforeAll(async () => {
  stack = await startLocalStack({ config: loadAgentConfig({}), sweepIntervalMs: 0, functionLogs: (_fn, line) => functionLog.push(line) });
});
afterAll(async () => stack?.close());

async function call(method: string, path: string, headers: Record<string, string> = auth(), body?: string) {
  const response = await fetch(url(path), { method, headers, ...(body !== undefined ? { body } : {}) });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined, requestId: response.headers.get("x-amzn-requestid") };
}

const PROTOTYPE_NAMES = ["constructor", "__proto__", "toString", "valueOf", "hasOwnProperty", "isPrototypeOf", "__defineGetter__"];
const LONG_ID = "r".repeat(3000);

describe("defect 9: REST paths and query strings", () => {
  it.each([
    ["GET", "/v1/runs/%ZZ"],
    ["GET", "/v1/runs/%E0%A4%A/events"],
    ["POST", "/v1/runs/%/wait"],
    ["POST", "/v1/runs/%ZZ/abort"],
    ["GET", "/v1/sessions/%C3%28/history"],
  ])("%s %s (malformed percent-encoding) is a 400", async (method, path) => {
    expect(await call(method, path, auth(), method === "POST" ? "{}" : undefined)).toMatchObject({ status: 400, body: { error: { code: "INVALID_REQUEST" } } });
  });

  it.each([
    ["GET", `/v1/runs/${LONG_ID}`],
    ["GET", `/v1/runs/${LONG_ID}/events`],
    ["POST", `/v1/runs/${LONG_ID}/wait`],
    ["POST", `/v1/runs/${LONG_ID}/abort`],
    ["GET", `/v1/sessions/${"s".repeat(3000)}/history`],
    ["GET", `/v1/runs/${encodeURIComponent("run with spaces")}`],
  ])("%s %s… (an id no run or session can have) is a 400", async (method, path) => {
    expect(await call(method, path, auth(), method === "POST" ? "{}" : undefined)).toMatchObject({ status: 400, body: { error: { code: "INVALID_REQUEST" } } });
  });

  it.each(PROTOTYPE_NAMES)("query key and header %s: the route answers as usual, with and without a token", async (name) => {
    const query = `?${encodeURIComponent(name)}=1&${encodeURIComponent(name)}=2`;
    expect((await call("GET", `/health${query}`)).status).toBe(200);
    expect(await call("GET", `/v1/runs/run_missing${query}`)).toMatchObject({ status: 404, body: { error: { code: "NOT_FOUND" } } });
    expect(await call("GET", `/v1/runs/run_missing/events${query}`)).toMatchObject({ status: 404 });
    expect(await call("GET", `/v1/runs/run_missing${query}`, { "content-type": "application/json" })).toMatchObject({ status: 401, body: { error: { code: "UNAUTHORIZED" } } });
    expect(await call("GET", `/v1/sessions/nobody/history${query}`, { ...auth(), [name]: "x" })).toMatchObject({ status: 404 });
  });
});

describe("defect 5: WebSocket methods are own names only", () => {
  it("answers UNKNOWN_METHOD for every inherited name, before and after connect", async () => {
    const client = await TestWsClient.open(stack.webSocketUrl);
    try {
      for (const name of PROTOTYPE_NAMES) expect(await client.request(name, {}), name).toMatchObject({ ok: false, error: { code: "UNKNOWN_METHOD" } });
      expect(await client.request("connect", { auth: { token: stack.authToken } })).toMatchObject({ ok: true });
      for (const name of PROTOTYPE_NAMES) expect(await client.request(name, {}), name).toMatchObject({ ok: false, error: { code: "UNKNOWN_METHOD" } });
      expect(await client.request("agent.wait", { runId: LONG_ID, timeoutMs: 10 })).toMatchObject({ ok: false, error: { code: "INVALID_REQUEST" } });
      expect(await client.request("events.replay", { runId: "bad id!" })).toMatchObject({ ok: false, error: { code: "INVALID_REQUEST" } });
      expect(await client.request("agent.wait", { runId: "run_missing", timeoutMs: 10, __proto__: { x: 1 } })).toMatchObject({ ok: false });
    } finally {
      await client.close();
    }
  });
});

describe("defect 8: an unexpected failure answers a safe message and a request id; the detail is in the log", () => {
  it("REST and WebSocket, with the table gone from under the functions", async () => {
    const before = await stack.deps.db.doc.send(new ScanCommand({ TableName: stack.deps.db.table, Select: "COUNT" }));
    expect(before.Count).toBeGreaterThan(0);
    const client = await TestWsClient.open(stack.webSocketUrl);
    try {
      expect(await client.request("connect", { auth: { token: stack.authToken } })).toMatchObject({ ok: true });
      // A table operation, so the plain client (the document client sends item commands only), straight to the emulator.
      const admin = new DynamoDBClient({ region: "us-east-1", endpoint: stack.endpoints.dynamodb, credentials: { accessKeyId: "local", secretAccessKey: "local" } });
      await admin.send(new DeleteTableCommand({ TableName: stack.deps.db.table }));
      admin.destroy();

      const rest = await call("GET", "/v1/runs/run_anything");
      expect(rest.status).toBe(500);
      expect(rest.body).toEqual({ error: { code: "INTERNAL", message: `internal error (request id ${rest.requestId})`, details: { requestId: rest.requestId } } });

      const ws = await client.request("agent.wait", { runId: "run_anything", timeoutMs: 10 });
      expect(ws).toMatchObject({ ok: false, error: { code: "INTERNAL", details: { requestId: expect.any(String) } } });
      const wsRequestId = String(ws.error?.details?.requestId);
      expect(ws.error?.message).toBe(`internal error (request id ${wsRequestId})`);

      for (const answer of [JSON.stringify(rest.body), JSON.stringify(ws)]) {
        expect(answer).not.toMatch(/arn:|ResourceNotFound|000000000000|\btable\b/i);
        expect(answer).not.toContain(stack.deps.db.table);
      }
      await expect.poll(() => functionLog.some((line) => line.includes(rest.requestId!) && /ResourceNotFound|not found/i.test(line)), { timeout: 30_000 }).toBe(true);
      await expect.poll(() => functionLog.some((line) => line.includes(wsRequestId) && /ResourceNotFound|not found/i.test(line)), { timeout: 30_000 }).toBe(true);
    } finally {
      await client.close();
    }
  });
});
