/**
 * The context-window guard (reference §D.36; OpenClaw
 * src/agents/context-window-guard.ts): the effective window of a run is
 * min(configured contextTokens, the model's window). Below 32000 tokens the
 * run goes on with a warning; below 16000 the model is refused before it is
 * called, with OpenClaw's error text, and the outer loop may fall back to
 * another model (a failover-able failure, like an unknown model).
 */
export const CONTEXT_WINDOW_HARD_MIN_TOKENS = 16_000;
export const CONTEXT_WINDOW_WARN_BELOW_TOKENS = 32_000;

export type ContextWindowCheck = { ok: true; warning?: string } | { ok: false; message: string };

export function checkContextWindow(tokens: number): ContextWindowCheck {
  if (tokens < CONTEXT_WINDOW_HARD_MIN_TOKENS) {
    return { ok: false, message: `Model context window too small (${tokens} tokens). Minimum is ${CONTEXT_WINDOW_HARD_MIN_TOKENS}.` };
  }
  if (tokens < CONTEXT_WINDOW_WARN_BELOW_TOKENS) {
    return { ok: true, warning: `Model context window is small (${tokens} tokens); below ${CONTEXT_WINDOW_WARN_BELOW_TOKENS} the run compacts often.` };
  }
  return { ok: true };
}
