/**
 * Synthesizes the CDK app in a child process for `npm start`: the emulators
 * start meanwhile, and everything aws-cdk-lib allocates goes back to the
 * system when the process exits. A worker thread gave back its V8 heap but
 * not the native memory it had taken from the process's malloc arenas (the
 * compiler's zones, among others), which stayed resident in the long-lived
 * process: about 80 to 110 MB of idle RSS after a start that synthesized
 * (docs/local-memory.md, "Synthesis out of process").
 *
 * Protocol (IPC): the parent sends one `SynthesisRequest`, the child answers
 * one `SynthesisReply` and exits.
 */
import { synthesizeAssembly, type Synthesized, type SynthesizeOptions } from "./synthesize";

export interface SynthesisRequest {
  options: SynthesizeOptions;
  outdir?: string;
}

export type SynthesisReply = { ok: true; synthesized: Synthesized } | { ok: false; message: string; stack?: string };

process.once("message", (request: SynthesisRequest) => {
  let reply: SynthesisReply;
  try {
    reply = { ok: true, synthesized: synthesizeAssembly(request.options, request.outdir) };
  } catch (error) {
    const failure = error instanceof Error ? error : new Error(String(error));
    reply = { ok: false, message: failure.message, ...(failure.stack ? { stack: failure.stack } : {}) };
  }
  // Disconnect once the reply is flushed: the process then has nothing keeping it alive and exits
  // (also when the parent died meanwhile: the channel is closed already and the send fails).
  process.send!(reply, () => {
    if (process.connected) process.disconnect();
  });
});
