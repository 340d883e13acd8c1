import type { ProviderEvent } from "../../providers/types";
import { promoteStandaloneTextToolCalls } from "./promote-text-tool-calls";
import { sanitizeMalformedToolCalls } from "./sanitize-tool-calls";
import { trimToolCallNames } from "./trim-tool-names";

/**
 * Stream compatibility transforms: one typed, ordered list applied to every
 * model stream of the attempt (OpenClaw re-wrapped a function field ten
 * times; here the order is data and a test pins it). Events flow through the
 * list front to back. Each transform keeps the `end` message consistent with
 * the events it changed, so the transcript stores what the client saw.
 *
 * The order is a contract: malformed tool calls are sanitized BEFORE
 * standalone text is promoted to a tool call (promoting first would turn
 * text into calls the sanitizer then has to second-guess), and names are
 * trimmed last, for native and promoted calls alike.
 */
export interface StreamContext {
  /** Names of the tools offered in this request. */
  readonly toolNames: ReadonlySet<string>;
  /** Id for a call that arrived without one (or was promoted from text). */
  newCallId(): string;
}

export interface StreamTransform {
  readonly name: string;
  apply(source: AsyncIterable<ProviderEvent>, context: StreamContext): AsyncIterable<ProviderEvent>;
}

export const STREAM_TRANSFORMS: readonly StreamTransform[] = [sanitizeMalformedToolCalls, promoteStandaloneTextToolCalls, trimToolCallNames];

export function applyStreamTransforms(
  source: AsyncIterable<ProviderEvent>,
  context: StreamContext,
  transforms: readonly StreamTransform[] = STREAM_TRANSFORMS,
): AsyncIterable<ProviderEvent> {
  return transforms.reduce((stream, transform) => transform.apply(stream, context), source);
}
