import { readProfileHealth } from "../aws/auth-profiles";
import type { RunRecord } from "../aws/runs";
import { claimWriter, releaseWriter } from "../aws/transcript";
import { compactTranscript } from "../compaction/compact";
import { truncateStoredToolResults } from "../compaction/truncate";
import type { AgentConfig } from "../config/config";
import { chooseProfile, type ProfileHealth } from "../core/auth-cooldown";
import { estimateTokens, resolveToolResultMaxChars } from "../core/context-budget";
import { listAttempts } from "../aws/attempts";
import { hasFallback, nextModel, type Step } from "../core/decide-steps";
import type { AttemptOutcome, Decision, LoopState } from "../core/run-loop";
import { addUsage, ZERO_USAGE, type Usage } from "../core/messages";
import { spendOf } from "../core/spend";
import { recordSpend } from "../aws/usage";
import { calibrationOf } from "../core/overflow";
import { openRunEvents } from "../events/run-events";
import { modelChain, resolveModel } from "../providers/registry";
import type { RunDeps } from "./deps";
import { idleTimeoutFor } from "./attempt-wiring";
import { noteSpent, takeHeldClaim } from "./invocation-memo";
import { runHooks } from "./run-hooks";
import { configForProfile, contextWindowFor, profileCounts, profilesFor, providerOf } from "./profiles";

/**
 * What happens at the loop head before the model is called: choose the auth
 * profile (skipping profiles that cool down for every run), then carry out a
 * compaction or truncation the previous decision asked for, sized for the
 * model that runs now, under the session's writer claim.
 */
export interface Prelude {
  loop: LoopState;
  /** `provider/model` that runs. */
  ref: string;
  /** Configuration with the chosen profile's key in place (resolve the provider from it). */
  config: AgentConfig;
  contextTokens: number;
  /** Health of the chosen profile as read (a success clears an error streak). */
  profileHealth?: ProfileHealth;
  /** The context step could not shrink the transcript: decide on this instead of calling the model. */
  outcome?: AttemptOutcome;
  /** Compactions written right before this attempt (its AttemptResult.compactionCount). */
  compactions: number;
  /** What the summary calls of those compactions used (part of the attempt's usage). */
  compactionUsage?: Usage;
}

export type PreludeResult = { prelude: Prelude } | { skip: Step };

export async function prepareAttempt(
  deps: RunDeps,
  run: RunRecord,
  loop: LoopState,
  previous: Decision | undefined,
  signal: AbortSignal,
): Promise<PreludeResult> {
  const ref = modelChain(deps.config, run.model)[loop.modelIndex] ?? run.model;
  const chosen = await chooseRunProfile(deps, run, withKnownProfiles(deps, run, loop), ref);
  if ("skip" in chosen) return chosen;
  const config = configForProfile(deps.config, ref, chosen.loop.profileId);
  // A window the provider reported in an overflow error wins over a larger configured one.
  const reported = calibrationOf(chosen.loop).contextTokens ?? Infinity;
  const contextTokens = Math.min(contextWindowFor(deps.config, ref), reported);
  const prelude: Prelude = { loop: chosen.loop, ref, config, contextTokens, profileHealth: chosen.health, compactions: 0 };
  if (previous?.action === "compact" || previous?.action === "truncate") {
    let used: Usage = ZERO_USAGE;
    const meter = async (usage: Usage) => {
      used = addUsage(used, usage);
      await meterSummaryCall(deps, run, ref, usage);
    };
    const shrunk = await shrinkContext(deps, run, prelude, previous, signal, meter);
    const compactionUsage = used === ZERO_USAGE ? {} : { compactionUsage: used };
    if (typeof shrunk === "number") return { prelude: { ...prelude, compactions: shrunk, ...compactionUsage } };
    return { prelude: { ...prelude, outcome: shrunk, ...compactionUsage } };
  }
  return { prelude };
}

/**
 * Profile counts as the attempt function sees them. It is the function that
 * holds the provider keys: a function without them (run-start) cannot tell a
 * configured profile from a missing one, so the loop state's counts are
 * corrected here, where rotation decisions are made from.
 */
function withKnownProfiles(deps: RunDeps, run: RunRecord, loop: LoopState): LoopState {
  const known = profileCounts(deps.config, run.model);
  const same = known.length === loop.profileCounts.length && known.every((n, i) => n === loop.profileCounts[i]);
  return same ? loop : { ...loop, profileCounts: known };
}

type ChosenProfile = { loop: LoopState; health?: ProfileHealth } | { skip: Step };

