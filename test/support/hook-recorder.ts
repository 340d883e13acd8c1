import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";

/** The plugin module, as a config's `plugins[]` names it. */
export const HOOK_RECORDER_PLUGIN = fileURLToPath(new URL("../fixtures/plugins/hook-recorder.ts", import.meta.url));

export interface RecordedHook {
  hook: string;
  event: Record<string, unknown>;
}

/** Receives what the hook-recorder plugin posts from inside the functions. */
export class HookRecorder {
  readonly calls: RecordedHook[] = [];
  private constructor(private readonly server: Server, readonly url: string) {}

  static async start(): Promise<HookRecorder> {
    let recorder: HookRecorder | undefined;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        recorder?.calls.push(JSON.parse(Buffer.concat(chunks).toString("utf8")) as RecordedHook);
        res.end("{}");
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    recorder = new HookRecorder(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`);
    return recorder;
  }

  /** The config entry that loads the plugin reporting `hooks` here. */
  plugin(hooks: string[]): { path: string; config: Record<string, unknown> } {
    return { path: HOOK_RECORDER_PLUGIN, config: { url: this.url, hooks } };
  }

  of(hook: string, where: (event: Record<string, unknown>) => boolean = () => true): Record<string, unknown>[] {
    return this.calls.filter((call) => call.hook === hook && where(call.event)).map((call) => call.event);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
