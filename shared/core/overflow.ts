import type { AttemptOutcome, Calibration, LoopState } from "./run-loop";

type Failed = Extract<AttemptOutcome, { kind: "failed" }>;

/**
 * What a provider's overflow error teaches the loop (reference §G.55): the
 * token count to plan the compaction with is the provider's count, else our
 * precheck estimate, else budget + 1; and when the provider counted more than
 * we estimated, or states a smaller window than configured, the model's
 * calibration records it for the rest of the run, so the precheck, the
 * in-loop guard and the compaction planner size with the provider's numbers
 * (a self-hosted model whose real window is smaller than configured, images,
 * a tokenizer our 4-chars-per-token estimate misjudges). Pure.
 */
/**
 * The most a single observation may scale our estimate. A tokenizer we
 * misjudge is off by a small factor (dense CJK text: about 4x); a provider
 * counting far more than that for a prompt we estimate small is counting
 * something compaction cannot shrink (tool schemas, server-side additions),
 * and scaling everything by it would make every later prompt look too large.
 */
export const MAX_TOKEN_SCALE = 8;

export function overflowTokenCount(loop: LoopState, outcome: Failed): number | undefined {
  const reported = outcome.failure.overflow?.promptTokens;
  if (reported !== undefined) return reported;
  const estimated = outcome.estimatedPromptTokens ?? outcome.promptTokens;
  if (estimated !== undefined) return Math.round(estimated * calibrationOf(loop).tokenScale);
  const window = calibrationOf(loop).contextTokens ?? outcome.contextTokens;
  return window !== undefined ? window + 1 : undefined;
}

export function calibrationOf(loop: LoopState, modelIndex = loop.modelIndex): Calibration {
  return loop.calibration[String(modelIndex)] ?? { tokenScale: 1 };
}

/** Only ever tightens: a larger scale, a smaller window. */
export function calibrate(loop: LoopState, outcome: Failed): LoopState {
  const facts = outcome.failure.overflow;
  if (!facts) return loop;
  const current = calibrationOf(loop);
  const estimated = outcome.estimatedPromptTokens;
  const observed = facts.promptTokens !== undefined && estimated ? facts.promptTokens / estimated : 1;
  const tokenScale = Math.min(MAX_TOKEN_SCALE, Math.max(current.tokenScale, Math.round(observed * 1000) / 1000, 1));
  const windows = [current.contextTokens, facts.maxContextTokens].filter((n): n is number => n !== undefined);
  const next: Calibration = { tokenScale, ...(windows.length ? { contextTokens: Math.min(...windows) } : {}) };
  if (next.tokenScale === current.tokenScale && next.contextTokens === current.contextTokens) return loop;
  return { ...loop, calibration: { ...loop.calibration, [String(loop.modelIndex)]: next } };
}
