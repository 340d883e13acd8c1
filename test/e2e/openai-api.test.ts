import { readFileSync } from "node:fs";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getRun } from "../../shared/aws/runs";
import { getSession } from "../../shared/aws/sessions";
import { readTranscript } from "../../shared/aws/transcript";
import { chat } from "../support/fake-openai-server";
import { startStackWithFakeOpenAI, stopStackWithFakeOpenAI, type FakeOpenAIStack } from "../support/fake-openai-stack";

/**
 * The OpenAI-compatible API (docs/openai-api.md) through the template-deployed
 * local stack, driven by the official `openai` SDK: each request is a normal
 * run (intake, lane, state machine, attempt Lambda calling the fake OpenAI
 * server as its model), streamed through the response-streaming integration.
 */
let parts: FakeOpenAIStack;
let client: OpenAI;

beforeAll(async () => {
  parts = await startStackWithFakeOpenAI();
  client = new OpenAI({ apiKey: parts.stack.authToken, baseURL: `${parts.stack.restUrl}/v1`, maxRetries: 0 });
});

afterAll(async () => {
  await stopStackWithFakeOpenAI(parts ?? {});
});

/** The user text of the last model request the fake OpenAI server received. */
function lastModelUserText(): string {
  const body = parts.oai.lastRequest?.body as { messages: { role: string; content: unknown }[] };
  const users = body.messages.filter((m) => m.role === "user");
  const content = users[users.length - 1]?.content;
  return typeof content === "string" ? content : JSON.stringify(content);
}

