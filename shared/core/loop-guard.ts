import { createHash } from "node:crypto";
import { LIMITS, type PostCompactionGuard } from "./run-loop";

/**
 * Post-compaction loop guard (reference §I, OpenClaw #77474). A compaction
 * can leave the model without the memory that it already did something, so
 * it repeats a tool call. The guard is armed at every compaction; each tool
 * outcome after it uses up one slot of the window; the same tool with the
 * same arguments and the same result `window` times inside the window stops
 * the run instead of letting it loop until a timeout.
 */
export function armGuard(window: number = LIMITS.postCompactionGuardWindow): PostCompactionGuard {
  return { remaining: window, seen: {} };
}

export interface ToolOutcome {
  toolName: string;
  args: unknown;
  result: string;
}

export type GuardVerdict =
  | { guard: PostCompactionGuard | undefined; abort: false }
  | { guard: PostCompactionGuard; abort: true; toolName: string; repeats: number };

/** Records one tool outcome; the guard disarms (undefined) once its window is used up. */
export function observeToolOutcome(
  guard: PostCompactionGuard | undefined,
  outcome: ToolOutcome,
  window: number = LIMITS.postCompactionGuardWindow,
): GuardVerdict {
  if (!guard || guard.remaining <= 0) return { guard: undefined, abort: false };
  const key = `${outcome.toolName}|${digest(stableJson(outcome.args))}|${digest(outcome.result)}`;
  const repeats = (guard.seen[key] ?? 0) + 1;
  const next: PostCompactionGuard = { remaining: guard.remaining - 1, seen: { ...guard.seen, [key]: repeats } };
  if (repeats >= window) return { guard: next, abort: true, toolName: outcome.toolName, repeats };
  return { guard: next.remaining > 0 ? next : undefined, abort: false };
}

function digest(text: string): string {
  return createHash("sha256").update(text).digest("base64url").slice(0, 16);
}

/** JSON with sorted keys, so `{a,b}` and `{b,a}` hash alike. */
export function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}
