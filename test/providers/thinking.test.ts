import { describe, expect, it } from "vitest";
import { buildAnthropicParams } from "../../shared/providers/anthropic";
import { buildChatParams } from "../../shared/providers/openai-chat";
import { buildResponsesParams } from "../../shared/providers/openai-responses";
import { anthropicThinking, openAIReasoningEffort } from "../../shared/providers/thinking";
import type { ModelRequest } from "../../shared/providers/types";

const request = (thinking?: ModelRequest["thinking"], maxOutputTokens = 4096): ModelRequest => ({
  model: "m",
  system: "sys",
  messages: [{ role: "user", content: "hi" }],
  tools: [],
  maxOutputTokens,
  thinking,
});

describe("requested thinking level per provider", () => {
  it("OpenAI: reasoning_effort (Chat) and reasoning.effort (Responses); xhigh is high; off sends nothing", () => {
    expect(buildChatParams(request("low"), "max_completion_tokens").reasoning_effort).toBe("low");
    expect(buildChatParams(request("xhigh"), "max_completion_tokens").reasoning_effort).toBe("high");
    expect("reasoning_effort" in buildChatParams(request("off"), "max_tokens")).toBe(false);
    expect("reasoning_effort" in buildChatParams(request(), "max_tokens")).toBe(false);
    expect(buildResponsesParams(request("medium")).reasoning).toEqual({ effort: "medium" });
    expect(buildResponsesParams(request()).reasoning).toBeUndefined();
    expect(openAIReasoningEffort("minimal")).toBe("minimal");
  });

  it("Anthropic: extended thinking with a budget by level, max_tokens raised above the budget", () => {
    const params = buildAnthropicParams(request("high", 4096));
    expect(params.thinking).toEqual({ type: "enabled", budget_tokens: 16_384 });
    expect(params.max_tokens).toBe(16_384 + 1024);
    expect(buildAnthropicParams(request("minimal", 8000)).max_tokens).toBe(8000);
    expect(buildAnthropicParams(request("off")).thinking).toBeUndefined();
    expect(anthropicThinking(undefined, 4096)).toBeUndefined();
  });
});
