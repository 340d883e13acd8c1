import { InvokeCommand, LambdaClient } from "@aws-sdk/client-lambda";
import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_CREDENTIALS, LOCAL_REGION, startLocalStack, type LocalStack } from "../../infra/local/stack";
import { RunRecordSchema, TERMINAL_STATUSES } from "../../shared/aws/runs";
import { loadAgentConfig } from "../../shared/config/config";
import { ERROR_CODES, HTTP_STATUS, type ErrorCode } from "../../shared/protocol/errors";
import { TestWsClient, type Frame } from "../support/ws-client";
import { signStandardWebhook, slackSignature } from "../../shared/channels/signatures";
import { agentBody, HTTP_METHODS, jsonText, nastyJson, queryString, restPath, sqsBody, taskInput, wsJunkFrame, wsRequest } from "./arbitraries";

/**
 * Property-based fuzzing of every entry point of the template-deployed local
 * stack: REST bodies, paths and query strings; WebSocket frames; SQS records
 * fed to the dispatcher; Step Functions task inputs fed to the task
 * functions. Properties: no 5xx, no crash, every refusal a precise 4xx or
 * `ok:false` code (or a named task error), and afterwards nothing
 * half-written in the table. FUZZ_RUNS sets the runs of each property
 * (default 15, so CI stays fast; `npm run fuzz` runs 1100 each). Channel
 * webhooks (Telegram, Slack, signed hooks) get random bodies and headers,
 * with valid, wrong and missing signatures.
 */
const RUNS = Math.max(1, Number(process.env.FUZZ_RUNS ?? 15));
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
const fuzzParams = { numRuns: RUNS, ...(SEED !== undefined ? { seed: SEED } : {}), endOnFailure: true } as const;
const TIMEOUT = 120_000 + RUNS * 1500;

let stack: LocalStack;
let lambda: LambdaClient;
const counts: Record<string, number> = {};
const count = (entry: string) => (counts[entry] = (counts[entry] ?? 0) + 1);

beforeAll(async () => {
  // Default channel accounts (their platforms unreachable: a reply that fails is retried, never a crash).
  const channels = {
    TELEGRAM_BOT_TOKEN: "123:fuzz",
    TELEGRAM_WEBHOOK_SECRET: TELEGRAM_SECRET,
    TELEGRAM_API_BASE_URL: "http://127.0.0.1:9",
    SLACK_SIGNING_SECRET: SLACK_SECRET,
    SLACK_BOT_TOKEN: "xoxb-fuzz",
    SLACK_API_BASE_URL: "http://127.0.0.1:9",
    HOOKS_SECRET: HOOK_SECRET,
  };
  stack = await startLocalStack({ config: loadAgentConfig(channels), sweepIntervalMs: 0 });
  lambda = new LambdaClient({ region: LOCAL_REGION, endpoint: stack.endpoints.edge, credentials: ADMIN_CREDENTIALS });
});
afterAll(async () => {
  if (Object.keys(counts).length > 0) console.info(`fuzz inputs by entry point (FUZZ_RUNS=${RUNS}):\n${JSON.stringify(counts, null, 2)}`);
  lambda?.destroy();
  await stack?.close();
});

const auth = () => ({ authorization: `Bearer ${stack.authToken}`, "content-type": "application/json" });

const TELEGRAM_SECRET = "fuzz-telegram-secret";
const SLACK_SECRET = "fuzz-slack-signing-secret";
const HOOK_SECRET = `whsec_${Buffer.from("fuzz-hook-secret-0123456789").toString("base64")}`;

/** A 4xx whose body is our error envelope with the code that maps to it (405 carries INVALID_REQUEST). */
function expectPreciseRefusal(status: number, body: string): void {
  expect(status, body).toBeLessThan(500);
  if (status < 400) return;
  const parsed = JSON.parse(body) as { error?: { code?: ErrorCode } };
  const code = parsed.error?.code;
  expect(ERROR_CODES, body).toContain(code);
  expect(status === 405 ? "INVALID_REQUEST" : HTTP_STATUS[code!], body).toBe(status === 405 ? code : status);
}

async function rest(method: string, path: string, body?: string, headers: Record<string, string> = auth()): Promise<{ status: number; body: string }> {
  const response = await fetch(`${stack.restUrl}${path}`, { method, headers, ...(body !== undefined && method !== "GET" ? { body } : {}) });
  return { status: response.status, body: await response.text() };
}

describe("REST", () => {
  it("bodies of POST /v1/agent", async () => {
    await fc.assert(
      fc.asyncProperty(jsonText(agentBody), fc.boolean(), async (body, withToken) => {
        count("REST body");
        const answer = await rest("POST", "/v1/agent", body, withToken ? auth() : { "content-type": "application/json" });
        expectPreciseRefusal(answer.status, answer.body);
        if (!withToken) expect(answer.status).toBe(401);
      }),
      fuzzParams,
    );
  }, TIMEOUT);

  it("paths and methods", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...HTTP_METHODS), restPath, jsonText(nastyJson), async (method, path, body) => {
        count("REST path");
        const answer = await rest(method, path, body);
        expectPreciseRefusal(answer.status, answer.body);
      }),
      fuzzParams,
    );
  }, TIMEOUT);

  it("query strings on every GET route, with and without a token", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom("/health", "/v1/runs/run_missing", "/v1/runs/run_missing/events", "/v1/sessions/fuzz/history", "/v1/agent"), queryString, fc.boolean(), async (path, query, withToken) => {
        count("REST query");
        const answer = await rest("GET", `${path}?${query}`, undefined, withToken ? auth() : {});
        expectPreciseRefusal(answer.status, answer.body);
      }),
      fuzzParams,
    );
  }, TIMEOUT);
});

