import type { Usage } from "../core/messages";
import { addSpend, budgetBreach, NO_SPEND, spendOf, type ModelPricing, type Spend, type SpendBudget } from "../core/spend";

/**
 * Usage accounting and spend budgets for one attempt (mission "Enforce
 * spend"). Every model call is recorded, failed ones included; `breach()` is
 * asked before every model call, so a budget stops the loop instead of only
 * showing up in a report.
 */
export interface BudgetStop {
  scope: "run" | "session";
  limit: "tokens" | "cost";
  spent: number;
  max: number;
}

export interface UsageMeter {
  breach(): BudgetStop | undefined;
  /**
   * One model call; `wasted` when its output never reached the transcript.
   * Counted at once (the next `breach()` sees it) and returns its cost; the
   * durable counters are written in the background, beside the commit and
   * the tools that follow the call (one round trip fewer on the critical path).
   */
  record(usage: Usage, wasted: boolean): number;
  /** Waits for every recorded call's counters; throws the first write that failed. */
  settle(): Promise<void>;
}

export interface MeterOptions {
  pricing?: ModelPricing;
  budgets: { run?: SpendBudget; session?: SpendBudget };
  /** Spend before this attempt (from the durable counters). */
  spentBefore: { run: Spend; session: Spend };
  /** Persists one call's usage (atomic counters in the table); failures propagate. */
  persist?(usage: Usage, spend: Spend, wasted: boolean): Promise<void>;
}

export function createUsageMeter(options: MeterOptions): UsageMeter {
  let run = options.spentBefore.run;
  let session = options.spentBefore.session;
  let writes: Promise<void>[] = [];
  return {
    breach() {
      const runBreach = budgetBreach(run, options.budgets.run);
      if (runBreach) return { scope: "run", ...runBreach };
      const sessionBreach = budgetBreach(session, options.budgets.session);
      return sessionBreach ? { scope: "session", ...sessionBreach } : undefined;
    },
    record(usage, wasted) {
      const spend = spendOf(usage, options.pricing);
      run = addSpend(run, spend);
      session = addSpend(session, spend);
      const write = options.persist?.(usage, spend, wasted);
      // Held (and marked handled) until settle(), which throws it: never an unhandled rejection.
      if (write) {
        write.catch(() => undefined);
        writes.push(write);
      }
      return spend.costUsd;
    },
    async settle() {
      const pending = writes;
      writes = [];
      const results = await Promise.allSettled(pending);
      const failed = results.find((result) => result.status === "rejected");
      if (failed) throw failed.reason;
    },
  };
}

/** No budgets, nothing persisted: tests and callers that meter elsewhere. */
export function unmeteredUsage(pricing?: ModelPricing): UsageMeter {
  return createUsageMeter({ pricing, budgets: {}, spentBefore: { run: NO_SPEND, session: NO_SPEND } });
}
