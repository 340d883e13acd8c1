import * as z from "zod";
import { AttemptOutcomeSchema } from "./run-loop";

/**
 * What one attempt hands back: a diagnostic object, not a string (seed 002
 * layer 11). The outer loop decides on `outcome`; finalize shapes the reply
 * from the text blocks, tool errors and messaging-tool output; metering reads
 * usage (wasted usage apart: model output that never reached the transcript).
 *
 * Versioned and zod-validated because it is persisted with the attempt record.
 * v1 is the first version.
 */
export const UsageSchema = z.lazy(() => z.object({ input: z.number(), output: z.number(), cacheRead: z.number(), cacheWrite: z.number() }));

export const TOOL_CALL_STATUSES = [
  /** Ran and returned (isError tells whether the tool reported a failure). */
  "completed",
  /** Threw, timed out, or had invalid arguments: the model got an error result. */
  "failed",
  /** A before_tool_call hook (or a policy) refused it. */
  "blocked",
  /** A retried attempt found it completed in the ledger and reused the recorded result. */
  "replayed",
  /** Interrupted mid-flight in an earlier attempt: it may or may not have taken effect; not re-run. */
  "uncertain",
  /** Not started (or cut) because the run was aborted. */
  "aborted",
] as const;
export type ToolCallStatus = (typeof TOOL_CALL_STATUSES)[number];

export const ToolMetaSchema = z.lazy(() => z.object({
  toolCallId: z.string(),
  name: z.string(),
  status: z.enum(TOOL_CALL_STATUSES),
  isError: z.boolean(),
  /** Declared side effects (mutating tools go through the ledger). */
  mutating: z.boolean(),
  durationMs: z.number().min(0),
  resultChars: z.number().int().min(0),
  truncated: z.boolean(),
}));
export type ToolMeta = z.infer<typeof ToolMetaSchema>;

// Built on first parse (z.lazy): a function that never reads these pays nothing for them at import (issue 15).
export const AttemptResultSchema = z.lazy(() => z.object({
  v: z.literal(1),
  outcome: AttemptOutcomeSchema,
  /** Visible text blocks of the terminal assistant answer, in order. */
  textBlocks: z.array(z.string()),
  /** The blocks joined: what the reply is shaped from. */
  finalText: z.string(),
  tools: z.array(ToolMetaSchema),
  toolErrors: z.array(z.object({ toolName: z.string(), message: z.string() })),
  /** Texts a messaging tool already delivered to the user (reply shaping removes duplicates). */
  messagingToolTexts: z.array(z.string()),
  /** Every model call of the attempt, failed ones included. */
  usage: UsageSchema,
  /** The part of `usage` whose output never reached the transcript (failed, empty or aborted turns). */
  wastedUsage: UsageSchema,
  costUsd: z.number().min(0),
  modelTurns: z.number().int().min(0),
  toolCalls: z.number().int().min(0),
  /** Compactions that happened during the attempt (the outer loop runs them; 0 from the attempt itself). */
  compactionCount: z.number().int().min(0),
  /** Any mutating tool ran (or may have): replay-type retries must not repeat the turn blindly. */
  hadSideEffects: z.boolean(),
  uncertainToolCalls: z.array(z.object({ toolCallId: z.string(), name: z.string() })),
  stopReason: z.string().optional(),
  /** Size of the system prompt this attempt sent (after hooks): what timeout compaction sizes with. */
  systemPromptChars: z.number().int().min(0).optional(),
}));
export type AttemptResult = z.infer<typeof AttemptResultSchema>;