describe("OpenAI-compatible API with the openai SDK", () => {
  it("lists the agent as a model and retrieves it; an unknown model is a 404", async () => {
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toContain("openclaw:main");
    const model = await client.models.retrieve("openclaw:main");
    expect(model).toMatchObject({ id: "openclaw:main", object: "model", owned_by: "openclaw" });
    await expect(client.models.retrieve("nope")).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it("chat.completions.create: one run, the reply, the run's usage", async () => {
    parts.oai.enqueue(chat.text("Hello from the runner.", { prompt: 12, completion: 5 }));
    const { data, response } = await client.chat.completions
      .create({ model: "openclaw:main", messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Say hello." }] })
      .withResponse();
    expect(data.object).toBe("chat.completion");
    expect(data.id).toMatch(/^chatcmpl-run_/);
    expect(data.choices[0]!.message).toMatchObject({ role: "assistant", content: "Hello from the runner." });
    expect(data.choices[0]!.finish_reason).toBe("stop");
    expect(data.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 });
    expect(lastModelUserText()).toContain("Say hello.");
    // System messages reach the model as part of the system prompt.
    const system = (parts.oai.lastRequest?.body as { messages: { role: string; content: string }[] }).messages.find((m) => m.role === "system" || m.role === "developer");
    expect(JSON.stringify(system)).toContain("Be brief.");
    // A new session per request without `user` or the session header.
    expect(response.headers.get("x-openclaw-session-key")).toMatch(/^agent:main:openai:/);
    expect(response.headers.get("x-openclaw-run-id")).toBe(data.id.slice("chatcmpl-".length));
  });

  it("chat.completions.create with stream: true: SSE chunks as the run goes, usage, [DONE]", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    parts.oai.enqueue({ ...chat.text("Streaming works fine.", { prompt: 8, completion: 4 }), gate } as ReturnType<typeof chat.text>);
    const stream = await client.chat.completions.create({ model: "openclaw:main", stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "Stream please." }] });
    const iterator = stream[Symbol.asyncIterator]();
    // The role chunk arrives while the model has not answered yet: the response is streamed, not buffered.
    const first = await iterator.next();
    expect(first.value?.choices[0]?.delta.role).toBe("assistant");
    release();
    let text = "";
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined | null;
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      const chunk = next.value;
      expect(chunk.object).toBe("chat.completion.chunk");
      text += chunk.choices[0]?.delta.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe("Streaming works fine.");
    expect(finish).toBe("stop");
    expect(usage).toMatchObject({ prompt_tokens: 8, completion_tokens: 4 });
  });

  it("the raw stream is text/event-stream ending with data: [DONE]", async () => {
    parts.oai.enqueue(chat.text("Raw."));
    const response = await fetch(`${parts.stack.restUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${parts.stack.authToken}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "openclaw:main", stream: true, messages: [{ role: "user", content: "Raw stream." }] }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const body = await response.text();
    expect(body.trimEnd().endsWith("data: [DONE]")).toBe(true);
    expect(body).toContain('"delta":{"role":"assistant"');
  });

  it("responses.create: output_text, usage, a completed response", async () => {
    parts.oai.enqueue(chat.text("Responses answer.", { prompt: 10, completion: 3 }));
    const response = await client.responses.create({ model: "openclaw:main", input: "Answer via responses.", instructions: "Be terse." });
    expect(response.object).toBe("response");
    expect(response.id).toMatch(/^resp_run_/);
    expect(response.status).toBe("completed");
    expect(response.output_text).toBe("Responses answer.");
    expect(response.usage).toMatchObject({ input_tokens: 10, output_tokens: 3, total_tokens: 13 });
    expect(lastModelUserText()).toContain("Answer via responses.");
  });

  it("responses.create with stream: true: typed events through response.completed", async () => {
    parts.oai.enqueue(chat.text("Streamed response text."));
    const stream = await client.responses.create({ model: "openclaw:main", input: [{ role: "user", content: "Stream a response." }], stream: true });
    const types: string[] = [];
    let deltas = "";
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === "response.output_text.delta") deltas += event.delta;
      if (event.type === "response.completed") completed = event.response;
    }
    expect(types[0]).toBe("response.created");
    expect(types).toContain("response.output_text.done");
    expect(types[types.length - 1]).toBe("response.completed");
    expect(deltas).toBe("Streamed response text.");
    expect(completed?.status).toBe("completed");
    expect(completed?.output_text).toBe("Streamed response text.");
  });

  it("`user` keeps one session across requests: the second run sees the first turn", async () => {
    parts.oai.enqueue(chat.text("Nice to meet you, Ada."), chat.text("Your name is Ada."));
    const first = await client.chat.completions.create({ model: "openclaw:main", user: "ada", messages: [{ role: "user", content: "My name is Ada." }] }).withResponse();
    const second = await client.chat.completions
      .create({ model: "openclaw:main", user: "ada", messages: [{ role: "user", content: "My name is Ada." }, { role: "assistant", content: "Nice to meet you, Ada." }, { role: "user", content: "What is my name?" }] })
      .withResponse();
    const key = first.response.headers.get("x-openclaw-session-key");
    expect(key).toBe("agent:main:openai-user:ada");
    expect(second.response.headers.get("x-openclaw-session-key")).toBe(key);
    expect(second.data.choices[0]!.message.content).toBe("Your name is Ada.");
    // Only the new turn was sent: the session's transcript holds the first one.
    const model = parts.oai.lastRequest?.body as { messages: { role: string; content: unknown }[] };
    const texts = model.messages.map((m) => JSON.stringify(m.content));
    expect(texts.filter((t) => t.includes("My name is Ada.")).length).toBe(1);
    expect(lastModelUserText()).toBe("What is my name?");
  });

  it("Responses previous_response_id continues that response's session", async () => {
    parts.oai.enqueue(chat.text("Noted: blue."), chat.text("You said blue."));
    const first = await client.responses.create({ model: "openclaw:main", input: "My color is blue." });
    const second = await client.responses.create({ model: "openclaw:main", input: "What is my color?", previous_response_id: first.id }).withResponse();
    const runId = first.id.slice("resp_".length);
    const firstRun = await getRun(parts.stack.deps.db, runId);
    expect(second.response.headers.get("x-openclaw-session-key")).toBe(firstRun!.sessionKey);
    expect(second.data.output_text).toBe("You said blue.");
    await expect(client.responses.create({ model: "openclaw:main", input: "x", previous_response_id: "resp_run_nope" })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it("x-openclaw-session-key selects the session verbatim", async () => {
    parts.oai.enqueue(chat.text("Stored."));
    await client.chat.completions.create({ model: "agent:main", messages: [{ role: "user", content: "Keep this." }] }, { headers: { "x-openclaw-session-key": "openai-test-session" } });
    const session = await getSession(parts.stack.deps.db, "openai-test-session");
    const transcript = await readTranscript(parts.stack.deps.db, session!.sessionId);
    expect(transcript.map((entry) => entry.message.role)).toEqual(["user", "assistant"]);
  });

  it("a buffered request that outlives its wait window gets 202 + Location, and the run is not lost", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    parts.oai.enqueue({ ...chat.text("Worth the wait."), gate } as ReturnType<typeof chat.text>);
    const { response, data } = await client.chat.completions
      .create({ model: "openclaw:main", messages: [{ role: "user", content: "Take your time." }] }, { headers: { prefer: "wait=1" } })
      .withResponse();
    expect(response.status).toBe(202);
    const location = response.headers.get("location")!;
    expect(location).toMatch(/^completions\/chatcmpl-run_/);
    expect(data).toMatchObject({ object: "chat.completion", status: "in_progress", choices: [] });
    const url = new URL(location, `${parts.stack.restUrl}/v1/chat/completions`);
    const headers = { authorization: `Bearer ${parts.stack.authToken}` };
    expect((await fetch(url, { headers })).status).toBe(202);
    release();
    let done: { choices: { message: { content: string } }[] } | undefined;
    for (let i = 0; i < 600 && !done; i += 1) {
      const poll = await fetch(url, { headers });
      if (poll.status === 200) done = (await poll.json()) as typeof done;
      else await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(done?.choices[0]!.message.content).toBe("Worth the wait.");
  });

  it("serves the checked-in OpenAPI document at GET /openapi.json without a token", async () => {
    const response = await fetch(`${parts.stack.restUrl}/openapi.json`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(JSON.parse(readFileSync(new URL("../../docs/openapi.json", import.meta.url), "utf8")));
  });

  it("answers OpenAI errors: a wrong key is 401, a bad body 400, a client tool named like the agent's own tools or unusable by a provider 400", async () => {
    const stranger = new OpenAI({ apiKey: "wrong", baseURL: `${parts.stack.restUrl}/v1`, maxRetries: 0 });
    await expect(stranger.models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    await expect(client.chat.completions.create({ model: "openclaw:main", messages: [] })).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    await expect(client.chat.completions.create({ model: "openclaw:other", messages: [{ role: "user", content: "hi" }] })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    for (const name of ["calculator", "bad name"]) {
      const tools = [{ type: "function" as const, function: { name, parameters: { type: "object", properties: {} } } }];
      await expect(client.chat.completions.create({ model: "openclaw:main", tools, messages: [{ role: "user", content: "hi" }] })).rejects.toMatchObject({ status: 400 });
    }
    await expect(client.chat.completions.create({ model: "openclaw:main", messages: [{ role: "user", content: "hi" }] }, { headers: { "x-openclaw-session-key": "bad key!" } })).rejects.toBeInstanceOf(OpenAI.BadRequestError);
  });

  it("a malformed percent-escape in a path is a 400 naming the parameter (shared/http/router.ts), not a 500", async () => {
    const headers = { authorization: `Bearer ${parts.stack.authToken}` };
    const malformed = await fetch(`${parts.stack.restUrl}/v1/responses/%ZZ`, { headers });
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { error: { message: string } }).error.message).toBe("path parameter id has a malformed percent-encoding");
  });
});
