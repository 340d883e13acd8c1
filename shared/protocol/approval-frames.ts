/**
 * OpenClaw's approval frames, so OpenClaw's own clients can answer our
 * approvals. Names and shapes from OpenClaw's gateway source
 * (openclaw/openclaw `src/gateway/protocol/schema/plugin-approvals.ts`:
 * PluginApprovalRequestParams / PluginApprovalResolveParams `{id, decision}`,
 * decisions allow-once | allow-always | deny; the pushed events
 * `plugin.approval.requested` `{id, request, createdAtMs, expiresAtMs}` and
 * `plugin.approval.resolved` `{id, decision, resolvedBy?, ts}`, sent to
 * connections with the approvals scope). The `exec.approval.*` family has the same
 * event and resolve shapes for shell commands; a tool call is a plugin approval.
 */
import * as z from "zod";
import { APPROVAL_DECISIONS, type ApprovalDecision, type ExternalInput } from "../core/external-input";

export const APPROVAL_EVENTS = {
  requested: "plugin.approval.requested",
  resolved: "plugin.approval.resolved",
} as const;

/** WebSocket methods that resolve an approval: OpenClaw's, both families. */
export const APPROVAL_RESOLVE_METHODS = ["plugin.approval.resolve", "exec.approval.resolve"] as const;

/**
 * `{id, decision}`, plus what OpenClaw 2026.9.6's closed schemas also allow
 * (`PluginApprovalResolveParamsSchema` / `ExecApprovalResolveParamsSchema` in
 * the npm package's dist/src-*.mjs): an optional `reviewer` (who decided, for
 * channel reviews) and, exec only, `grantExpiresInDays` for standing grants.
 * Both are accepted and not used: our `allow-always` lasts for the session.
 */
export const ApprovalResolveParamsSchema = z.lazy(() => z
  .object({
    id: z.string().min(1),
    decision: z.enum(APPROVAL_DECISIONS),
    reviewer: z.record(z.string(), z.unknown()).optional(),
    grantExpiresInDays: z.number().int().min(1).max(3650).optional(),
  })
  .strict());

/** The run's own event (`stream: "approval"`), in the event log and on every surface. */
export function approvalRequestedData(input: ExternalInput) {
  return {
    phase: "requested" as const,
    approvalId: input.inputId,
    toolName: input.toolName,
    toolCallId: input.toolCallId,
    args: input.args,
    expiresAt: input.deadlineAt,
    ...(input.title ? { title: input.title } : {}),
    ...(input.description ? { description: input.description } : {}),
  };
}

export function approvalResolvedData(approvalId: string, decision: ApprovalDecision | "timeout") {
  return { phase: "resolved" as const, approvalId, decision };
}

/** `plugin.approval.requested` as OpenClaw's gateway pushes it. */
export function pluginApprovalRequestedFrame(input: ExternalInput, pluginId?: string) {
  return {
    type: "event" as const,
    event: APPROVAL_EVENTS.requested,
    payload: {
      id: input.inputId,
      request: {
        title: input.title ?? `Tool requires approval: ${input.toolName}`,
        description: input.description ?? `The agent wants to call ${input.toolName}.`,
        toolName: input.toolName,
        toolCallId: input.toolCallId,
        sessionKey: input.sessionKey,
        allowedDecisions: [...APPROVAL_DECISIONS],
        timeoutMs: input.deadlineAt - input.createdAt,
        ...(pluginId ? { pluginId } : {}),
      },
      createdAtMs: input.createdAt,
      expiresAtMs: input.deadlineAt,
    },
  };
}

export function pluginApprovalResolvedFrame(approvalId: string, decision: ApprovalDecision, ts: number, resolvedBy?: string) {
  return { type: "event" as const, event: APPROVAL_EVENTS.resolved, payload: { id: approvalId, decision, ts, ...(resolvedBy ? { resolvedBy } : {}) } };
}

/**
 * OpenClaw's own frame for a logged `stream: "approval"` event, so live
 * fan-out and replay both carry it (shared/events/frames.ts).
 */
export function openClawApprovalFrame(event: { sessionKey: string; ts: number; data: Record<string, unknown> }): unknown | undefined {
  const data = event.data;
  if (data.phase === "resolved" && typeof data.approvalId === "string" && (APPROVAL_DECISIONS as readonly unknown[]).includes(data.decision)) {
    return pluginApprovalResolvedFrame(data.approvalId, data.decision as ApprovalDecision, event.ts);
  }
  if (data.phase !== "requested" || typeof data.approvalId !== "string" || typeof data.expiresAt !== "number") return undefined;
  const createdAt = typeof data.createdAt === "number" ? data.createdAt : event.ts;
  return pluginApprovalRequestedFrame({
    v: 1,
    runId: "",
    sessionKey: event.sessionKey,
    inputId: data.approvalId,
    kind: "approval",
    toolCallId: String(data.toolCallId ?? ""),
    toolName: String(data.toolName ?? ""),
    args: {},
    ...(typeof data.title === "string" ? { title: data.title } : {}),
    ...(typeof data.description === "string" ? { description: data.description } : {}),
    createdAt,
    deadlineAt: data.expiresAt,
    status: "pending",
  });
}
