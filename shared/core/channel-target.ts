import * as z from "zod";

/**
 * Where a channel run's reply goes: the exact-case delivery context the
 * platform needs, kept on the run record (schema of RunRecord.channelTarget).
 */
export const ChannelTargetSchema = z.lazy(() => z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("telegram"),
    accountId: z.string(),
    chatId: z.string(),
    /** Forum topic (message_thread_id). */
    threadId: z.number().int().optional(),
    replyToMessageId: z.number().int().optional(),
  }),
  z.object({
    kind: z.literal("slack"),
    accountId: z.string(),
    channel: z.string(),
    /** Thread root (or the message itself in a channel); absent in a DM outside a thread. */
    threadTs: z.string().optional(),
    /** The user's message (its `eyes` reaction says the run started). */
    ackTs: z.string().optional(),
  }),
  z.object({ kind: z.literal("hook"), accountId: z.string(), replyUrl: z.string().url().optional() }),
]));
export type ChannelTarget = z.infer<typeof ChannelTargetSchema>;
