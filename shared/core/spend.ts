import type { Usage } from "./messages";

/**
 * Spend arithmetic (mission "Enforce spend"): the cost of a model call from
 * configured prices, and whether a run's or a session's budget is used up.
 * Budgets stop the loop; they are checked before every model call.
 */

/** USD per million tokens. Cache prices default to the input price when not given. */
export interface ModelPricing {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
}

export interface SpendBudget {
  maxTokens?: number;
  maxCostUsd?: number;
}

export interface Spend {
  tokens: number;
  costUsd: number;
}

export const NO_SPEND: Spend = Object.freeze({ tokens: 0, costUsd: 0 });

/** Every token a provider bills for: fresh input, output, and both cache directions. */
export function totalTokens(usage: Usage): number {
  return usage.input + usage.output + usage.cacheRead + usage.cacheWrite;
}

export function usageCostUsd(usage: Usage, pricing: ModelPricing | undefined): number {
  if (!pricing) return 0;
  const perToken = (pricePerMillion: number) => pricePerMillion / 1_000_000;
  return (
    usage.input * perToken(pricing.input) +
    usage.output * perToken(pricing.output) +
    usage.cacheRead * perToken(pricing.cacheRead ?? pricing.input) +
    usage.cacheWrite * perToken(pricing.cacheWrite ?? pricing.input)
  );
}

export function spendOf(usage: Usage, pricing: ModelPricing | undefined): Spend {
  return { tokens: totalTokens(usage), costUsd: usageCostUsd(usage, pricing) };
}

export function addSpend(a: Spend, b: Spend): Spend {
  return { tokens: a.tokens + b.tokens, costUsd: a.costUsd + b.costUsd };
}

export interface BudgetBreach {
  limit: "tokens" | "cost";
  spent: number;
  max: number;
}

/** A budget is used up once spend reaches it: the next model call would go past it. */
export function budgetBreach(spent: Spend, budget: SpendBudget | undefined): BudgetBreach | undefined {
  if (budget?.maxTokens !== undefined && spent.tokens >= budget.maxTokens) {
    return { limit: "tokens", spent: spent.tokens, max: budget.maxTokens };
  }
  if (budget?.maxCostUsd !== undefined && spent.costUsd >= budget.maxCostUsd) {
    return { limit: "cost", spent: spent.costUsd, max: budget.maxCostUsd };
  }
  return undefined;
}
