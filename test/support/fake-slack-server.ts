import { RecordingServer, type RecordedCall } from "./recording-server";

/**
 * Fake Slack Web API on loopback (`POST /<method>` with a bearer token),
 * recording every call; keeps each channel's messages (ts -> text, thread).
 */
export class FakeSlackServer extends RecordingServer {
  private counter = 1;
  readonly messages = new Map<string, { channel: string; text: string; threadTs?: string }>();

  constructor() {
    super((call) => this.reply(call));
  }

  static async start(): Promise<FakeSlackServer> {
    return new FakeSlackServer().start();
  }

  get baseUrl(): string {
    return this.origin;
  }

  method(name: string): RecordedCall[] {
    return this.calls.filter((call) => call.path.endsWith(`/${name}`));
  }

  private reply(call: RecordedCall) {
    const method = call.path.split("/").pop();
    if (call.headers.authorization !== "Bearer xoxb-test") return { status: 200, body: { ok: false, error: "invalid_auth" } };
    if (method === "chat.postMessage") {
      const ts = `1700000000.${String(this.counter++).padStart(6, "0")}`;
      const threadTs = call.body.thread_ts as string | undefined;
      this.messages.set(ts, { channel: String(call.body.channel), text: String(call.body.text), ...(threadTs ? { threadTs } : {}) });
      return { status: 200, body: { ok: true, channel: call.body.channel, ts } };
    }
    if (method === "chat.update") {
      const existing = this.messages.get(String(call.body.ts));
      if (!existing) return { status: 200, body: { ok: false, error: "message_not_found" } };
      existing.text = String(call.body.text);
      return { status: 200, body: { ok: true, channel: call.body.channel, ts: call.body.ts } };
    }
    return { status: 200, body: { ok: true } };
  }
}
