/**
 * The model SDKs, imported on a provider's first request instead of at
 * module load: the attempt bundle's import (its cold start) does not pay for
 * parsing and evaluating an SDK a deployment may never call (the Anthropic
 * SDK alone is a quarter of the bundle). The first request pays the import
 * once per container; later ones reuse the client. classify.ts keeps its
 * `instanceof` checks by importing only the SDKs' small error modules, which
 * are the same classes the full SDKs throw.
 */
import type Anthropic from "@anthropic-ai/sdk";
import type OpenAI from "openai";

type AnthropicOptions = ConstructorParameters<typeof Anthropic>[0];
type OpenAIOptions = ConstructorParameters<typeof OpenAI>[0];

/** A client built on first use; a failed import is retried by the next call, not cached. */
function lazily<T>(build: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () => {
    pending ??= build().catch((error: unknown) => {
      pending = undefined;
      throw error;
    });
    return pending;
  };
}

export function lazyAnthropicClient(options: AnthropicOptions): () => Promise<Anthropic> {
  return lazily(async () => new (await import("@anthropic-ai/sdk")).default(options));
}

export function lazyOpenAIClient(options: OpenAIOptions): () => Promise<OpenAI> {
  return lazily(async () => new (await import("openai")).default(options));
}
