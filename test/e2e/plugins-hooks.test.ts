/**
 * Every hook where the seeds put it, through the template-deployed local
 * stack: the plugins (the two examples in examples/plugins/, the hook
 * recorder, and a plugin acting on prompt markers) are bundled into the
 * functions from the configuration like any user's plugin. Each scenario
 * checks that a hook ran, ran once, and ran at its point of the run.
 */
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { readEntries } from "../../shared/aws/transcript";
import { modelHistory } from "../../shared/core/session-view";
import { FINALIZE_REVISION_PREFIX, MAX_BEFORE_AGENT_FINALIZE_REVISIONS } from "../../shared/agent/finalize-revision";
import { BLOCKED_BY_FAILED_HOOK } from "../../shared/hooks/runners";
import { chat, openAIErrorBody } from "../support/fake-openai-server";
import { HookRecorder } from "../support/hook-recorder";
import { startLoopStack, type LoopStack, type RunTrace } from "../support/loop-stack";
import { TestWsClient } from "../support/ws-client";
import { PERSIST_TAG } from "../fixtures/plugins/prompt-markers";

const plugin = (relative: string) => fileURLToPath(new URL(relative, import.meta.url));
const TOOL_GUARD = plugin("../../examples/plugins/tool-guard.ts");
const CONTEXT_INJECTOR = plugin("../../examples/plugins/context-injector.ts");
const PROMPT_MARKERS = plugin("../fixtures/plugins/prompt-markers.ts");

/** Every hook the recorder reports (tool_result_persist is synchronous: prompt-markers covers it). */
const RECORDED = [
  "message_received",
  "before_model_resolve",
  "before_agent_run",
  "session_start",
  "before_prompt_build",
  "before_agent_reply",
  "before_tool_call",
  "after_tool_call",
  "before_agent_finalize",
  "message_sending",
  "message_sent",
  "agent_end",
];
const GUARD_REASON = "plugin_echo is switched off in this deployment.";
const SYSTEM_CONTEXT = "House rule: answer in one sentence.";
const TURN_CONTEXT = "Note for this turn: the user is on the support plan.";

let loop: LoopStack;
let recorder: HookRecorder;
beforeAll(async () => {
  recorder = await HookRecorder.start();
  loop = await startLoopStack(({ openai }) => ({
    model: "openai/gpt-main",
    providers: { openai },
    tools: { builtin: ["calculator"] },
    plugins: [
      recorder.plugin(RECORDED),
      { path: TOOL_GUARD, config: { block: ["plugin_echo"], reason: GUARD_REASON } },
      { path: CONTEXT_INJECTOR, config: { systemContext: SYSTEM_CONTEXT, turnContext: TURN_CONTEXT } },
      PROMPT_MARKERS,
    ],
  }));
});
afterAll(async () => {
  await loop?.close();
  await recorder?.close();
});
afterEach(() => {
  const left = loop.oai.pending;
  loop.oai.clear();
  expect(left).toBe(0);
});

type Body = { model: string; messages: { role: string; content: unknown }[] };
const bodiesFrom = (from: number) => loop.oai.requests.slice(from).map((r) => r.body as Body);
const systemOf = (body: Body) => String(body.messages.find((m) => m.role === "system")?.content ?? "");
const contentOf = (body: Body, role: string) => body.messages.filter((m) => m.role === role).map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));
/** The hooks that fired for one run, in the order the recorder received them. */
const hooksOf = (runId: string) => recorder.calls.filter((call) => call.event.runId === runId).map((call) => call.hook);
const count = (hooks: string[], name: string) => hooks.filter((hook) => hook === name).length;
const payloadsOf = (run: RunTrace) => run.record.result?.payloads ?? [];

