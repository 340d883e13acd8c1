import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AUTHENTICATED_METHODS } from "../../functions/ws-api/methods";
import { MAX_FAILED_CONNECTS } from "../../functions/ws-api/auth-deadline";
import { startLocalStack, type LocalStack } from "../../infra/local/stack";
import { createApiKey, revokeApiKey } from "../../shared/aws/api-keys";
import { loadAgentConfig } from "../../shared/config/config";
import { TestWsClient } from "../support/ws-client";

/**
 * Tenant isolation and scopes through the template-deployed local stack:
 * tenant A's run and session, walked with tenant B's key over every REST
 * route and every WebSocket method (404 everywhere, no events), a read-only
 * key refused writes, and the edge refusing bad keys before any function.
 */
let stack: LocalStack;
let keyA: string;
let keyB: string;
let readOnlyA: string;
let runA: string;
const SESSION_A = "tenant-a-session";
/** Every function invocation the stack made, by function (the bench's observer, in its shape). */
const invoked: string[] = [];
const observe = { aroundInvoke: <R>(key: string, invoke: () => Promise<R>) => (invoked.push(key), invoke()) };

const headers = (key: string) => ({ authorization: `Bearer ${key}`, "content-type": "application/json" });

async function rest(method: string, path: string, key: string | undefined, body?: unknown) {
  const response = await fetch(`${stack.restUrl}${path}`, {
    method,
    headers: key ? headers(key) : { "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as any };
}

/** Waits (in 20 s slices: the first run cold-starts every function on a loaded machine) until the run ends. */
async function waitDone(runId: string, key: string): Promise<string> {
  for (let i = 0; i < 10; i += 1) {
    const status = (await rest("POST", `/v1/runs/${runId}/wait`, key, { timeoutMs: 20_000 })).body.status;
    if (status !== "timeout") return status;
  }
  return "timeout";
}

beforeAll(async () => {
  stack = await startLocalStack({ config: loadAgentConfig({}), observe });
  keyA = (await createApiKey(stack.deps.db, { tenantId: "acme", name: "a admin", scopes: ["operator.admin"] })).key;
  keyB = (await createApiKey(stack.deps.db, { tenantId: "globex", name: "b admin", scopes: ["operator.admin"] })).key;
  readOnlyA = (await createApiKey(stack.deps.db, { tenantId: "acme", name: "a reader", scopes: ["operator.read"] })).key;
  const accepted = await rest("POST", "/v1/agent", keyA, { sessionKey: SESSION_A, message: "hello from a", idempotencyKey: "shared-key" });
  expect(accepted.status).toBe(202);
  runA = accepted.body.runId;
  expect(await waitDone(runA, keyA)).toBe("ok");
}, 400_000);
afterAll(async () => stack?.close());

describe("the edge", () => {
  it("refuses a missing or unknown key with 401 before any function; health stays public", async () => {
    expect(await rest("GET", `/v1/runs/${runA}`, undefined)).toMatchObject({ status: 401, body: { error: { code: "UNAUTHORIZED" } } });
    expect(await rest("GET", `/v1/runs/${runA}`, "ark_not_a_key")).toMatchObject({ status: 401, body: { error: { code: "UNAUTHORIZED" } } });
    expect((await fetch(`${stack.restUrl}/health`)).status).toBe(200);
  });

  it("refuses a WebSocket upgrade with a wrong key, accepts a key in the header, ?token= or a bearer subprotocol", async () => {
    await expect(TestWsClient.open(stack.webSocketUrl, { headers: { authorization: "Bearer ark_wrong" } })).rejects.toThrow(/401/);
    const viaHeader = await TestWsClient.open(stack.webSocketUrl, { headers: { authorization: `Bearer ${keyB}` } });
    expect(await viaHeader.request("connect", {})).toMatchObject({ ok: true, payload: { type: "hello-ok" } });
    const viaQuery = await TestWsClient.open(`${stack.webSocketUrl}?token=${encodeURIComponent(keyB)}`);
    expect(await viaQuery.request("sessions.list", {})).toMatchObject({ ok: true });
    const viaProtocol = await TestWsClient.open(stack.webSocketUrl, { protocols: ["openclaw", `bearer.${keyB}`] });
    expect(viaProtocol.socket.protocol).toBe("openclaw");
    expect(await viaProtocol.request("sessions.list", {})).toMatchObject({ ok: true });
    await Promise.all([viaHeader.close(), viaQuery.close(), viaProtocol.close()]);
  });

  it(`closes an anonymous socket after ${MAX_FAILED_CONNECTS} refused connects, and one that never authenticates after 10 s`, async () => {
    const guesser = await TestWsClient.open(stack.webSocketUrl);
    for (let i = 1; i <= MAX_FAILED_CONNECTS; i += 1) {
      expect(await guesser.request("connect", { auth: { token: `guess-${i}` } })).toMatchObject({ ok: false, error: { code: "UNAUTHORIZED" } });
    }
    await new Promise<void>((resolve) => (guesser.closeCode !== undefined ? resolve() : guesser.socket.once("close", () => resolve())));
    const idle = await TestWsClient.open(stack.webSocketUrl);
    await new Promise<void>((resolve) => idle.socket.once("close", () => resolve()));
    expect(idle.closeCode).toBeDefined();
    // In-band `connect` with a key (OpenClaw's clients) still works on an anonymous socket.
    const inBand = await TestWsClient.open(stack.webSocketUrl);
    expect(await inBand.request("connect", { auth: { token: keyB } })).toMatchObject({ ok: true });
    await inBand.close();
  }, 60_000);

  it("ends the post-connect step once a socket authenticates in band, and counts it like any invocation", async () => {
    await stack.idle();
    const before = invoked.filter((key) => key === "ws-api").length;
    const client = await TestWsClient.open(stack.webSocketUrl);
    await client.waitFor((frame) => frame.type === "event" && frame.event === "connect.challenge");
    expect(await client.request("connect", { auth: { token: keyB } })).toMatchObject({ ok: true });
    // Idle means no invocation is running: the step (scheduled through the Lambda Invoke API) returned
    // with the socket open, instead of holding its invocation until the deadline.
    await stack.idle();
    expect(client.closeCode).toBeUndefined();
    // $connect, the post-connect step (an asynchronous Invoke of ws-api) and the `connect` frame.
    expect(invoked.filter((key) => key === "ws-api").length - before).toBe(3);
    expect(await client.request("sessions.list", {})).toMatchObject({ ok: true });
    await client.close();
  });
});

describe("tenant B sees nothing of tenant A", () => {
  it("gets 404 on every REST route for A's run and session, and its own run for the same idempotency key", async () => {
    const routes: [string, string, unknown?][] = [
      ["GET", `/v1/runs/${runA}`],
      ["GET", `/v1/runs/${runA}/events`],
      ["POST", `/v1/runs/${runA}/wait`, { timeoutMs: 0 }],
      ["POST", `/v1/runs/${runA}/abort`, {}],
      ["GET", `/v1/sessions/${SESSION_A}/history`],
      ["POST", "/v1/agent", { sessionKey: SESSION_A, message: "let me in" }],
      ["GET", `/v1/runs/${runA}/trace`],
      ["POST", `/v1/runs/${runA}/approvals/${runA}.apr_guess`, { decision: "allow-once" }],
      ["POST", `/v1/runs/${runA}/tool-results`, { toolCallId: "call_guess", result: "x" }],
    ];
    for (const [method, path, body] of routes) {
      expect({ route: `${method} ${path}`, ...(await rest(method, path, keyB, body)) }).toMatchObject({ status: 404, body: { error: { code: "NOT_FOUND" } } });
    }
    const own = await rest("POST", "/v1/agent", keyB, { sessionKey: "tenant-b-session", message: "hello from a", idempotencyKey: "shared-key" });
    expect(own.status).toBe(202);
    expect(own.body.runId).not.toBe(runA);
    expect((await rest("GET", `/v1/runs/${runA}`, keyA)).status).toBe(200);
    // The console's session list shows a tenant its own sessions only.
    const listed = (await rest("GET", "/v1/sessions?limit=500", keyB)).body as { sessions: { sessionKey: string }[] };
    expect(listed.sessions.map((s) => s.sessionKey)).not.toContain(SESSION_A);
    expect(((await rest("GET", "/v1/sessions?limit=500", keyA)).body as { sessions: { sessionKey: string }[] }).sessions.map((s) => s.sessionKey)).toContain(SESSION_A);
  });

  it("gets NOT_FOUND from every WebSocket method that names A's run or session, and no A events", async () => {
    const b = await TestWsClient.open(stack.webSocketUrl, { headers: { authorization: `Bearer ${keyB}` } });
    const calls: Record<string, unknown> = {
      agent: { sessionKey: SESSION_A, message: "let me in", idempotencyKey: "b-into-a" },
      "agent.wait": { runId: runA, timeoutMs: 0 },
      "sessions.subscribe": { sessionKey: SESSION_A },
      "sessions.history": { sessionKey: SESSION_A },
      "runs.abort": { runId: runA },
      "chat.abort": { sessionKey: SESSION_A },
      "events.replay": { runId: runA },
      "plugin.approval.resolve": { id: `${runA}.apr_guess`, decision: "allow-once" },
      "exec.approval.resolve": { id: `${runA}.apr_guess`, decision: "allow-once" },
      "tools.result": { runId: runA, toolCallId: "call_guess", result: "x" },
      // OpenClaw's TUI methods (docs/protocol.md, "OpenClaw TUI").
      "chat.send": { sessionKey: SESSION_A, message: "let me in", idempotencyKey: "b-chat-into-a" },
      "chat.history": { sessionKey: SESSION_A },
      "sessions.resolve": { key: SESSION_A },
      "sessions.reset": { key: SESSION_A },
      "sessions.patch": { key: SESSION_A },
    };
    for (const [method, params] of Object.entries(calls)) {
      expect({ method, ...(await b.request(method, params)) }).toMatchObject({ ok: false, error: { code: "NOT_FOUND" } });
    }
    const listed = await b.request("sessions.list", {});
    expect(listed.payload.sessions.map((s: { key: string }) => s.key)).not.toContain(SESSION_A);
    expect(await b.request("sessions.unsubscribe", { sessionKey: SESSION_A })).toMatchObject({ ok: true });
    expect(await b.request("agents.list", {})).toMatchObject({ ok: true });
    // Another tenant's session reads as one not created yet.
    expect(await b.request("sessions.describe", { key: SESSION_A })).toMatchObject({ ok: true, payload: { session: null } });
    const status = await b.request("status");
    expect(status).toMatchObject({ ok: true });
    expect(JSON.stringify(status.payload)).not.toContain(SESSION_A);
    for (const method of ["models.list", "commands.list", "config.get"]) expect({ method, ...(await b.request(method, {})) }).toMatchObject({ ok: true });
    // Every method is covered: one that names no run or session is listed above as harmless.
    const harmless = ["sessions.list", "sessions.unsubscribe", "agents.list", "sessions.describe", "status", "models.list", "commands.list", "config.get"];
    expect(Object.keys(AUTHENTICATED_METHODS).sort()).toEqual([...Object.keys(calls), ...harmless].sort());
    const second = await rest("POST", "/v1/agent", keyA, { sessionKey: SESSION_A, message: "second" });
    expect(await waitDone(second.body.runId, keyA)).toBe("ok");
    expect(b.frames.filter((f) => JSON.stringify(f).includes(SESSION_A) && f.type === "event")).toEqual([]);
    await b.close();
  }, 300_000);
});

describe("scopes", () => {
  it("a read-only key reads but cannot start or abort runs (403 FORBIDDEN), on REST and WebSocket", async () => {
    expect((await rest("GET", `/v1/runs/${runA}`, readOnlyA)).status).toBe(200);
    expect(await rest("POST", "/v1/agent", readOnlyA, { sessionKey: SESSION_A, message: "no" })).toMatchObject({ status: 403, body: { error: { code: "FORBIDDEN" } } });
    expect(await rest("POST", `/v1/runs/${runA}/abort`, readOnlyA, {})).toMatchObject({ status: 403 });
    const reader = await TestWsClient.open(stack.webSocketUrl, { headers: { authorization: `Bearer ${readOnlyA}` } });
    expect(await reader.request("sessions.history", { sessionKey: SESSION_A })).toMatchObject({ ok: true });
    expect(await reader.request("agent", { sessionKey: SESSION_A, message: "no", idempotencyKey: "ro" })).toMatchObject({ ok: false, error: { code: "FORBIDDEN" } });
    // The TUI's methods: reads with operator.read, chat.send / sessions.reset / sessions.patch need operator.write.
    expect(await reader.request("chat.history", { sessionKey: SESSION_A })).toMatchObject({ ok: true });
    for (const [method, params] of [["chat.send", { sessionKey: SESSION_A, message: "no", idempotencyKey: "ro-chat" }], ["sessions.reset", { key: SESSION_A }], ["sessions.patch", { key: SESSION_A }]] as const) {
      expect({ method, ...(await reader.request(method, params)) }).toMatchObject({ ok: false, error: { code: "FORBIDDEN" } });
    }
    await reader.close();
  });

  it("a revoked key is refused once the authorizer's cache no longer holds it (a fresh key id here)", async () => {
    const { key, record } = await createApiKey(stack.deps.db, { tenantId: "acme", name: "short-lived", scopes: ["operator.read"] });
    await revokeApiKey(stack.deps.db, record.keyId!);
    expect((await rest("GET", `/v1/runs/${runA}`, key)).status).toBe(401);
  });
});
