import type { RunRecord } from "../aws/runs";
import { setRunModel } from "../aws/run-model";
import type { FinalizeDecision } from "../core/run-loop";
import { runFirstAnswer, runObservers } from "../hooks/runners";
import type { RunDeps } from "./deps";
import { runHooks } from "./run-hooks";

/** The providers a model reference may name (shared/providers/registry.ts). */
const KNOWN_PROVIDERS = new Set(["offline", "openai", "anthropic"]);

/** When before_agent_run blocks without a message of its own. */
export const DEFAULT_HOOK_BLOCK_MESSAGE = "This request was blocked by a plugin.";

export interface RunStartHooks {
  /** The run's model after before_model_resolve (unchanged when no hook answered). */
  model: string;
  /** before_agent_run blocked (or the chosen model cannot exist): the run ends with this, no attempt. */
  ended?: FinalizeDecision;
}

/**
 * The hooks of a run's start, once per run, in OpenClaw's order:
 * message_received (the inbound message), before_model_resolve (may pick
 * another provider/model; no messages), before_agent_run (may block: the run
 * ends with the hook's message, error.kind "hook_block", and is not retried).
 */
export async function runStartHooks(deps: RunDeps, run: RunRecord): Promise<RunStartHooks> {
  const hooks = runHooks(deps);
  const ref = { runId: run.runId, sessionKey: run.sessionKey };
  const prompt = run.ownMessage ?? run.message;
  // A channel message had its message_received at intake (shared/channels/accept.ts), steered or not.
  if (!run.channelTarget) await runObservers(hooks, "message_received", { ...ref, text: prompt, channel: run.source });
  const model = await resolvedModel(deps, run, prompt);
  if (model.ended) return model;
  const verdict = await runFirstAnswer(hooks, "before_agent_run", { ...ref, prompt, model: model.model }, (r) => r.block === true);
  if (!verdict) return model;
  const message = verdict.message?.trim() || DEFAULT_HOOK_BLOCK_MESSAGE;
  deps.log.info("run blocked by before_agent_run", { runId: run.runId });
  return { model: model.model, ended: { action: "finalize", status: "error", reason: "hook_block", error: message, errorKind: "hook_block", livenessState: "blocked" } };
}

async function resolvedModel(deps: RunDeps, run: RunRecord, prompt: string): Promise<RunStartHooks> {
  const answer = await runFirstAnswer(
    runHooks(deps),
    "before_model_resolve",
    { runId: run.runId, sessionKey: run.sessionKey, prompt, model: run.model },
    (r) => Boolean(r.providerOverride || r.modelOverride),
  );
  if (!answer) return { model: run.model };
  const [provider, ...rest] = run.model.split("/");
  const model = `${answer.providerOverride ?? provider}/${answer.modelOverride ?? rest.join("/")}`;
  if (!KNOWN_PROVIDERS.has(model.slice(0, model.indexOf("/"))) || model.endsWith("/")) {
    const error = `Unknown model: ${model}`;
    return { model: run.model, ended: { action: "finalize", status: "error", reason: "model_not_found", error, errorKind: "model_not_found", livenessState: "blocked" } };
  }
  if (model !== run.model) await setRunModel(deps.db, run.runId, model);
  return { model };
}
