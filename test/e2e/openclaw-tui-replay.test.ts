import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { LocalStack } from "../../infra/local/stack";
import { getRun } from "../../shared/aws/runs";
import { CHAT_PATH, chat, chatStreamBody, FakeOpenAIServer } from "../support/fake-openai-server";
import { startStackWithFakeOpenAI, stopStackWithFakeOpenAI } from "../support/fake-openai-stack";
import { TUI_FIXTURE, type TuiFixture } from "../support/tui-fixture";
import { until } from "../support/until";
import { TestWsClient, type Frame } from "../support/ws-client";

/**
 * The frames OpenClaw's TUI (2026.9.6) sent in test/e2e/openclaw-tui.test.ts
 * (recorded on the wire into test/fixtures/openclaw/tui-session.json),
 * replayed against the local stack in the same order: every request gets
 * its answer on the same id with the `ok` the TUI got, each payload in the
 * shape the TUI reads, and each run's `chat` events in OpenClaw's order
 * (deltas, then one final | aborted).
 */
const fixture = JSON.parse(readFileSync(TUI_FIXTURE, "utf8")) as TuiFixture;
/** The TUI's chat connection: the one that sent `connect` (the first socket is its reachability probe). */
const chatConn = fixture.frames.find((f) => f.dir === "c2s" && f.frame.method === "connect")!.conn;
const requests = fixture.frames.filter((f) => f.dir === "c2s" && f.conn === chatConn).map((f) => f.frame as { id: string; method: string; params?: Record<string, unknown> });

/** Methods the TUI calls that this backend does not have (docs/protocol.md, "OpenClaw TUI"): it carries on without them. */
const NOT_SERVED = new Set(["question.list", "plugin.approval.list"]);

const Row = z.looseObject({ key: z.string(), sessionId: z.string(), updatedAt: z.number(), modelProvider: z.string(), model: z.string(), hasActiveRun: z.boolean().optional() });
const Defaults = z.looseObject({ modelProvider: z.string(), model: z.string() });
/** What the TUI reads from each answer (gateway-chat / tui sources of 2026.9.6). */
const ANSWERS: Record<string, z.ZodType> = {
  connect: z.looseObject({ type: z.literal("hello-ok"), features: z.looseObject({ methods: z.array(z.string()) }), auth: z.looseObject({ scopes: z.array(z.string()) }) }),
  "sessions.subscribe": z.looseObject({ subscribed: z.literal(true) }),
  "agents.list": z.looseObject({ defaultId: z.literal("main"), agents: z.array(z.looseObject({ id: z.string() })).min(1) }),
  "chat.history": z.looseObject({ sessionKey: z.string(), messages: z.array(z.looseObject({ role: z.string() })), defaults: Defaults }),
  "sessions.describe": z.looseObject({ key: z.string(), session: Row.nullable(), defaults: Defaults }),
  "sessions.list": z.looseObject({ sessions: z.array(Row), defaults: Defaults }),
  "commands.list": z.looseObject({ commands: z.array(z.looseObject({ name: z.string(), description: z.string(), source: z.string(), scope: z.string(), acceptsArgs: z.boolean() })) }),
  "chat.send": z.looseObject({ runId: z.string(), status: z.literal("started") }),
  "chat.abort": z.looseObject({ aborted: z.literal(true), runIds: z.array(z.string()).length(1) }),
};

/** Bounds only a broken replay: the loaded shared machine can take minutes to run a turn. */
const WAIT_MS = 300_000;

let stack: LocalStack;
let oai: FakeOpenAIServer;
let client: TestWsClient;
let release: () => void = () => undefined;
/** What the replay waits for now (printed when it fails). */
let step = "start";

beforeAll(async () => {
  ({ stack, oai } = await startStackWithFakeOpenAI());
}, 240_000);
afterAll(async () => {
  if (step !== "done") console.error(`replay stopped at: ${step}; frames: ${JSON.stringify(client?.frames.slice(-6))}`);
  release();
  await client?.close();
  await stopStackWithFakeOpenAI({ stack, oai });
});

