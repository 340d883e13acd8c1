/**
 * The three run shapes whose AWS cost the benchmark reports (issue 3
 * "Report", issue 8 figure 3), as reproducible scenarios: one configuration
 * and one script of fake-OpenAI responses each. The outer-loop tests pin what
 * each shape does (states entered, decisions); the benchmark replays the same
 * scripts on an instrumented stack and counts what they cost.
 *
 *   const loop = await startLoopStack(RUN_SHAPE_CONFIG);
 *   for (const shape of RUN_SHAPES) {
 *     const run = await playRunShape(loop, shape);    // run.states.length = transitions
 *   }
 *
 * Each shape uses its own session key, so shapes can run in any order and
 * repeatedly (pass a distinct `sessionKey` per repetition).
 */
import { chat, openAIErrorBody } from "./fake-openai-server";
import type { ScriptStep } from "./scripted-sse-server";
import type { FakeProviders, LoopStack, RunTrace } from "./loop-stack";

export interface RunShape {
  name: "clean" | "rate_limit_retry" | "overflow_compaction";
  description: string;
  /** Runs on the same session before the measured run (not measured): history to compact. */
  priming: { message: string; script: ScriptStep[] }[];
  message: string;
  script: ScriptStep[];
  /** What the measured run must do (pinned by test/loop/run-shapes.test.ts). */
  expected: { states: string[]; decisions: string[] };
}

/** One configuration serves all three shapes: one OpenAI key, no fallback, a small compaction tail; no shape stalls, so the idle window is the default. */
export function RUN_SHAPE_CONFIG({ openai, anthropic }: FakeProviders): Record<string, unknown> {
  return {
    model: "openai/gpt-shape",
    providers: { openai, anthropic },
    // A short tail makes the priming turns worth compacting.
    compaction: { keepRecentTokens: 50 },
    // A small-window model for precheck scenarios (test/loop/single-model.test.ts).
    context: { modelContextWindows: { "openai/gpt-tiny": 16_000 } },
  };
}

const LONG_ANSWER = `Here is a detailed answer. ${"The quick brown fox jumps over the lazy dog. ".repeat(60)}`;

export const RUN_SHAPES: readonly RunShape[] = [
  {
    name: "clean",
    description: "one attempt, one model call, answer: the run machine's Attempt, nothing else",
    priming: [],
    message: "What is the capital of France?",
    script: [chat.text("Paris.")],
    expected: { states: ["Attempt"], decisions: ["finalize:ok:completed"] },
  },
  {
    name: "rate_limit_retry",
    description: "a short-window 429 (Retry-After 12 s), a Wait state, then the answer",
    priming: [],
    message: "What is the capital of Spain?",
    script: [
      chat.error(429, openAIErrorBody("Rate limit reached for gpt-shape on requests per min (RPM): Limit 3, Used 3.", "requests", "rate_limit_exceeded"), { "retry-after": "12" }),
      chat.text("Madrid."),
    ],
    expected: {
      states: ["Attempt", "Route", "WaitBeforeRetry", "Attempt", "Route", "Done"],
      decisions: ["wait:12", "finalize:ok:completed"],
    },
  },
  {
    name: "overflow_compaction",
    description: "a 400 context_length_exceeded, compaction (one summary call) inside the next Attempt, then the answer",
    priming: [
      { message: `Tell me about foxes. ${"Context. ".repeat(100)}`, script: [chat.text(LONG_ANSWER)] },
      { message: `And about dogs. ${"Context. ".repeat(100)}`, script: [chat.text(LONG_ANSWER)] },
    ],
    message: "Summarise what we discussed.",
    script: [
      chat.error(400, openAIErrorBody("This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens.", "invalid_request_error", "context_length_exceeded", "messages")),
      chat.text("SUMMARY: the user asked about foxes and dogs; detailed answers were given."),
      chat.text("We discussed foxes and dogs."),
    ],
    expected: {
      states: ["Attempt", "Route", "Attempt", "Route", "Done"],
      decisions: ["compact:overflow", "finalize:ok:completed"],
    },
  },
];

/**
 * Plays one shape (priming runs first, on the same session) and returns the
 * measured run's trace. `beforeMeasured` runs right before the measured run
 * starts (take a meter snapshot there); what it returns is kept as `before`.
 */
export async function playRunShape<T>(
  loop: LoopStack,
  shape: RunShape,
  sessionKey = `shape-${shape.name}-${Date.now()}`,
  beforeMeasured?: () => T,
): Promise<RunTrace & { before?: T }> {
  for (const priming of shape.priming) {
    loop.oai.enqueue(...priming.script);
    const primed = await loop.run(priming.message, { sessionKey });
    if (primed.status !== "ok") throw new Error(`priming run of ${shape.name} ended ${primed.status}: ${primed.record.error}`);
  }
  loop.oai.enqueue(...shape.script);
  const before = beforeMeasured?.();
  const run = await loop.run(shape.message, { sessionKey });
  return before === undefined ? run : { ...run, before };
}