/** A socket that reopens itself when the server closes it (a refusal may close it; that is not a crash). */
class Socket {
  private client: TestWsClient | undefined;
  private sequence = 0;
  constructor(private readonly authenticate: boolean) {}

  async get(): Promise<TestWsClient> {
    if (this.client && this.client.closeCode === undefined) return this.client;
    this.client = await TestWsClient.open(stack.webSocketUrl);
    if (this.authenticate) expect(await this.client.request("connect", { auth: { token: stack.authToken } })).toMatchObject({ ok: true });
    return this.client;
  }

  nextId(): string {
    return `fz-${(this.sequence += 1)}`;
  }

  close(): Promise<void> {
    return this.client?.close() ?? Promise.resolve();
  }
}

/** Every `res` is ok, or ok:false with one of the protocol's codes and never INTERNAL. */
function expectPreciseFrame(frame: Frame): void {
  if (frame.ok) return;
  expect(ERROR_CODES, JSON.stringify(frame)).toContain(frame.error?.code);
  expect(frame.error?.code, JSON.stringify(frame)).not.toBe("INTERNAL");
}

describe("WebSocket", () => {
  const authed = new Socket(true);
  const anonymous = new Socket(false);
  afterAll(async () => {
    await authed.close();
    await anonymous.close();
  });

  it("req frames: known, inherited and noise methods with near-valid and noise params", async () => {
    await fc.assert(
      fc.asyncProperty(wsRequest, fc.boolean(), async ({ method, params }, onAuthenticated) => {
        count("WebSocket req frame");
        // `connect` with noise goes to the anonymous socket: failed connects may close a socket.
        const socket = onAuthenticated && method !== "connect" ? authed : anonymous;
        const client = await socket.get();
        const id = socket.nextId();
        const answer = client.waitFor((f) => f.type === "res" && f.id === id, 40_000).catch((error: Error) => {
          if (client.closeCode !== undefined) return undefined;
          throw error;
        });
        client.sendRaw(JSON.stringify({ type: "req", id, method, params }));
        const frame = await answer;
        if (frame) expectPreciseFrame(frame);
      }),
      fuzzParams,
    );
  }, TIMEOUT);

  it("frames that are not requests", async () => {
    await fc.assert(
      fc.asyncProperty(wsJunkFrame, async (text) => {
        count("WebSocket junk frame");
        const client = await anonymous.get();
        const before = client.frames.filter((f) => f.type === "res").length;
        client.sendRaw(text);
        const frame = await client.waitFor(() => client.frames.filter((f) => f.type === "res").length > before, 40_000).catch((error: Error) => {
          if (client.closeCode !== undefined) return undefined;
          throw error;
        });
        if (frame) expectPreciseFrame(client.frames.filter((f) => f.type === "res").at(-1)!);
      }),
      fuzzParams,
    );
  }, TIMEOUT);
});

interface Invoked {
  functionError?: string;
  payload: unknown;
}

async function invoke(key: string, event: unknown): Promise<Invoked> {
  const out = await lambda.send(new InvokeCommand({ FunctionName: stack.functions[key]!.name, Payload: Buffer.from(JSON.stringify(event)) }));
  const text = Buffer.from(out.Payload ?? new Uint8Array()).toString("utf8");
  return { ...(out.FunctionError ? { functionError: out.FunctionError } : {}), payload: text ? JSON.parse(text) : undefined };
}

let messageSeq = 0;
function sqsRecord(body: string, groupId: string) {
  messageSeq += 1;
  const messageId = `fuzz-${messageSeq}-${Date.now()}`;
  return {
    messageId,
    receiptHandle: `rh-${messageId}`,
    body,
    attributes: { ApproximateReceiveCount: "1", SentTimestamp: String(Date.now()), SequenceNumber: String(messageSeq), MessageGroupId: groupId, SenderId: "AROAFUZZ:fuzz", MessageDeduplicationId: messageId, ApproximateFirstReceiveTimestamp: String(Date.now()) },
    messageAttributes: {},
    md5OfBody: "0",
    eventSource: "aws:sqs",
    eventSourceARN: `arn:aws:sqs:${LOCAL_REGION}:000000000000:fuzz.fifo`,
    awsRegion: LOCAL_REGION,
  };
}

