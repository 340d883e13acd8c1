import type { ToolDefinition } from "../agent/tools/types";
import { ToolInputError } from "../agent/tools/types";
import type { Db } from "../aws/dynamo";
import type { RunRecord } from "../aws/runs";
import type { ChannelsConfig } from "../config/channels-config";
import { isSilentReply } from "../core/reply";
import { splitMessage } from "../core/split-message";
import type { HookRegistry } from "../hooks/registry";
import type { Log } from "../ports/run-deps";
import { recordToolSend } from "./ledger";
import { messengerFor, type Messenger } from "./messenger";
import { afterSend, beforeSend, type OutboundRef } from "./outbound-hooks";
import { DEFAULT_RETRY, withRetry, type RetryPolicy } from "./platform-call";

export const MESSAGE_TOOL_NAME = "message";

export interface MessageToolDeps {
  db: Db;
  log: Log;
  channels: ChannelsConfig;
  hooks?: HookRegistry;
  retry?: RetryPolicy;
}

/**
 * OpenClaw's built-in messaging tool, on a Telegram or Slack run: the agent
 * sends a message to the conversation now, mid-run (a progress note, a
 * result before more work). Mutating, so it goes through the tool-call
 * ledger: a retried attempt replays the recorded result instead of sending
 * again, and an interrupted send is reported as uncertain, never repeated.
 * What it sent is recorded in the delivery ledger (`toolSends`); the final
 * answer drops a payload that only repeats it (shared/core/messaging-dedupe.ts).
 */
export function channelToolsFor(deps: MessageToolDeps, run: RunRecord): ToolDefinition[] {
  const target = run.channelTarget;
  if (!target || target.kind === "hook") return [];
  try {
    const messenger = messengerFor(deps.channels, target);
    return messenger ? [createMessageTool(deps, run, messenger)] : [];
  } catch (error) {
    deps.log.warn("no message tool", { runId: run.runId, error: (error as Error).message });
    return [];
  }
}

export function createMessageTool(deps: MessageToolDeps, run: RunRecord, messenger: Messenger): ToolDefinition {
  const ref: OutboundRef = { runId: run.runId, sessionKey: run.sessionKey, channel: run.channelTarget?.kind ?? "webhook", hooks: deps.hooks };
  return {
    name: MESSAGE_TOOL_NAME,
    description:
      "Send a message to the current conversation right away, before your final answer (a progress update, a partial result). " +
      "Your final answer is still delivered after the run; do not repeat in it what you already sent.",
    parameters: {
      type: "object",
      properties: { text: { type: "string", description: "The message text." } },
      required: ["text"],
      additionalProperties: false,
    },
    mutating: true,
    async execute(args, context) {
      const text = typeof args.text === "string" ? args.text.trim() : "";
      if (text === "") throw new ToolInputError("text must be a non-empty string");
      if (isSilentReply(text)) return { content: "Nothing was sent (NO_REPLY)." };
      const decision = await beforeSend(ref, text, { kind: "tool" });
      if (decision.cancelled) return { content: "The message was not sent: a message_sending hook cancelled it." };
      const messageIds: string[] = [];
      for (const part of splitMessage(decision.text, messenger.limit)) {
        const sent = await withRetry(() => messenger.send(part), deps.retry ?? DEFAULT_RETRY);
        if (!sent.ok) {
          if (messageIds.length > 0) await recordToolSend(deps.db, run.runId, { toolCallId: context.toolCallId ?? "", messageIds, text: decision.text });
          return { content: `Error: the message was not sent: ${sent.error}`, isError: true };
        }
        messageIds.push(sent.data.messageId);
      }
      await recordToolSend(deps.db, run.runId, { toolCallId: context.toolCallId ?? "", messageIds, text: decision.text });
      await afterSend(ref, decision.text, { kind: "tool", messageId: messageIds[0] });
      return { content: "Sent.", sentMessages: [decision.text] };
    },
  };
}
