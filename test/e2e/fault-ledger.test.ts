/**
 * A mutating tool and a Lambda killed mid-tool (issue 16), on the deployed
 * stack with a real MCP server: the tool-call ledger (TOOL#<id>) and the
 * pending tool turn make the fresh attempt (RecoverAttempt after the crash)
 * resume the turn without asking the model again and without running a
 * completed mutating call twice; a call that was started but never
 * completed (the attempt died between the ledger's `started` write and the
 * call) is not run again either: it surfaces as uncertain (its result says
 * so, the attempt record lists it). Each case: the run ends `ok` with its
 * answer, no orphan tool_use, gap-free events, the lane released.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FaultPlan } from "../../infra/local/faults";
import type { LocalStack } from "../../infra/local/stack";
import { listAttempts } from "../../shared/aws/attempts";
import { UNCERTAIN_TOOL_RESULT } from "../../shared/agent/tool-ledger";
import { runIdForIdempotencyKey } from "../../shared/core/ids";
import { endedRun, expectRunInvariants } from "../support/fault-invariants";
import { chat, type FakeOpenAIServer } from "../support/fake-openai-server";
import { startMcpFaultStack, type McpFaultStack } from "../support/mcp-fault-stack";
import type { McpTestServer } from "../support/mcp-test-server";

const plan = new FaultPlan();
let stack: LocalStack;
let oai: FakeOpenAIServer;
let mcp: McpTestServer;

let fixture: McpFaultStack | undefined;

beforeAll(async () => {
  fixture = await startMcpFaultStack(plan);
  ({ stack, oai, mcp } = fixture);
}, 240_000);
afterAll(async () => fixture?.close());

type ChatBody = { messages: { role: string; content: unknown; tool_call_id?: string }[] };

async function runWithTicket(sessionKey: string, callId: string, title: string) {
  oai.enqueue(chat.toolCall("kb__create_ticket", { title }, callId), chat.text("Your ticket is filed."));
  const idempotencyKey = `k-${sessionKey}`;
  const res = await fetch(`${stack.restUrl}/v1/agent`, {
    method: "POST",
    headers: { authorization: `Bearer ${stack.authToken}`, "content-type": "application/json" },
    body: JSON.stringify({ sessionKey, message: `File a ticket: ${title}`, idempotencyKey }),
  });
  expect(res.status).toBe(202);
  const run = await endedRun(stack, runIdForIdempotencyKey(idempotencyKey));
  await stack.idle();
  return run;
}

const ticketCalls = (title: string) => mcp.callsOf("create_ticket").filter((call) => call.args.title === title).length;
const toolResultSent = (callId: string) =>
  oai.requests.map((r) => r.body as ChatBody).flatMap((body) => body.messages).filter((m) => m.role === "tool" && m.tool_call_id === callId);

describe("mutating tools under a kill mid-tool (tool-call ledger, deployed stack)", () => {
  it("killed after the mutating call completed: the fresh attempt does not run it again", async () => {
    plan.clear();
    plan.add({ at: "edge", caller: "attempt", action: "dynamodb:UpdateItem", bodyIncludes: ["TOOL#call_done", ":completed"], effect: { kind: "kill", when: "after" } });
    const run = await runWithTicket("ledger-done", "call_done", "printer on fire");
    expect(plan.pending, "the fault fired").toBe(0);
    await expectRunInvariants(stack, run, "ok");
    expect(ticketCalls("printer on fire"), "the mutating tool ran once").toBe(1);
    expect(oai.pending, "the model was not asked the tool turn again").toBe(0);
    // The model saw the real result of the one call.
    expect(toolResultSent("call_done").at(-1)?.content).toMatch(/Created ticket T-/);
  }, 300_000);

  it("killed between the ledger's started write and the call: it surfaces as uncertain, never runs twice", async () => {
    plan.clear();
    const before = ticketCalls("coffee machine");
    plan.add({ at: "edge", caller: "attempt", action: "dynamodb:PutItem", bodyIncludes: "TOOL#call_cut", effect: { kind: "kill", when: "after" } });
    const run = await runWithTicket("ledger-cut", "call_cut", "coffee machine");
    expect(plan.pending, "the fault fired").toBe(0);
    await expectRunInvariants(stack, run, "ok");
    expect(ticketCalls("coffee machine") - before, "the interrupted mutating call was not run again").toBe(0);
    expect(oai.pending).toBe(0);
    const attempts = await listAttempts(stack.deps.db, run.runId);
    expect(attempts.flatMap((a) => a.uncertainToolCalls ?? []).map((t) => t.toolCallId)).toContain("call_cut");
    expect(JSON.stringify(toolResultSent("call_cut").at(-1)?.content ?? "")).toContain(UNCERTAIN_TOOL_RESULT);
  }, 300_000);
});