describe("a run with one tool call: each hook once, in order", () => {
  it("fires every hook at its point, once per run (agent_end after the reply, not per attempt)", async () => {
    const from = loop.oai.requests.length;
    loop.oai.enqueue(chat.toolCall("calculator", { expression: "6*7" }), chat.text("It is 42."));
    const run = await loop.run("what is 6*7?");
    expect(run.status).toBe("ok");
    expect(hooksOf(run.runId)).toEqual([
      "message_received",
      "before_model_resolve",
      "before_agent_run",
      "session_start",
      "before_prompt_build",
      "before_agent_reply",
      "before_tool_call",
      "after_tool_call",
      "before_agent_finalize",
      "message_sending",
      "message_sent",
      "agent_end",
    ]);
    const [received] = recorder.of("message_received", (e) => e.runId === run.runId);
    expect(received).toMatchObject({ text: "what is 6*7?", channel: "rest" });
    const [resolve] = recorder.of("before_model_resolve", (e) => e.runId === run.runId);
    expect(resolve).toEqual({ runId: run.runId, sessionKey: run.record.sessionKey, prompt: "what is 6*7?", model: "openai/gpt-main" });
    const [after] = recorder.of("after_tool_call", (e) => e.runId === run.runId);
    expect(after).toMatchObject({ toolName: "calculator", params: { expression: "6*7" }, isError: false, durationMs: expect.any(Number) });
    // tool_result_persist transformed the stored result; the model saw the same text.
    expect(String(after.result)).toContain(PERSIST_TAG);
    expect(contentOf(bodiesFrom(from)[1], "tool")[0]).toContain(PERSIST_TAG);
    const [finalize] = recorder.of("before_agent_finalize", (e) => e.runId === run.runId);
    expect(finalize).toMatchObject({ finalText: "It is 42.", revisions: 0 });
    const [sent] = recorder.of("message_sent", (e) => e.runId === run.runId);
    expect(sent).toMatchObject({ text: "It is 42.", channel: "rest" });
    const [end] = recorder.of("agent_end", (e) => e.runId === run.runId);
    expect(end).toMatchObject({ outcome: "ok", finalText: "It is 42.", meta: { attempts: 1, model: "openai/gpt-main" } });
    const roles = (end.messages as { role: string }[]).map((m) => m.role);
    expect(roles).toEqual(["user", "assistant", "tool_result", "assistant"]);
  });

  it("agent_end fires once for a run of two attempts; the per-attempt hooks fire per attempt", async () => {
    loop.oai.enqueue(chat.error(500, openAIErrorBody("The server had an error while processing your request.", "server_error")), chat.text("Second try."));
    const run = await loop.run("hello");
    expect(run.status).toBe("ok");
    const hooks = hooksOf(run.runId);
    expect(run.meta.attempts).toBe(2);
    expect(count(hooks, "before_prompt_build")).toBe(2);
    for (const once of ["message_received", "before_model_resolve", "before_agent_run", "before_agent_finalize", "message_sending", "message_sent", "agent_end"]) {
      expect({ hook: once, calls: count(hooks, once) }).toEqual({ hook: once, calls: 1 });
    }
    expect(recorder.of("agent_end", (e) => e.runId === run.runId)[0]).toMatchObject({ outcome: "ok", finalText: "Second try.", meta: { attempts: 2 } });
  });
});

describe("before_agent_run", () => {
  it("a block ends the run with the hook's message, error.kind hook_block, no attempt and no retry", async () => {
    const from = loop.oai.requests.length;
    const run = await loop.run("[block-run] please");
    expect(loop.oai.requests.length).toBe(from);
    expect(run.status).toBe("error");
    expect(run.record.error).toBe("Blocked: this assistant is closed for maintenance.");
    expect(payloadsOf(run)).toEqual([{ text: "Blocked: this assistant is closed for maintenance.", isError: true }]);
    expect(run.meta).toMatchObject({ error: { kind: "hook_block" }, attempts: 0 });
    expect(run.states).toEqual(["Attempt"]);
    const hooks = hooksOf(run.runId);
    expect(hooks).toEqual(["message_received", "before_model_resolve", "before_agent_run", "agent_end"]);
    expect(recorder.of("agent_end", (e) => e.runId === run.runId)[0]).toMatchObject({ outcome: "error", meta: { error: { kind: "hook_block" } } });
  });
});

describe("before_model_resolve", () => {
  it("overrides the model before resolution: the provider is called with it and the run records it", async () => {
    const from = loop.oai.requests.length;
    loop.oai.enqueue(chat.text("from the other model"));
    const run = await loop.run("[model:gpt-other] hi");
    expect(run.status).toBe("ok");
    expect(bodiesFrom(from).map((b) => b.model)).toEqual(["gpt-other"]);
    expect(run.record.model).toBe("openai/gpt-other");
    expect(recorder.of("before_agent_run", (e) => e.runId === run.runId)[0]).toMatchObject({ model: "openai/gpt-other" });
  });
});

