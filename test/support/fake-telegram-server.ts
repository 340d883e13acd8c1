import { RecordingServer, type RecordedCall } from "./recording-server";

/**
 * Fake Telegram Bot API on loopback (`POST /bot<token>/<method>`), recording
 * every call. It keeps the messages it "sent" so a test reads what the chat
 * shows now (after edits), and answers like Telegram: `{ok:true,result}`,
 * 400 "message is not modified" for an edit to the same text.
 */
export class FakeTelegramServer extends RecordingServer {
  private nextMessageId = 100;
  /** chat id -> message id -> current text. */
  readonly chats = new Map<string, Map<number, string>>();

  constructor() {
    super((call) => this.reply(call));
  }

  static async start(): Promise<FakeTelegramServer> {
    return new FakeTelegramServer().start();
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
    return { status: 200, body: { ok: true, result: true } };
  }
}
