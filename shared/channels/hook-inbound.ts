import * as z from "zod";
import { hookSessionKey } from "../core/channel-session-keys";
import { IdempotencyKeySchema, MessageTextSchema, SessionKeySchema } from "../protocol/agent-request";
import type { Normalized } from "./inbound";

/** Body of `POST /v1/hooks/{hookId}` (issue 13). */
export const HookBodySchema = z.lazy(() => z
  .object({
    text: MessageTextSchema,
    from: z.string().min(1).max(128),
    sessionKey: SessionKeySchema.optional(),
    replyUrl: z.string().url().refine((url) => /^https?:\/\//.test(url), "replyUrl must be http(s)").optional(),
    idempotencyKey: IdempotencyKeySchema.optional(),
  })
  .strict());
export type HookBody = z.infer<typeof HookBodySchema>;

export function normalizeHook(hookId: string, webhookId: string, body: HookBody): Normalized {
  return {
    kind: "message",
    message: {
      channel: "hook",
      accountId: hookId,
      deliveryId: `hook:${hookId}:id:${webhookId}`,
      messageKey: `hook:${hookId}:${body.idempotencyKey ?? webhookId}`,
      senderId: body.from,
      text: body.text,
      chatType: "direct",
      sessionKey: hookSessionKey(hookId, body.sessionKey ?? body.from),
      target: { kind: "hook", accountId: hookId, ...(body.replyUrl ? { replyUrl: body.replyUrl } : {}) },
    },
  };
}