async function chooseRunProfile(deps: RunDeps, run: RunRecord, loop: LoopState, ref: string): Promise<ChosenProfile> {
  const providerId = providerOf(ref);
  const profiles = profilesFor(deps.config, providerId);
  if (profiles.length === 0) return { loop: { ...loop, profileId: undefined } };
  // One key and nowhere else to go: nothing to choose, so no read.
  if (profiles.length === 1 && !hasFallback(loop)) return { loop: { ...loop, profileId: profiles[0].id } };
  const health = await readProfileHealth(deps.db, providerId);
  // A key that failed authentication or billing on any model of this provider in this run.
  const chain = modelChain(deps.config, run.model);
  const failed = loop.failedProfiles.filter((f) => chain[f.modelIndex] && providerOf(chain[f.modelIndex]) === providerId).map((f) => f.profileId);
  const choice = chooseProfile(
    profiles.map((p) => p.id),
    health,
    { pinned: loop.profileId, tried: loop.triedProfiles, failed, model: ref, now: deps.db.now() },
  );
  if (!choice) return { loop };
  if (choice.coolingDown && hasFallback(loop)) {
    const skipped = nextModel(loop, undefined);
    return { skip: { ...skipped, decision: { action: "attempt", reason: "profiles_cooling_down" } } };
  }
  return { loop: { ...loop, profileId: choice.profileId }, health: health.get(choice.profileId) };
}

/**
 * The system prompt the run's latest attempt sent, in (calibrated) tokens:
 * compaction keeps only what fits next to it. Unknown (no attempt recorded
 * yet, or a record from before the field) counts as nothing, as before.
 */
async function lastSystemPromptTokens(deps: RunDeps, runId: string, tokenScale = 1): Promise<number | undefined> {
  const attempts = await listAttempts(deps.db, runId);
  const chars = attempts.reduce<{ iteration: number; chars?: number } | undefined>(
    (latest, a) => (a.systemPromptChars !== undefined && (!latest || a.iteration >= latest.iteration) ? { iteration: a.iteration, chars: a.systemPromptChars } : latest),
    undefined,
  )?.chars;
  return chars === undefined ? undefined : Math.ceil(estimateTokens(chars) * tokenScale);
}

type ShrinkDecision = Extract<Decision, { action: "compact" | "truncate" }>;

/** The compactions written (0 or 1), or the outcome to decide on when the context could not be shrunk. */
async function shrinkContext(
  deps: RunDeps,
  run: RunRecord,
  prelude: Prelude,
  decision: ShrinkDecision,
  signal: AbortSignal,
  onUsage: (usage: Usage) => Promise<void>,
): Promise<AttemptOutcome | number> {
  const timeoutMs = deps.config.compaction.timeoutSeconds * 1000;
  // A claim the run start kept for this attempt is superseded by this re-entrant one (its epoch is fenced).
  takeHeldClaim(deps, run.runId);
  const claim = await claimWriter(deps.db, run.sessionId, run.runId, {
    leaseMs: timeoutMs + 60_000,
    acquireTimeoutMs: deps.config.session.writeLockAcquireTimeoutMs,
    allowReentrant: true,
  });
  const maxChars = resolveToolResultMaxChars(prelude.contextTokens, deps.config.agent.maxToolResultChars);
  try {
    if (decision.action === "truncate") {
      const cut = await truncateStoredToolResults(deps.db, claim, decision.maxChars ?? maxChars);
      return cut.rewritten > 0 ? 0 : { kind: "compaction_failed", reason: "no stored tool result is large enough to truncate", stage: "truncation" };
    }
    const events = await openRunEvents(deps, run.runId, run.sessionKey);
    const { provider, model } = resolveModel(prelude.config, prelude.ref);
    const result = await compactTranscript(
      { db: deps.db, claim, run: { runId: run.runId, sessionKey: run.sessionKey }, hooks: runHooks(deps), events },
      {
        trigger: decision.trigger,
        provider,
        model,
        modelRef: prelude.ref,
        contextTokens: prelude.contextTokens,
        keepRecentTokens: deps.config.compaction.keepRecentTokens,
        reserveTokens: deps.config.context.reserveTokens,
        timeoutMs,
        signal,
        thenTruncateToChars: decision.thenTruncate ? maxChars : undefined,
        willRetry: true,
        tokenScale: calibrationOf(prelude.loop).tokenScale,
        force: true,
        idleTimeoutMs: idleTimeoutFor(deps, prelude.config, prelude.ref, run),
        onUsage,
        systemPromptTokens: await lastSystemPromptTokens(deps, run.runId, calibrationOf(prelude.loop).tokenScale),
      },
    );
    await events.flush();
    if (!result.ok) return { kind: "compaction_failed", reason: result.reason, stage: "compaction" };
    return result.compacted ? 1 : 0;
  } finally {
    await releaseWriter(deps.db, claim);
  }
}

/**
 * A summary call costs like any model call: its tokens and cost count
 * against the run's and the session's spend budgets (the next attempt's
 * meter starts from these counters). Best effort, as for attempts: a lost
 * counter update only loosens a budget.
 */
async function meterSummaryCall(deps: RunDeps, run: RunRecord, ref: string, usage: Usage): Promise<void> {
  noteSpent(deps, run.runId);
  const spend = spendOf(usage, deps.config.pricing[ref]);
  await recordSpend(deps.db, { runId: run.runId, sessionKey: run.sessionKey }, usage, spend, false).catch((error: unknown) =>
    deps.log.warn("spend counters not updated for a summary call", { runId: run.runId, error: String(error) }),
  );
}
