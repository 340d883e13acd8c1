import type { AgentConfig } from "../config/config";
import { createAnthropicProvider } from "./anthropic";
import { createOfflineProvider, OFFLINE_PROVIDER_ID } from "./offline";
import { createOpenAIChatProvider } from "./openai-chat";
import { createOpenAIResponsesProvider } from "./openai-responses";
import type { ModelProvider } from "./types";

// Re-exported for callers that also resolve providers; routing code imports model-refs.ts directly.
export { isOfflineModel, modelChain } from "./model-refs";

export interface ResolvedModel {
  provider: ModelProvider;
  /** Model id without the provider prefix. */
  model: string;
  /** `provider/model` as configured. */
  ref: string;
}

export class UnknownProviderError extends Error {
  override readonly name = "UnknownProviderError";
}

/** OpenAI-compatible servers (Ollama, vLLM) often need no key, but the SDK insists on one. */
const NO_KEY = "not-needed";

/** `provider/model` -> a provider instance from configuration. */
export function resolveModel(config: AgentConfig, ref: string): ResolvedModel {
  const slash = ref.indexOf("/");
  const providerId = ref.slice(0, slash);
  const model = ref.slice(slash + 1);
  return { provider: providerFor(config, providerId), model, ref };
}

function providerFor(config: AgentConfig, providerId: string): ModelProvider {
  const timeoutMs = (seconds?: number) => (seconds ? seconds * 1000 : undefined);
  switch (providerId) {
    case OFFLINE_PROVIDER_ID:
      return createOfflineProvider();
    case "openai": {
      const settings = config.providers.openai;
      const options = { apiKey: settings.apiKey ?? NO_KEY, baseURL: settings.baseURL, requestTimeoutMs: timeoutMs(settings.timeoutSeconds) };
      return settings.api === "responses" ? createOpenAIResponsesProvider({ ...options, id: "openai" }) : createOpenAIChatProvider(options);
    }
    case "anthropic": {
      const settings = config.providers.anthropic;
      return createAnthropicProvider({ apiKey: settings.apiKey ?? NO_KEY, baseURL: settings.baseURL, requestTimeoutMs: timeoutMs(settings.timeoutSeconds) });
    }
    default:
      throw new UnknownProviderError(`unknown model provider "${providerId}" (expected offline, openai or anthropic)`);
  }
}

