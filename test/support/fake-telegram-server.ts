import { RecordingServer, type RecordedCall } from "./recording-server";

/** The bot token the fake accepts (Telegram answers 401 Unauthorized to any other). */
export const FAKE_TELEGRAM_TOKEN = "123:tg-token";

/**
 * Fake Telegram Bot API on loopback (`POST /bot<token>/<method>`), recording
 * every call. It keeps the messages it "sent" so a test reads what the chat
 * shows now (after edits), and answers like Telegram: `{ok:true,result}`,
 * 400 "message is not modified" for an edit to the same text, 401 for a
 * wrong token. `setWebhook` is kept, and `deliver` posts an update to that
 * webhook with its secret token, as Telegram does.
 */
export class FakeTelegramServer extends RecordingServer {
  private nextMessageId = 100;
  /** chat id -> message id -> current text. */
  readonly chats = new Map<string, Map<number, string>>();
  /** What the last setWebhook registered. */
  webhook: { url: string; secretToken?: string } | undefined;

  constructor(private readonly token = FAKE_TELEGRAM_TOKEN) {
    super((call) => this.reply(call));
  }

  static async start(): Promise<FakeTelegramServer> {
    return new FakeTelegramServer().start();
  }

  /** Posts `update` to the registered webhook like Telegram: JSON body, `X-Telegram-Bot-Api-Secret-Token`. */
  async deliver(update: unknown): Promise<{ status: number; body: unknown }> {
    if (!this.webhook) throw new Error("no webhook registered (setWebhook was not called)");
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (this.webhook.secretToken) headers["x-telegram-bot-api-secret-token"] = this.webhook.secretToken;
    const response = await fetch(this.webhook.url, { method: "POST", headers, body: JSON.stringify(update) });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // keep the text
    }
    return { status: response.status, body };
  }

  get baseUrl(): string {
    return this.origin;
  }

  method(name: string): RecordedCall[] {
    return this.calls.filter((call) => call.path.endsWith(`/${name}`));
  }

  /** The texts of a chat's messages, in sending order, as they read now. */
  messagesIn(chatId: string): string[] {
    return [...(this.chats.get(chatId)?.values() ?? [])];
  }

  private reply(call: RecordedCall) {
    const method = call.path.split("/").pop();
    if (!call.path.startsWith(`/bot${this.token}/`)) return { status: 401, body: { ok: false, error_code: 401, description: "Unauthorized" } };
    if (method === "setWebhook") {
      this.webhook = { url: String(call.body.url), ...(call.body.secret_token ? { secretToken: String(call.body.secret_token) } : {}) };
      return { status: 200, body: { ok: true, result: true, description: "Webhook was set" } };
    }
    const chatId = String(call.body.chat_id);
    const chat = this.chats.get(chatId) ?? new Map<number, string>();
    this.chats.set(chatId, chat);
    if (method === "sendMessage") {
      const messageId = this.nextMessageId++;
      chat.set(messageId, String(call.body.text));
      return { status: 200, body: { ok: true, result: { message_id: messageId, chat: { id: Number(chatId) }, text: call.body.text } } };
    }
    if (method === "editMessageText") {
      const id = Number(call.body.message_id);
      if (!chat.has(id)) return { status: 400, body: { ok: false, error_code: 400, description: "Bad Request: message to edit not found" } };
      if (chat.get(id) === call.body.text) {
        return { status: 400, body: { ok: false, error_code: 400, description: "Bad Request: message is not modified" } };
      }
      chat.set(id, String(call.body.text));
      return { status: 200, body: { ok: true, result: { message_id: id, text: call.body.text } } };
    }
    if (method === "deleteMessage") {
      if (!chat.delete(Number(call.body.message_id))) return { status: 400, body: { ok: false, error_code: 400, description: "Bad Request: message to delete not found" } };
      return { status: 200, body: { ok: true, result: true } };
    }
    return { status: 200, body: { ok: true, result: true } };
  }
}
