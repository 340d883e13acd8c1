/**
 * "Paused for external input" (approvals and client tools share it): the
 * pure rules (shared/core/external-input.ts), the conditional writes of the
 * store on a real DynamoDB API (dynalite), and OpenClaw's approval frames.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  approvalNeeded,
  DEFAULT_APPROVAL_TIMEOUT_SECONDS,
  EXTERNAL_INPUT_TEXTS,
  resumedCall,
  type ExternalInput,
} from "../../shared/core/external-input";
import {
  approvalIdFor,
  attachTaskToken,
  createPendingInput,
  getExternalInput,
  isAllowedAlways,
  rememberAllowAlways,
  resolveExternalInput,
} from "../../shared/aws/external-inputs";
import { ApprovalResolveParamsSchema, approvalRequestedData, pluginApprovalRequestedFrame } from "../../shared/protocol/approval-frames";
import { startTestDb, type TestDb } from "../support/local-db";

let t: TestDb;
beforeAll(async () => {
  t = await startTestDb();
});
afterAll(async () => {
  await t?.close();
});

let n = 0;
function pending(overrides: Partial<ExternalInput> = {}): Omit<ExternalInput, "v" | "status"> {
  n += 1;
  const now = t.db.now();
  return {
    runId: `run-${n}`,
    sessionKey: "s-1",
    inputId: approvalIdFor(`run-${n}`, `call-${n}`),
    kind: "approval",
    toolCallId: `call-${n}`,
    toolName: "delete_file",
    args: { path: "/tmp/x" },
    createdAt: now,
    deadlineAt: now + 300_000,
    ...overrides,
  };
}

describe("the rules", () => {
  it("config patterns (exact, prefix*) or a hook's requireApproval ask; allow-always in the session skips", () => {
    const patterns = ["delete_file", "admin_*"];
    expect(approvalNeeded("delete_file", { patterns, allowedAlways: false })).toEqual({ title: "Tool requires approval: delete_file", timeoutSeconds: DEFAULT_APPROVAL_TIMEOUT_SECONDS });
    expect(approvalNeeded("admin_reset", { patterns, allowedAlways: false })).toBeDefined();
    expect(approvalNeeded("calculator", { patterns, allowedAlways: false })).toBeUndefined();
    expect(approvalNeeded("calculator", { patterns, allowedAlways: false, fromHook: { title: "Really?", timeoutSeconds: 30 } })).toEqual({ title: "Really?", timeoutSeconds: 30 });
    expect(approvalNeeded("delete_file", { patterns, allowedAlways: true })).toBeUndefined();
  });

  it("what the resumed call does: run when allowed, OpenClaw's texts when denied or unanswered", () => {
    const base = { v: 1 as const, status: "pending" as const, ...pending() };
    expect(resumedCall(base, base.createdAt)).toBe("still_waiting");
    expect(resumedCall(base, base.deadlineAt)).toEqual({ run: false, content: EXTERNAL_INPUT_TEXTS.approvalTimedOut, isError: true });
    expect(resumedCall({ ...base, kind: "client_tool" }, base.deadlineAt)).toEqual({ run: false, content: "Client tool timed out", isError: true });
    expect(resumedCall({ ...base, status: "resolved", answer: { decision: "deny" } }, 0)).toEqual({ run: false, content: "Denied by user", isError: true });
    expect(resumedCall({ ...base, status: "resolved", answer: { decision: "allow-always" } }, 0)).toEqual({ run: true });
    expect(resumedCall({ ...base, kind: "client_tool", status: "resolved", answer: { result: "42", isError: false } }, 0)).toEqual({ run: false, content: "42", isError: false });
  });
});

describe("the store (conditional writes)", () => {
  it("creates once: a retried attempt gets the same input back", async () => {
    const input = pending();
    const first = await createPendingInput(t.db, input);
    const again = await createPendingInput(t.db, { ...input, createdAt: input.createdAt + 5 });
    expect(again).toEqual(first);
    expect(await getExternalInput(t.db, input.runId, input.inputId)).toEqual(first);
  });

  it("resolves once; a second answer is already_resolved; after the deadline expired; unknown not_found", async () => {
    const input = pending();
    await createPendingInput(t.db, input);
    const ok = await resolveExternalInput(t.db, input.runId, input.inputId, "approval", { decision: "allow-once" });
    expect(ok).toMatchObject({ ok: true, input: { status: "resolved", answer: { decision: "allow-once" } } });
    expect(await resolveExternalInput(t.db, input.runId, input.inputId, "approval", { decision: "deny" })).toMatchObject({ ok: false, refusal: { code: "already_resolved" } });

    const late = pending();
    await createPendingInput(t.db, late);
    t.advance(300_001);
    expect(await resolveExternalInput(t.db, late.runId, late.inputId, "approval", { decision: "allow-once" })).toMatchObject({ ok: false, refusal: { code: "expired" } });
    expect(await resolveExternalInput(t.db, "run-none", "apr_none", "approval", { decision: "deny" })).toMatchObject({ ok: false, refusal: { code: "not_found" } });
  });

  it("a client-tool answer cannot resolve an approval", async () => {
    const input = pending();
    await createPendingInput(t.db, input);
    expect(await resolveExternalInput(t.db, input.runId, input.inputId, "client_tool", { result: "x", isError: false })).toMatchObject({ ok: false, refusal: { code: "wrong_kind" } });
  });

  it("the pause task's token is parked while pending; after an early answer the input comes back resolved", async () => {
    const input = pending();
    await createPendingInput(t.db, input);
    expect(await attachTaskToken(t.db, input.runId, input.inputId, "token-1")).toMatchObject({ status: "pending", taskToken: "token-1" });
    const early = pending();
    await createPendingInput(t.db, early);
    await resolveExternalInput(t.db, early.runId, early.inputId, "approval", { decision: "deny" });
    const after = await attachTaskToken(t.db, early.runId, early.inputId, "token-2");
    expect(after).toMatchObject({ status: "resolved" });
    expect(after?.taskToken).toBeUndefined();
    // No item at all: the conditional write fails like a resolved one and the read finds nothing (no item is created).
    expect(await attachTaskToken(t.db, "run-none", "ctl_none", "token-3")).toBeUndefined();
    expect(await getExternalInput(t.db, "run-none", "ctl_none")).toBeUndefined();
  });

  it("allow-always is remembered per tool per session", async () => {
    await rememberAllowAlways(t.db, "s-allow", "delete_file");
    expect(await isAllowedAlways(t.db, "s-allow", "delete_file")).toBe(true);
    expect(await isAllowedAlways(t.db, "s-allow", "write_file")).toBe(false);
    expect(await isAllowedAlways(t.db, "s-other", "delete_file")).toBe(false);
  });
});

describe("OpenClaw's approval frames", () => {
  it("plugin.approval.requested carries {id, request, createdAtMs, expiresAtMs}; resolve params are {id, decision}", () => {
    const input: ExternalInput = { v: 1, status: "pending", ...pending({ title: "Delete?" }) };
    const frame = pluginApprovalRequestedFrame(input, "tool-guard");
    expect(frame).toMatchObject({
      type: "event",
      event: "plugin.approval.requested",
      payload: {
        id: input.inputId,
        request: { title: "Delete?", toolName: "delete_file", toolCallId: input.toolCallId, sessionKey: "s-1", pluginId: "tool-guard", timeoutMs: 300_000 },
        createdAtMs: input.createdAt,
        expiresAtMs: input.deadlineAt,
      },
    });
    expect(approvalRequestedData(input)).toMatchObject({ phase: "requested", approvalId: input.inputId, toolName: "delete_file", args: { path: "/tmp/x" }, expiresAt: input.deadlineAt });
    expect(ApprovalResolveParamsSchema.safeParse({ id: "apr_1", decision: "allow-always" }).success).toBe(true);
    expect(ApprovalResolveParamsSchema.safeParse({ id: "apr_1", decision: "maybe" }).success).toBe(false);
  });
});
