/**
 * "Paused for external input": a run that needs an answer from outside
 * (a human approving a tool call, a client running a client tool) pauses
 * with no code running and resumes when the answer or its deadline comes.
 * Approvals and client tools share this one mechanism; this module holds
 * its pure rules: the persisted record (versioned), who may resolve it and
 * when, and what the waiting tool call becomes. No AWS here.
 *
 * The wiring this is for (docs/approvals.md): the attempt ends with a
 * `paused` outcome, the state machine waits in a `.waitForTaskToken` task
 * holding only the run id and the input id, the resolver stores the answer
 * and sends the task token, the next attempt finishes the tool call.
 */
import * as z from "zod";

export const EXTERNAL_INPUT_KINDS = ["approval", "client_tool"] as const;
export type ExternalInputKind = (typeof EXTERNAL_INPUT_KINDS)[number];

/** OpenClaw's decisions (plugin-approvals schema: allow-once, allow-always, deny). */
export const APPROVAL_DECISIONS = ["allow-once", "allow-always", "deny"] as const;
export type ApprovalDecision = (typeof APPROVAL_DECISIONS)[number];

export const DEFAULT_APPROVAL_TIMEOUT_SECONDS = 300;
export const DEFAULT_CLIENT_TOOL_TIMEOUT_SECONDS = 300;

/** Tool results of a resolved input (OpenClaw's texts for approvals, reference §K). */
export const EXTERNAL_INPUT_TEXTS = {
  denied: "Denied by user",
  approvalTimedOut: "Approval timed out",
  clientToolTimedOut: "Client tool timed out",
} as const;

const ApprovalAnswerSchema = z.lazy(() => z.object({ decision: z.enum(APPROVAL_DECISIONS) }));
const ClientToolAnswerSchema = z.lazy(() => z.object({ result: z.string(), isError: z.boolean().default(false) }));

/** External-input record, schema version 1. Parsed on every read. */
export const ExternalInputSchema = z.lazy(() => z.object({
  v: z.literal(1),
  runId: z.string(),
  sessionKey: z.string(),
  /** approvalId for approvals; the toolCallId for client tools (what the client answers with). */
  inputId: z.string(),
  kind: z.enum(EXTERNAL_INPUT_KINDS),
  toolCallId: z.string(),
  toolName: z.string(),
  args: z.record(z.string(), z.unknown()),
  title: z.string().optional(),
  description: z.string().optional(),
  createdAt: z.number(),
  /** Epoch ms after which nobody may answer (the answer is then the timeout text); `expiresAt` on the wire. */
  deadlineAt: z.number(),
  status: z.enum(["pending", "resolved"]),
  /** The waiting task's token, once the pause task stored it (never leaves the table). */
  taskToken: z.string().optional(),
  answer: z.union([ApprovalAnswerSchema, ClientToolAnswerSchema]).optional(),
  resolvedAt: z.number().optional(),
  /**
   * The run's last event seq when an OpenAI API request answered this call
   * (shared/openai/client-tool-turn.ts): a retry of that request follows the
   * run from the same point. Optional: older records and other resolvers lack it.
   */
  resumedAfterSeq: z.number().int().min(0).optional(),
}));
export type ExternalInput = z.infer<typeof ExternalInputSchema>;

export type ResolveRefusal =
  | { code: "already_resolved"; message: string }
  | { code: "expired"; message: string }
  | { code: "wrong_kind"; message: string };

/**
 * May this answer be stored? Once only, and only before the deadline (both
 * are a 409 at the API). The store makes the same check atomically; this is
 * the rule and the message.
 */
export function resolveRefusal(input: ExternalInput, kind: ExternalInputKind, now: number): ResolveRefusal | undefined {
  if (input.kind !== kind) return { code: "wrong_kind", message: `${input.inputId} is not a pending ${kind === "approval" ? "approval" : "client tool call"}.` };
  if (input.status === "resolved") return { code: "already_resolved", message: `${input.inputId} was already resolved.` };
  if (now >= input.deadlineAt) return { code: "expired", message: `${input.inputId} expired at ${new Date(input.deadlineAt).toISOString()}.` };
  return undefined;
}

/** What the resumed tool call does: run the tool (approved), or take this result instead. */
export type ResumedCall = { run: true } | { run: false; content: string; isError: boolean };

export function resumedCall(input: ExternalInput, now: number): ResumedCall | "still_waiting" {
  const answer = input.status === "resolved" ? input.answer : undefined;
  if (!answer) {
    if (now < input.deadlineAt) return "still_waiting";
    const timedOut = input.kind === "approval" ? EXTERNAL_INPUT_TEXTS.approvalTimedOut : EXTERNAL_INPUT_TEXTS.clientToolTimedOut;
    return { run: false, content: timedOut, isError: true };
  }
  if ("decision" in answer) return answer.decision === "deny" ? { run: false, content: EXTERNAL_INPUT_TEXTS.denied, isError: true } : { run: true };
  return { run: false, content: answer.result, isError: answer.isError };
}

/** A before_tool_call hook's `requireApproval` (OpenClaw's plugin approval request fields). */
export interface ApprovalRequest {
  title?: string;
  description?: string;
  timeoutSeconds?: number;
}

/**
 * Does this call need a human? Config `tools.requireApproval` (exact or
 * `prefix*`) or a hook's requireApproval; an `allow-always` remembered for
 * this tool in this session skips it.
 */
export function approvalNeeded(
  toolName: string,
  rules: { patterns: readonly string[]; fromHook?: ApprovalRequest; allowedAlways: boolean },
): Required<Pick<ApprovalRequest, "title" | "timeoutSeconds">> & ApprovalRequest | undefined {
  if (rules.allowedAlways) return undefined;
  const byConfig = rules.patterns.some((pattern) => (pattern.endsWith("*") ? toolName.startsWith(pattern.slice(0, -1)) : toolName === pattern));
  if (!byConfig && !rules.fromHook) return undefined;
  return {
    ...rules.fromHook,
    title: rules.fromHook?.title ?? `Tool requires approval: ${toolName}`,
    timeoutSeconds: rules.fromHook?.timeoutSeconds ?? DEFAULT_APPROVAL_TIMEOUT_SECONDS,
  };
}
