/**
 * The run shapes the benchmark drives, and what the bench model server
 * answers for each. Shapes follow the outer-loop issue: a plain one-call run,
 * a run with three tool round trips (calculator), and a run whose first model
 * call is rate limited (429, then success), which goes through the state
 * machine's Wait. `stream` is for the streaming-cost figure.
 *
 * A run's user message carries its directive: `[bench <shape> <runTag> k=v]`.
 */
import type { ChatScript } from "../test/support/fake-openai-server";

export const SHAPES = ["one-call", "tools-3", "retry-429", "stream"] as const;
export type Shape = (typeof SHAPES)[number];

/** The three shapes the cost figure reports. */
export const COST_SHAPES: readonly Shape[] = ["one-call", "tools-3", "retry-429"];

export interface Directive {
  shape: Shape;
  runTag: string;
  params: Record<string, number>;
}

export const TOOL_ROUNDS = 3;
export const FINAL_TEXT = "All done: the numbers are in and the answer is ready for you now.";

export type PlannedReply =
  | { kind: "stream"; script: ChatScript; frameDelayMs?: number }
  | { kind: "error"; status: number; headers: Record<string, string>; body: unknown };

/** The user message of one run of a shape. */
export function messageFor(shape: Shape, runTag: string, params: Record<string, number> = {}): string {
  const extra = Object.entries(params).map(([key, value]) => ` ${key}=${value}`).join("");
  const ask = shape === "tools-3" ? "Please compute three small products with the calculator." : "Please answer briefly.";
  return `[bench ${shape} ${runTag}${extra}] ${ask}`;
}

const DIRECTIVE = /\[bench ([a-z0-9-]+) ([A-Za-z0-9_.:-]+)((?: [a-zA-Z]+=\d+)*)\]/;

export function parseDirective(text: string): Directive | undefined {
  const match = DIRECTIVE.exec(text);
  if (!match || !(SHAPES as readonly string[]).includes(match[1])) return undefined;
  const params: Record<string, number> = {};
  for (const pair of match[3].trim().split(" ").filter(Boolean)) {
    const [key, value] = pair.split("=");
    params[key] = Number(value);
  }
  return { shape: match[1] as Shape, runTag: match[2], params };
}

/**
 * What the model answers: `round` is the number of tool results already in
 * the conversation, `requestIndex` how many requests this run made before.
 */
export function planReply(directive: Directive, round: number, requestIndex: number): PlannedReply {
  switch (directive.shape) {
    case "one-call":
      return { kind: "stream", script: { text: FINAL_TEXT } };
    case "tools-3":
      if (round < TOOL_ROUNDS) {
        const call = { id: `call_${directive.runTag}_${round}`, name: "calculator", args: { expression: `${round + 2} * 7` } };
        return { kind: "stream", script: { toolCalls: [call] } };
      }
      return { kind: "stream", script: { text: FINAL_TEXT } };
    case "retry-429":
      return requestIndex === 0 ? rateLimited() : { kind: "stream", script: { text: FINAL_TEXT } };
    case "stream":
      return {
        kind: "stream",
        script: { text: wordsText(directive.params.words ?? 1000), usage: { prompt: 40, completion: directive.params.words ?? 1000 } },
        frameDelayMs: directive.params.delayMs || undefined,
      };
  }
}

/** `n` words, each streamed as its own delta (one "token" per delta). */
export function wordsText(n: number): string {
  const words: string[] = [];
  for (let i = 0; i < n; i += 1) words.push(`w${i % 100}`);
  return words.join(" ");
}

/** OpenAI's 429 for a short TPM window, as recorded in test/fixtures/openai/error-429-rate-limit.json. */
function rateLimited(): PlannedReply {
  return {
    kind: "error",
    status: 429,
    headers: { "x-ratelimit-reset-tokens": "1.58s", "x-ratelimit-remaining-tokens": "0" },
    body: {
      error: {
        message: "Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30000, Used 29660, Requested 1130. Please try again in 1.58s.",
        type: "tokens",
        param: null,
        code: "rate_limit_exceeded",
      },
    },
  };
}