describe("OpenClaw TUI frames, replayed", () => {
  it("the fixture holds what the TUI did: connect, history, two chat.send, one chat.abort", () => {
    const methods = requests.map((r) => r.method);
    expect(methods[0]).toBe("connect");
    expect(methods.filter((m) => m === "chat.send")).toHaveLength(2);
    expect(methods).toContain("chat.history");
    expect(methods).toContain("chat.abort");
  });

  it("answers every request on its id, in the shapes the TUI reads, with the chat events in order", async () => {
    client = await TestWsClient.open(stack.webSocketUrl);
    await client.waitFor((f) => f.event === "connect.challenge", 60_000);
    const held = new Promise<void>((resolve) => (release = resolve));
    // The TUI's two messages: one answered in full, one held mid-stream until it is aborted.
    oai.enqueue(chat.stream({ text: ["The answer ", "is ", "forty-two."] }), { kind: "sse", path: CHAT_PATH, body: chatStreamBody({ text: ["Counting: ", "one ", "two"] }), hold: { afterFrames: 2, until: held } });
    const runs: string[] = [];
    for (const request of requests) {
      step = request.method;
      if (request.method === "chat.abort") await client.waitFor((f) => f.event === "chat" && f.payload?.runId === runs.at(-1) && f.payload?.state === "delta", WAIT_MS);
      const answer = await send(request);
      expect({ method: request.method, id: answer.id, ok: answer.ok }).toEqual({ method: request.method, id: request.id, ok: !NOT_SERVED.has(request.method) });
      if (NOT_SERVED.has(request.method)) {
        expect(answer.error?.code).toBe("UNKNOWN_METHOD");
        continue;
      }
      const schema = ANSWERS[request.method];
      if (schema) expect({ method: request.method, parsed: schema.safeParse(answer.payload).success }).toEqual({ method: request.method, parsed: true });
      if (request.method === "chat.send") {
        runs.push(answer.payload.runId as string);
        // The TUI sent its next request after the first reply ended: so does the replay.
        if (runs.length === 1) await client.waitFor((f) => f.event === "chat" && f.payload?.runId === runs[0] && f.payload?.state === "final", WAIT_MS);
      }
    }
    // The held stream is released only at teardown: the abort is the one way this run can end, whatever the load.
    step = "the aborted event";
    await client.waitFor((f) => f.event === "chat" && f.payload?.runId === runs[1] && f.payload?.state === "aborted", WAIT_MS);
    step = "done";
    expect(chatStates(runs[0]!)).toEqual(["delta", "final"]);
    expect(chatStates(runs[1]!).at(-1)).toBe("aborted");
    expect(new Set(chatStates(runs[1]!).slice(0, -1))).toEqual(new Set(["delta"]));
    const final = client.frames.find((f) => f.event === "chat" && f.payload?.runId === runs[0] && f.payload?.state === "final")!;
    expect(final.payload.message.content[0].text).toBe("The answer is forty-two.");
    expect(await until(async () => (await getRun(stack.deps.db, runs[1]!))?.status, "the aborted run's record")).toBe("aborted");
    // The history now holds the first exchange, as the TUI would reload it.
    const history = await client.request("chat.history", { sessionKey: `agent:main:${fixture.session}`, limit: 200 }, 60_000);
    expect(history.payload.messages.map((m: { role: string }) => m.role).slice(0, 2)).toEqual(["user", "assistant"]);
  }, 1_200_000);
});

function send(request: { id: string; method: string; params?: Record<string, unknown> }): Promise<Frame> {
  const params = request.method === "connect" ? { ...request.params, auth: { token: stack.authToken } } : request.params;
  const answer = client.waitFor((f) => f.type === "res" && f.id === request.id, WAIT_MS);
  client.sendRaw(JSON.stringify({ ...request, params }));
  return answer;
}

function chatStates(runId: string): string[] {
  return client.frames.filter((f) => f.event === "chat" && f.payload?.runId === runId).map((f) => f.payload.state as string);
}
