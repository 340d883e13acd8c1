/**
 * Channel webhook numbers on the local stack (docs/channels.md):
 * - ack latency: time from POST of a Telegram update / signed hook to its 200/202 (median, p95);
 * - edits per answer: editMessageText calls per streamed reply at the default editIntervalMs (1000).
 *
 *   npx tsx bench/channels.ts [answers=6] [updates=40]
 */
import { loadavg } from "node:os";
import { chat } from "../test/support/fake-openai-server";
import { postHook, postTelegram, startChannelStack, stopChannelStack, telegramUpdate } from "../test/support/channel-stack";

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function main(): Promise<void> {
  const answers = Number(process.argv[2] ?? 6);
  const updates = Number(process.argv[3] ?? 40);
  const env = await startChannelStack({ editIntervalMs: 1000 });
  try {
    const acks: number[] = [];
    const hookAcks: number[] = [];
    for (let i = 0; i < updates; i++) {
      env.oai.enqueue(chat.text(`Ack ${i}.`), chat.text(`Hook ${i}.`));
      acks.push((await postTelegram(env.stack, telegramUpdate(`ping ${i}`, { id: 9000 + i, type: "private" }, { id: 9000 + i }))).ms);
      hookAcks.push((await postHook(env.stack, { text: `ping ${i}`, from: `bench-${i}` })).ms);
    }
    const fmt = (v: number) => v.toFixed(1);
    // The figures depend on what else runs on the machine: the 1-minute load average goes with them.
    console.log(`load average (1 min) after the acks: ${loadavg()[0].toFixed(1)}`);
    // Printed before the streaming phase: a slow answer on a loaded machine must not lose these figures.
    console.log(`telegram ack ms: median ${fmt(percentile(acks, 50))}, p95 ${fmt(percentile(acks, 95))} (n=${acks.length})`);
    console.log(`hook ack ms:     median ${fmt(percentile(hookAcks, 50))}, p95 ${fmt(percentile(hookAcks, 95))} (n=${hookAcks.length})`);
    await env.stack.idle();
    const edits: number[] = [];
    const sends: number[] = [];
    for (let i = 0; i < answers; i++) {
      const chatId = 8000 + i;
      // ~120 words at ~40 ms a word: a 5-second streamed answer, like a real model.
      const text = Array.from({ length: 120 }, (_, w) => `word${w}`).join(" ");
      env.oai.enqueue({ ...chat.text(text), frameDelayMs: 40 } as never);
      await postTelegram(env.stack, telegramUpdate(`story ${i}`, { id: chatId, type: "private" }, { id: chatId }));
      await env.telegram.waitFor(() => env.telegram.messagesIn(String(chatId))[0] === text, 120_000, "the final text");
      await env.stack.idle();
      edits.push(env.telegram.method("editMessageText").filter((c) => c.body.chat_id === String(chatId)).length);
      sends.push(env.telegram.method("sendMessage").filter((c) => c.body.chat_id === String(chatId)).length);
    }
    console.log(`edits per streamed answer (editIntervalMs 1000, ~5 s stream): ${edits.join(", ")}; sendMessage per answer: ${sends.join(", ")}`);
  } finally {
    await stopChannelStack(env);
  }
}

void main().then(() => process.exit(0));
