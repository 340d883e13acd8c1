import * as z from "zod";
import type { Message } from "./messages";

/** Zod mirror of ./messages, used to parse persisted transcript entries on read. */
const UsageSchema = z.lazy(() => z.object({ input: z.number(), output: z.number(), cacheRead: z.number(), cacheWrite: z.number() }));

const AssistantBlockSchema = z.lazy(() => z.discriminatedUnion("type", [
  z.object({ type: z.literal("text"), text: z.string() }),
  z.object({ type: z.literal("thinking"), text: z.string(), signature: z.string().optional() }),
  z.object({ type: z.literal("tool_call"), id: z.string(), name: z.string(), args: z.record(z.string(), z.unknown()) }),
]));

// Built on first parse (z.lazy): a function that never reads these pays nothing for them at import (issue 15).
export const MessageSchema: z.ZodType<Message> = z.lazy(() => z.discriminatedUnion("role", [
  z.object({ role: z.literal("user"), content: z.string() }),
  z.object({
    role: z.literal("assistant"),
    content: z.array(AssistantBlockSchema),
    provider: z.string(),
    model: z.string(),
    stopReason: z.enum(["stop", "length", "tool_calls", "content_filter", "refusal", "error", "aborted"]),
    rawStopReason: z.string().optional(),
    usage: UsageSchema,
  }),
  z.object({
    role: z.literal("tool_result"),
    toolCallId: z.string(),
    toolName: z.string(),
    content: z.string(),
    isError: z.boolean(),
  }),
]));