describe("SQS records fed to the dispatcher", () => {
  it("refuses every record that points at no run, record by record, without failing the batch", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(sqsBody, fc.constantFrom("g1", "g2", "main")), { minLength: 1, maxLength: 5 }), async (bodies) => {
        count("SQS -> dispatcher");
        const records = bodies.map(([body, group]) => sqsRecord(body, group));
        const result = await invoke("dispatcher", { Records: records });
        expect(result.functionError, JSON.stringify(result.payload)).toBeUndefined();
        const failed = (result.payload as { batchItemFailures: { itemIdentifier: string }[] }).batchItemFailures.map((f) => f.itemIdentifier);
        expect(failed.sort()).toEqual(records.map((r) => r.messageId).sort());
      }),
      fuzzParams,
    );
  }, TIMEOUT);
});

/** The named refusals a task may answer with (Step Functions Retry/Catch match on names; none is a crash). */
const TASK_REFUSALS = new Set(["ApiError", "RunNotFoundError"]);

describe("Step Functions task inputs fed to the task functions", () => {
  it.each(["attempt", "decide", "run-finalize"])("%s", async (key) => {
    await fc.assert(
      fc.asyncProperty(taskInput, async (input) => {
        count(`Step Functions task -> ${key}`);
        const result = await invoke(key, input);
        if (!result.functionError) return;
        const errorType = (result.payload as { errorType?: string }).errorType;
        expect(TASK_REFUSALS.has(errorType ?? ""), JSON.stringify({ input, payload: result.payload })).toBe(true);
      }),
      fuzzParams,
    );
  }, TIMEOUT);
});

/** How a fuzzed webhook is signed: correctly, with the wrong secret, or not at all. */
const signing = fc.constantFrom("valid", "wrong", "none");
const channelBody = fc.oneof(
  jsonText(nastyJson),
  nastyJson.map((text) => JSON.stringify({ update_id: 1, message: { message_id: 1, text, chat: { id: 5, type: "private" }, from: { id: 7, is_bot: false } } })),
  nastyJson.map((text) => JSON.stringify({ type: "event_callback", event_id: "Ev1", team_id: "T1", event: { type: "message", text, user: "U1", channel: "D1", channel_type: "im", ts: "1.1" } })),
  nastyJson.map((text) => JSON.stringify({ text, from: "fuzz" })),
);

function channelHeaders(kind: "telegram" | "slack" | "hook", how: string, body: string): Record<string, string> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (how === "none") return headers;
  const now = Date.now();
  if (kind === "telegram") headers["x-telegram-bot-api-secret-token"] = how === "valid" ? TELEGRAM_SECRET : "wrong";
  if (kind === "slack") {
    const timestamp = String(Math.floor(now / 1000));
    headers["x-slack-request-timestamp"] = timestamp;
    headers["x-slack-signature"] = slackSignature(how === "valid" ? SLACK_SECRET : "wrong", timestamp, Buffer.from(body));
  }
  if (kind === "hook") Object.assign(headers, signStandardWebhook(how === "valid" ? HOOK_SECRET : `whsec_${Buffer.from("wrong").toString("base64")}`, `msg_${now}_${Math.random()}`, body, now));
  return headers;
}

describe("channel webhooks (verified by their signatures, not by an API key)", () => {
  it.each([
    ["telegram", "/v1/channels/telegram/default"],
    ["slack", "/v1/channels/slack/default"],
    ["hook", "/v1/hooks/default"],
  ] as const)("%s", async (kind, path) => {
    await fc.assert(
      fc.asyncProperty(channelBody, signing, fc.boolean(), async (body, how, knownAccount) => {
        count(`channel webhook ${kind}`);
        const target = knownAccount ? path : path.replace(/default$/, "nobody");
        const answer = await rest("POST", target, body, channelHeaders(kind, how, body));
        expectPreciseRefusal(answer.status, answer.body);
        if (!knownAccount) expect(answer.status).toBe(404);
        else if (how !== "valid") expect(answer.status).toBe(401);
      }),
      fuzzParams,
    );
  }, TIMEOUT);
});

describe("after the fuzzing", () => {
  it("nothing is half-written: every run record parses and ends, nothing hangs off a missing run", async () => {
    const scan = async () => {
      const items: Record<string, unknown>[] = [];
      let start: Record<string, unknown> | undefined;
      do {
        const out = await stack.deps.db.doc.send(new ScanCommand({ TableName: stack.deps.db.table, ExclusiveStartKey: start }));
        items.push(...(out.Items ?? []));
        start = out.LastEvaluatedKey;
      } while (start);
      return items;
    };
    const unfinished = async () =>
      (await scan())
        .filter((item) => item.sk === "RUN")
        .map((item) => RunRecordSchema.parse(item))
        .filter((run) => !TERMINAL_STATUSES.has(run.status) && !run.mergedInto).length;
    await expect.poll(unfinished, { timeout: TIMEOUT, interval: 1000 }).toBe(0);
    const items = await scan();
    const runIds = new Set(items.filter((item) => item.sk === "RUN").map((item) => String(item.runId)));
    for (const item of items) {
      const pk = String(item.pk);
      if (!pk.startsWith("RUN#")) continue;
      expect(runIds.has(pk.slice("RUN#".length)), JSON.stringify(item).slice(0, 300)).toBe(true);
    }
  }, TIMEOUT * 2);
});
