import { startLocalStack, type LocalStack } from "../../infra/local/stack";
import { loadAgentConfig } from "../../shared/config/config";
import { FakeOpenAIServer } from "./fake-openai-server";

export interface FakeOpenAIStack {
  stack: LocalStack;
  oai: FakeOpenAIServer;
}

/** The whole local stack with `openai/gpt-4o` served by the scriptable fake OpenAI server. */
export async function startStackWithFakeOpenAI(): Promise<FakeOpenAIStack> {
  const oai = await FakeOpenAIServer.start();
  const config = loadAgentConfig({ OPENAI_API_KEY: "test", OPENAI_BASE_URL: oai.baseURL, MODEL: "openai/gpt-4o" });
  return { oai, stack: await startLocalStack({ config }) };
}

export async function stopStackWithFakeOpenAI(parts: Partial<FakeOpenAIStack>): Promise<void> {
  await parts.stack?.close();
  await parts.oai?.close();
}
