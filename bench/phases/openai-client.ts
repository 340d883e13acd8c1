/**
 * Optional figure: OpenClaw's own HTTP client path pointed at us. A client
 * of OpenClaw's gateway calls `POST /v1/chat/completions` with the `openai`
 * SDK (OpenClaw's contract, docs/openai-api.md); the same call goes to our
 * local stack here, JSON and streamed, each a fresh session (header
 * `x-openclaw-session-key`), timed client-side and net of the model server's
 * time, next to the direct-SDK floor of the same conversation. Skipped (and
 * said so) when the route is not there.
 */
import OpenAI from "openai";
import { performance } from "node:perf_hooks";
import type { LocalStack } from "../../infra/local/stack";
import { baselineRun, createBaselineClient } from "../baseline";
import type { BenchModelServer } from "../model-server";
import { messageFor } from "../shapes";
import { summarize, type Summary } from "../stats";

export interface OpenAiClientResult {
  available: boolean;
  reason?: string;
  runs: number;
  /** Net of model-server time, per mode. */
  json?: Summary;
  stream?: Summary;
  baseline?: Summary;
  failures: number;
  samples: { json: number[]; stream: number[]; baseline: number[] };
}

export async function measureOpenAiClient(stack: LocalStack, model: BenchModelServer, options: { runs: number; warmup: number }): Promise<OpenAiClientResult> {
  const client = new OpenAI({ apiKey: stack.authToken, baseURL: `${stack.restUrl}/v1`, maxRetries: 0, timeout: 60_000 });
  const floor = createBaselineClient(model.baseURL);
  const samples = { json: [] as number[], stream: [] as number[], baseline: [] as number[] };
  const probe = await fetch(`${stack.restUrl}/v1/models`, { headers: { authorization: `Bearer ${stack.authToken}` } });
  if (probe.status === 404) return { available: false, reason: "no /v1 routes on this stack", runs: 0, failures: 0, samples };
  let failures = 0;
  for (let i = 0; i < options.warmup + options.runs; i += 1) {
    const keep = i >= options.warmup;
    for (const mode of ["json", "stream"] as const) {
      const tag = `oai-${mode}-${String(i).padStart(4, "0")}`;
      try {
        const ms = await completion(client, tag, mode === "stream");
        if (keep) samples[mode].push(round(ms - model.statsOf(tag).serverMs));
      } catch {
        failures += 1;
      }
    }
    const baseTag = `oai-base-${String(i).padStart(4, "0")}`;
    const baseMs = await baselineRun(floor, "one-call", baseTag, stack.config.agent.systemPrompt);
    if (keep) samples.baseline.push(round(baseMs - model.statsOf(baseTag).serverMs));
  }
  return {
    available: true,
    runs: options.runs,
    json: summarize(samples.json),
    stream: summarize(samples.stream),
    baseline: summarize(samples.baseline),
    failures,
    samples,
  };
}

/** One chat completion as OpenClaw's gateway clients send it; resolves when the answer is complete. */
async function completion(client: OpenAI, tag: string, stream: boolean): Promise<number> {
  const body = { model: "openclaw:main", messages: [{ role: "user" as const, content: messageFor("one-call", tag) }] };
  const headers = { "x-openclaw-session-key": `bench-${tag}` };
  const started = performance.now();
  if (!stream) {
    const answer = await client.chat.completions.create(body, { headers });
    if (!answer.choices[0]?.message) throw new Error("no answer");
    return performance.now() - started;
  }
  const chunks = await client.chat.completions.create({ ...body, stream: true }, { headers });
  for await (const chunk of chunks) void chunk;
  return performance.now() - started;
}

const round = (ms: number) => Math.round(ms * 1000) / 1000;
