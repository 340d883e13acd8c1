/**
 * The fault cases that need a mutating tool: the template-deployed stack with
 * a fake OpenAI model and the MCP test server as `kb` (no built-in tools), the
 * fault plan wired in, no periodic sweep and no wait before a retry.
 */
import { startLocalStack, type LocalStack, type LocalStackOptions } from "../../infra/local/stack";
import type { FaultPlan } from "../../infra/local/faults";
import { AgentConfigSchema } from "../../shared/config/config";
import { FakeOpenAIServer } from "./fake-openai-server";
import { McpTestServer } from "./mcp-test-server";

export interface McpFaultStack {
  stack: LocalStack;
  oai: FakeOpenAIServer;
  mcp: McpTestServer;
  close(): Promise<void>;
}

export async function startMcpFaultStack(plan: FaultPlan, observe?: LocalStackOptions["observe"]): Promise<McpFaultStack> {
  const oai = await FakeOpenAIServer.start();
  const mcp = await McpTestServer.start();
  const config = AgentConfigSchema.parse({
    model: "openai/gpt-4o",
    providers: { openai: { baseURL: oai.baseURL, apiKey: "sk-openai-test" } },
    tools: { builtin: [] },
    mcp: { servers: { kb: { url: mcp.url, headers: { authorization: { secret: "mcp/kb/token", prefix: "Bearer ", value: "tok-e2e" } } } } },
  });
  const stack = await startLocalStack({ config, faults: plan, sweepIntervalMs: 0, waitStateMs: { WaitBeforeRetry: 0 }, ...(observe ? { observe } : {}) }).catch(async (error: unknown) => {
    await oai.close();
    await mcp.close();
    throw error;
  });
  return {
    stack,
    oai,
    mcp,
    close: async () => {
      await stack.close();
      await oai.close();
      await mcp.close();
    },
  };
}
