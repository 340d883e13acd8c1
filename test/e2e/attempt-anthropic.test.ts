import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalStack, type LocalStack } from "../../infra/local/stack";
import { listAttempts } from "../../shared/aws/attempts";
import { keys } from "../../shared/aws/keys";
import { getRun } from "../../shared/aws/runs";
import { readTranscript } from "../../shared/aws/transcript";
import { AgentConfigSchema, loadAgentConfig } from "../../shared/config/config";
import { FakeAnthropicServer, messages } from "../support/fake-anthropic-server";

/**
 * The local stack against a fake Anthropic Messages API: the model thinks
 * (signed), calls a config-declared mutating HTTP tool and the calculator in
 * one turn, then answers. The side effect goes through the tool-call ledger.
 */
let stack: LocalStack;
let anthropic: FakeAnthropicServer;
let notes: Server;
const created: { body: unknown; idempotencyKey: unknown }[] = [];

beforeAll(async () => {
  anthropic = await FakeAnthropicServer.start();
  notes = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      created.push({ body: JSON.parse(body), idempotencyKey: req.headers["idempotency-key"] });
      res.writeHead(201, { "content-type": "application/json" });
      res.end(JSON.stringify({ id: "note-1" }));
    });
  });
  await new Promise<void>((resolve) => notes.listen(0, "127.0.0.1", resolve));
  const notesUrl = `http://127.0.0.1:${(notes.address() as AddressInfo).port}/notes`;
  const base = loadAgentConfig({ ANTHROPIC_BASE_URL: anthropic.baseURL, ANTHROPIC_API_KEY: "sk-ant-test", MODEL: "anthropic/claude-test-model" });
  const config = AgentConfigSchema.parse({
    ...base,
    tools: {
      custom: [
        {
          name: "create_note",
          description: "Store a note",
          parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
          url: notesUrl,
        },
      ],
    },
  });
  stack = await startLocalStack({ config });
});

afterAll(async () => {
  await stack?.close();
  await anthropic?.close();
  await new Promise((resolve) => notes?.close(resolve));
});

describe("attempt end to end with the Anthropic wire format", () => {
  it("replays signed thinking, runs a mutating custom tool once through the ledger, and answers", async () => {
    anthropic.enqueue(
      messages.stream({
        thinking: { text: "I should store the note and compute.", signature: "EqQBCkgIARABGAIiQL2" },
        toolUses: [
          { id: "toolu_note", name: "create_note", input: { text: "buy milk" } },
          { id: "toolu_calc", name: "calculator", input: { expression: "2 * 21" } },
        ],
      }),
      messages.text("Saved the note (note-1); 2 * 21 = 42."),
    );
    const response = await fetch(`${stack.restUrl}/v1/agent`, {
      method: "POST",
      headers: { authorization: `Bearer ${stack.authToken}`, "content-type": "application/json" },
      body: JSON.stringify({ sessionKey: "e2e-anthropic", message: "Note 'buy milk' and compute 2*21." }),
    });
    const { runId } = (await response.json()) as any;
    const waited = await fetch(`${stack.restUrl}/v1/runs/${runId}/wait`, {
      method: "POST",
      headers: { authorization: `Bearer ${stack.authToken}`, "content-type": "application/json" },
      body: JSON.stringify({ timeoutMs: 20_000 }),
    });
    expect(((await waited.json()) as any).status).toBe("ok");

    // The side effect happened exactly once, with the tool call id as idempotency key.
    expect(created).toEqual([{ body: { text: "buy milk" }, idempotencyKey: "toolu_note" }]);
    const ledger = await stack.deps.db.doc.send(new GetCommand({ TableName: stack.deps.db.table, Key: keys.toolCall(runId, "toolu_note") }));
    expect(ledger.Item).toMatchObject({ status: "completed", toolName: "create_note", result: { content: '{"id":"note-1"}', isError: false } });
    const pending = await stack.deps.db.doc.send(new GetCommand({ TableName: stack.deps.db.table, Key: keys.pendingToolTurn(runId) }));
    expect(pending.Item).toBeUndefined();

    // The second request replays the signed thinking and answers both tool uses in one user turn.
    const second = anthropic.requests[1].body as any;
    const assistantTurn = second.messages[1];
    expect(assistantTurn.content.map((b: any) => b.type)).toEqual(["thinking", "tool_use", "tool_use"]);
    expect(assistantTurn.content[0].signature).toBe("EqQBCkgIARABGAIiQL2");
    expect(second.messages[2].content.map((b: any) => [b.type, b.tool_use_id])).toEqual([
      ["tool_result", "toolu_note"],
      ["tool_result", "toolu_calc"],
    ]);

    const run = await getRun(stack.deps.db, runId);
    const transcript = (await readTranscript(stack.deps.db, run!.sessionId)).map((e) => e.message);
    expect(transcript.map((m) => m.role)).toEqual(["user", "assistant", "tool_result", "tool_result", "assistant"]);
    const [attempt] = await listAttempts(stack.deps.db, runId);
    expect(attempt).toMatchObject({ outcome: { kind: "completed" }, hadSideEffects: true, toolCalls: 2, finalText: "Saved the note (note-1); 2 * 21 = 42." });
    expect(attempt.tools?.map((t) => [t.name, t.mutating, t.status])).toEqual([
      ["create_note", true, "completed"],
      ["calculator", false, "completed"],
    ]);
    expect(run!.result?.payloads).toEqual([{ text: "Saved the note (note-1); 2 * 21 = 42." }]);
  });
});
