import { markProfileFailure, markProfileGood } from "../aws/auth-profiles";
import { recordExecution, type RunRecord } from "../aws/runs";
import { readEntries } from "../aws/transcript";
import { contextChars, estimateTokens } from "../core/context-budget";
import { continuationName } from "../core/execution-names";
import type { Step } from "../core/decide-steps";
import type { AttemptOutcome, LoopState } from "../core/run-loop";
import { modelHistory } from "../core/session-view";
import { modelChain } from "../providers/model-refs";
import type { RunDeps } from "./deps";
import type { Prelude } from "./attempt-prelude";
import { providerOf } from "./profiles";

/**
 * The impure edges of a decision: what the attempt's outcome needs from
 * storage before the pure decision runs, and what the decision asks the step
 * to do afterwards (profile cooldowns, the continue-as-new start).
 */

/**
 * Facts the timeout branch needs: the window of the model that ran and the
 * prompt it was sent: the full system prompt of that attempt (bootstrap
 * files, skills, tools, hook contexts), not the configured base prompt.
 */
export async function withPromptFacts(deps: RunDeps, run: RunRecord, prelude: Prelude, outcome: AttemptOutcome, systemPromptChars = 0): Promise<AttemptOutcome> {
  if (outcome.kind !== "failed") return outcome;
  const withWindow = { ...outcome, contextTokens: outcome.contextTokens ?? prelude.contextTokens };
  if (outcome.failure.kind !== "timeout" || outcome.promptTokens !== undefined) return withWindow;
  // Only timeouts need the prompt size: estimate it from what the model was sent (one read, on a rare path).
  const history = modelHistory(await readEntries(deps.db, run.sessionId));
  return { ...withWindow, promptTokens: estimateTokens(contextChars("", history) + systemPromptChars) };
}

/** Profile cooldowns the decision asked for; a success clears the profile's error streak. */
export async function applyEffects(deps: RunDeps, run: RunRecord, step: Step, attempt?: { prelude: Prelude; outcome: AttemptOutcome }): Promise<void> {
  const chain = modelChain(deps.config, run.model);
  for (const effect of step.effects ?? []) {
    const ref = chain[effect.modelIndex];
    if (!ref || providerOf(ref) === "offline") continue;
    try {
      await markProfileFailure(deps.db, providerOf(ref), effect.profileId, effect.reason, ref);
    } catch (error) {
      // Health is advisory: a lost cooldown write must not fail the run.
      deps.log.warn("could not record auth-profile failure", { runId: run.runId, profileId: effect.profileId, error: String(error) });
    }
  }
  const prelude = attempt?.prelude;
  if (attempt?.outcome.kind === "completed" && prelude?.loop.profileId) {
    await markProfileGood(deps.db, providerOf(prelude.ref), prelude.loop.profileId, prelude.profileHealth).catch(() => undefined);
  }
}

/**
 * Starts the run's next execution with the loop state; the current one then
 * ends (state `Continued`). The loop machine starts at Route: the decision
 * sends it to its Attempt.
 */
export async function continueAsNew(deps: RunDeps, runId: string, loop: LoopState): Promise<void> {
  if (!deps.executions.continueRun) throw new Error("continue-as-new needs STATE_MACHINE_ARN in the attempt function");
  const name = continuationName(runId, loop.execution);
  const started = await deps.executions.continueRun(name, { runId, loop, decision: { action: "attempt", reason: "continue_as_new" } });
  if (started.executionArn) await recordExecution(deps.db, runId, started.executionArn);
}
