import { describe, expect, it } from "vitest";
import { AgentConfigSchema } from "../../shared/config/config";
import { DEFAULT_RUN_MAX_TOKENS } from "../../shared/config/attempt-config";
import { createUsageMeter } from "../../shared/agent/usage-meter";
import { NO_SPEND } from "../../shared/core/spend";

describe("default run budget (issue 17: cost limits)", () => {
  it("every run has a token ceiling unless the configuration sets its own", () => {
    expect(AgentConfigSchema.parse({}).budgets.run).toEqual({ maxTokens: DEFAULT_RUN_MAX_TOKENS });
    expect(AgentConfigSchema.parse({ budgets: { run: { maxCostUsd: 2 } } }).budgets.run).toEqual({ maxCostUsd: 2 });
    expect(AgentConfigSchema.parse({}).budgets.session).toEqual({});
  });

  it("the default stops a run that has used it up before its next model call", () => {
    const { budgets } = AgentConfigSchema.parse({});
    const meter = createUsageMeter({ budgets, spentBefore: { run: { tokens: DEFAULT_RUN_MAX_TOKENS, costUsd: 0 }, session: NO_SPEND } });
    expect(meter.breach()).toMatchObject({ scope: "run", limit: "tokens", max: DEFAULT_RUN_MAX_TOKENS });
  });
});