describe("before_agent_finalize", () => {
  it("asks for revisions up to OpenClaw's cap, each a prompt with the revision prefix; then the answer stands", async () => {
    const from = loop.oai.requests.length;
    const answers = ["v0", "v1", "v2", "v3"];
    loop.oai.enqueue(...answers.map((text) => chat.text(text)));
    const run = await loop.run("[revise] write a haiku");
    expect(run.status).toBe("ok");
    expect(bodiesFrom(from)).toHaveLength(MAX_BEFORE_AGENT_FINALIZE_REVISIONS + 1);
    expect(payloadsOf(run)).toEqual([{ text: "v3" }]);
    const lastUser = contentOf(bodiesFrom(from)[3], "user");
    expect(lastUser[lastUser.length - 1]).toBe(`${FINALIZE_REVISION_PREFIX}\n\nRevision 3: shorter.`);
    expect(recorder.of("before_agent_finalize", (e) => e.runId === run.runId).map((e) => e.revisions)).toEqual([0, 1, 2]);
    // The revision requests are in the transcript, between the answers.
    const stored = modelHistory(await readEntries(loop.stack.deps.db, run.record.sessionId)).map((m) => m.role);
    expect(stored).toEqual(["user", "assistant", "user", "assistant", "user", "assistant", "user", "assistant"]);
  });
});

describe("message_sending / message_sent", () => {
  it("cancel: true drops the reply and message_sent does not fire", async () => {
    loop.oai.enqueue(chat.text("secret [cancel-send]"));
    const run = await loop.run("hi");
    expect(run.status).toBe("ok");
    expect(payloadsOf(run)).toEqual([]);
    expect(count(hooksOf(run.runId), "message_sent")).toBe(0);
    expect(count(hooksOf(run.runId), "agent_end")).toBe(1);
  });

  it("rewrites the reply on the WebSocket chat surface: the final res carries it, message_sent sees it", async () => {
    loop.oai.enqueue(chat.text("quiet words [shout]"));
    const client = await TestWsClient.open(loop.stack.webSocketUrl);
    try {
      await client.request("connect", { auth: { token: loop.stack.authToken }, caps: ["frame-chunks"] });
      const ack = await client.request("agent", { sessionKey: `ws-hooks-${Date.now()}`, message: "speak" });
      const runId = ack.payload.runId as string;
      const final = await client.waitFor((f) => f.type === "res" && f.id === ack.id && f.payload?.status === "ok", 90_000);
      expect(final.payload.result.payloads).toEqual([{ text: "QUIET WORDS [SHOUT]", mediaUrl: null }]);
      await waitUntil(() => count(hooksOf(runId), "agent_end") === 1);
      expect(recorder.of("message_received", (e) => e.runId === runId)[0]).toMatchObject({ channel: "ws", text: "speak" });
      expect(recorder.of("message_sent", (e) => e.runId === runId)).toEqual([expect.objectContaining({ text: "QUIET WORDS [SHOUT]", channel: "ws" })]);
    } finally {
      await client.close();
    }
  });
});

describe("before_tool_call with the example tool guard", () => {
  it("blocks the guarded tool with the configured reason; lower-priority handlers are skipped", async () => {
    const from = loop.oai.requests.length;
    loop.oai.enqueue(chat.toolCall("plugin_echo", { text: "x" }), chat.text("It is switched off."));
    const run = await loop.run("echo x");
    expect(run.status).toBe("ok");
    expect(contentOf(bodiesFrom(from)[1], "tool")[0]).toContain(`Error: ${GUARD_REASON}`);
    // The recorder's before_tool_call (priority 0) never saw the call the guard (priority 100) blocked.
    expect(count(hooksOf(run.runId), "before_tool_call")).toBe(0);
    expect(count(hooksOf(run.runId), "after_tool_call")).toBe(0);
  });

  it("a handler that throws blocks the call with OpenClaw's text", async () => {
    const from = loop.oai.requests.length;
    loop.oai.enqueue(chat.toolCall("calculator", { expression: "explode" }), chat.text("The guard failed."));
    const run = await loop.run("compute explode");
    expect(run.status).toBe("ok");
    expect(contentOf(bodiesFrom(from)[1], "tool")[0]).toContain(BLOCKED_BY_FAILED_HOOK);
  });
});

describe("before_prompt_build with the example context injector", () => {
  it("adds the system context to the system prompt and the turn note before the prompt, without storing the note", async () => {
    const from = loop.oai.requests.length;
    loop.oai.enqueue(chat.text("ok"));
    const run = await loop.run("what plan am I on?");
    const [body] = bodiesFrom(from);
    expect(systemOf(body)).toContain(SYSTEM_CONTEXT);
    expect(contentOf(body, "user").at(-1)).toBe(`${TURN_CONTEXT}\n\nwhat plan am I on?`);
    const stored = modelHistory(await readEntries(loop.stack.deps.db, run.record.sessionId));
    expect(stored[0]).toEqual({ role: "user", content: "what plan am I on?" });
  });
});

/** The recorder hears hooks over HTTP from the functions: wait for a condition, never for a time. */
async function waitUntil(condition: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not reached");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
