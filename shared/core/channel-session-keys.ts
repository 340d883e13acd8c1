/**
 * Session keys of channel messages, in OpenClaw's format (issue 13):
 *   agent:main:telegram:direct:<userId>      agent:main:telegram:group:<chatId>[:topic:<id>]
 *   agent:main:slack:direct:<userId>         agent:main:slack:channel:<channelId>[:thread:<rootTs>]
 *   hook:<hookId>:<sessionKey or sender>
 */
const UNSAFE = /[^A-Za-z0-9:._\-/@+]/g;

/** Session keys allow a narrow alphabet (shared/protocol/agent-request.ts); anything else becomes `_`. */
function safe(part: string): string {
  return part.replace(UNSAFE, "_");
}

export function telegramSessionKey(input: { chatType: "direct" | "group"; userId: string; chatId: string; topicId?: number }): string {
  if (input.chatType === "direct") return `agent:main:telegram:direct:${safe(input.userId)}`;
  const topic = input.topicId !== undefined ? `:topic:${input.topicId}` : "";
  return `agent:main:telegram:group:${safe(input.chatId)}${topic}`;
}

export function slackSessionKey(input: { chatType: "direct" | "channel"; userId: string; channelId: string; threadTs?: string }): string {
  if (input.chatType === "direct") return `agent:main:slack:direct:${safe(input.userId)}`;
  const thread = input.threadTs ? `:thread:${safe(input.threadTs)}` : "";
  return `agent:main:slack:channel:${safe(input.channelId)}${thread}`;
}

export function hookSessionKey(hookId: string, sessionKeyOrSender: string): string {
  return `hook:${safe(hookId)}:${safe(sessionKeyOrSender)}`.slice(0, 128);
}
