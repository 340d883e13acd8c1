import { describe, expect, it } from "vitest";
import { ChannelsConfigSchema } from "../../shared/config/channels-config";
import { normalizeSlack } from "../../shared/channels/slack-inbound";
import { normalizeTelegram } from "../../shared/channels/telegram-inbound";
import { normalizeHook } from "../../shared/channels/hook-inbound";
import { hookSessionKey, slackSessionKey, telegramSessionKey } from "../../shared/core/channel-session-keys";
import { splitMessage } from "../../shared/core/split-message";

const channels = ChannelsConfigSchema.parse({
  telegram: { accounts: { main: { botUsername: "runner_bot" } } },
  slack: { accounts: { main: { botUserId: "UBOT" } } },
});
const tg = channels.telegram.accounts.main;
const sl = channels.slack.accounts.main;

describe("session keys (OpenClaw's format)", () => {
  it("names direct, group, topic, channel, thread and hook sessions", () => {
    expect(telegramSessionKey({ chatType: "direct", userId: "42", chatId: "42" })).toBe("agent:main:telegram:direct:42");
    expect(telegramSessionKey({ chatType: "group", userId: "1", chatId: "-100123" })).toBe("agent:main:telegram:group:-100123");
    expect(telegramSessionKey({ chatType: "group", userId: "1", chatId: "-100123", topicId: 7 })).toBe("agent:main:telegram:group:-100123:topic:7");
    expect(slackSessionKey({ chatType: "direct", userId: "U1", channelId: "D1" })).toBe("agent:main:slack:direct:U1");
    expect(slackSessionKey({ chatType: "channel", userId: "U1", channelId: "C1", threadTs: "1.2" })).toBe("agent:main:slack:channel:C1:thread:1.2");
    expect(hookSessionKey("gh", "ci bot!")).toBe("hook:gh:ci_bot_");
  });
});

describe("Telegram normalization", () => {
  const update = (message: Record<string, unknown>) => ({ update_id: 9, message: { message_id: 5, from: { id: 42 }, chat: { id: 42, type: "private" }, text: "hi", ...message } });

  it("turns a private text message into a direct message with its keys", () => {
    const out = normalizeTelegram("main", tg, update({}));
    expect(out).toMatchObject({
      kind: "message",
      message: { deliveryId: "telegram:main:update:9", messageKey: "telegram:main:42:5", sessionKey: "agent:main:telegram:direct:42", target: { kind: "telegram", chatId: "42" } },
    });
  });

  it("ignores bots, non-message updates, text-less messages and un-mentioned group messages", () => {
    expect(normalizeTelegram("main", tg, update({ from: { id: 1, is_bot: true } }))).toMatchObject({ kind: "ignore" });
    expect(normalizeTelegram("main", tg, { update_id: 1 })).toMatchObject({ kind: "ignore", reason: "unsupported update type" });
    expect(normalizeTelegram("main", tg, update({ text: undefined }))).toMatchObject({ kind: "ignore" });
    expect(normalizeTelegram("main", tg, update({ chat: { id: -5, type: "group" } }))).toMatchObject({ kind: "ignore" });
    expect(normalizeTelegram("main", { ...tg, groupPolicy: "always" }, update({ chat: { id: -5, type: "group" } }))).toMatchObject({ kind: "message" });
  });

  it("keeps a forum topic in the session key and the reply target", () => {
    const text = "@runner_bot hi";
    const out = normalizeTelegram("main", tg, update({ chat: { id: -5, type: "supergroup" }, text, entities: [{ type: "mention", offset: 0, length: 11 }], is_topic_message: true, message_thread_id: 3 }));
    expect(out).toMatchObject({ kind: "message", message: { sessionKey: "agent:main:telegram:group:-5:topic:3", target: { threadId: 3, replyToMessageId: 5 } } });
  });
});

describe("Slack normalization", () => {
  const envelope = (event: Record<string, unknown>, eventId = "Ev1") => ({
    type: "event_callback" as const,
    event_id: eventId,
    event: { type: "message", user: "U1", text: "<@UBOT> hi", channel: "C1", channel_type: "channel", ts: "10.1", ...event },
  });

  it("gives message and app_mention of one post the same message key", () => {
    const a = normalizeSlack("main", sl, envelope({ type: "app_mention" }, "Ev1"));
    const b = normalizeSlack("main", sl, envelope({}, "Ev2"));
    expect(a.kind === "message" && b.kind === "message" && a.message.messageKey === b.message.messageKey).toBe(true);
    expect(a).toMatchObject({ message: { deliveryId: "slack:main:event:Ev1", target: { channel: "C1", threadTs: "10.1" } } });
  });

  it("threads under the root, and ignores subtypes, bots, itself and un-mentioned channel messages", () => {
    expect(normalizeSlack("main", sl, envelope({ thread_ts: "9.0" }))).toMatchObject({ message: { sessionKey: "agent:main:slack:channel:C1:thread:9.0", target: { threadTs: "9.0" } } });
    expect(normalizeSlack("main", sl, envelope({ subtype: "message_changed" }))).toMatchObject({ kind: "ignore" });
    expect(normalizeSlack("main", sl, envelope({ bot_id: "B1" }))).toMatchObject({ kind: "ignore" });
    expect(normalizeSlack("main", sl, envelope({ user: "UBOT" }))).toMatchObject({ kind: "ignore" });
    expect(normalizeSlack("main", sl, envelope({ text: "no mention" }))).toMatchObject({ kind: "ignore" });
    expect(normalizeSlack("main", sl, envelope({ text: "dm", channel_type: "im", channel: "D1" }))).toMatchObject({ message: { sessionKey: "agent:main:slack:direct:U1" } });
  });
});

describe("hook normalization", () => {
  it("keys the run by idempotencyKey or webhook-id and the session by sessionKey or sender", () => {
    expect(normalizeHook("gh", "msg_1", { text: "x", from: "ci" })).toMatchObject({ message: { messageKey: "hook:gh:msg_1", sessionKey: "hook:gh:ci" } });
    expect(normalizeHook("gh", "msg_1", { text: "x", from: "ci", sessionKey: "s1", idempotencyKey: "k" })).toMatchObject({ message: { messageKey: "hook:gh:k", sessionKey: "hook:gh:s1" } });
  });
});

describe("splitMessage", () => {
  it("splits at paragraph, then sentence boundaries, never past the limit, and keeps short text whole", () => {
    const paragraph = "A".repeat(3000);
    const parts = splitMessage(`${paragraph}\n\n${"B. ".repeat(800)}`, 4096);
    expect(parts[0]).toBe(paragraph);
    expect(parts.every((part) => [...part].length <= 4096)).toBe(true);
    expect(splitMessage("short", 4096)).toEqual(["short"]);
    expect(splitMessage("x".repeat(9000), 4096).map((p) => p.length)).toEqual([4096, 4096, 808]);
  });
});

describe("streamableText (NO_REPLY hold-back)", () => {
  it("holds back text that could still be exactly NO_REPLY and shows it once it cannot", async () => {
    const { streamableText } = await import("../../shared/core/silent-prefix");
    expect(streamableText("NO")).toBe("");
    expect(streamableText("NO_REP")).toBe("");
    expect(streamableText(" no_reply ")).toBe("");
    expect(streamableText("NO_REPLY")).toBe("");
    expect(streamableText("NOT")).toBe("NOT");
    expect(streamableText("NO_REPLY needed")).toBe("NO_REPLY needed");
    expect(streamableText("Hello")).toBe("Hello");
  });
});
