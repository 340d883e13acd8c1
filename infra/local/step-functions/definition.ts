/**
 * Reading and preparing an ASL definition for aws-local-stepfunctions.
 */
import type { StateMachineDefinition } from "aws-local-stepfunctions";

type JsonObject = Record<string, unknown>;

export interface TaskStateRef {
  stateName: string;
  resource: string;
  /** `.waitForTaskToken` tasks: the longest gap between heartbeats (unset = none required). */
  heartbeatSeconds?: number;
}

/** Node fires a timer at once when its delay is past 2^31-1 ms; this is the longest it can hold. */
export const MAX_TIMER_SECONDS = Math.floor(2_147_483_647 / 1000);

function asObject(value: unknown): JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as JsonObject) : {};
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** Visits every state, including those inside Parallel branches and Map processors. */
export function forEachState(definition: JsonObject, visit: (name: string, state: JsonObject) => void): void {
  for (const [name, raw] of Object.entries(asObject(definition.States))) {
    const state = asObject(raw);
    visit(name, state);
    for (const branch of asArray(state.Branches)) forEachState(asObject(branch), visit);
    const processor = state.ItemProcessor ?? state.Iterator;
    if (processor !== undefined) forEachState(asObject(processor), visit);
  }
}

/**
 * Every Task state with its Resource. The library keys local task handlers by
 * state name across nested machines too, which is sound because ASL requires
 * state names to be unique in the whole definition.
 */
export function taskStates(definition: object): TaskStateRef[] {
  const tasks: TaskStateRef[] = [];
  forEachState(asObject(definition), (stateName, state) => {
    if (state.Type !== "Task") return;
    const heartbeatSeconds = typeof state.HeartbeatSeconds === "number" ? state.HeartbeatSeconds : undefined;
    tasks.push({ stateName, resource: String(state.Resource ?? ""), ...(heartbeatSeconds ? { heartbeatSeconds } : {}) });
  });
  return tasks;
}

/**
 * A copy of the definition with AWS's timer semantics made explicit:
 * - a Task without TimeoutSeconds(Path) has no timeout in AWS (99999999 s,
 *   bounded by the execution), but the library defaults it to 60 s, which
 *   would kill long Lambda tasks locally. We write the longest timer Node can
 *   hold (about 24.8 days) instead;
 * - any larger TimeoutSeconds / Wait Seconds is clamped to that, because
 *   Node would otherwise fire the timer immediately. Values read at run time
 *   (TimeoutSecondsPath, SecondsPath) cannot be clamped here.
 */
export function prepareDefinition(definition: object): StateMachineDefinition {
  const copy = structuredClone(definition) as JsonObject;
  clampSeconds(copy, "TimeoutSeconds");
  forEachState(copy, (_, state) => {
    if (state.Type === "Task") {
      applyTaskTimeoutDefault(state);
      resolveTimeoutPathOnStateInput(state);
    }
    if (state.Type === "Wait") clampSeconds(state, "Seconds");
  });
  return copy as unknown as StateMachineDefinition;
}

/** Where the local copy of a Task's dynamic timeout travels inside its Parameters (never passed on). */
export const LOCAL_TIMEOUT_PARAMETER = "__localTimeoutSeconds";

/**
 * Step Functions reads TimeoutSecondsPath from the state's input; the library
 * reads it from the Parameters' result, where `$.decision.timeoutSeconds` is
 * gone. So the value is copied into the Parameters under a key of ours (task
 * handlers pass on only the fields they know) and the path points there.
 */
function resolveTimeoutPathOnStateInput(state: JsonObject): void {
  const path = state.TimeoutSecondsPath;
  const parameters = state.Parameters;
  if (typeof path !== "string" || typeof parameters !== "object" || parameters === null || Array.isArray(parameters)) return;
  (parameters as JsonObject)[`${LOCAL_TIMEOUT_PARAMETER}.$`] = path;
  state.TimeoutSecondsPath = `$.${LOCAL_TIMEOUT_PARAMETER}`;
}

function applyTaskTimeoutDefault(state: JsonObject): void {
  if (state.TimeoutSeconds === undefined && state.TimeoutSecondsPath === undefined) {
    state.TimeoutSeconds = MAX_TIMER_SECONDS;
  }
  clampSeconds(state, "TimeoutSeconds");
}

function clampSeconds(holder: JsonObject, field: string): void {
  const value = holder[field];
  if (typeof value === "number" && value > MAX_TIMER_SECONDS) holder[field] = MAX_TIMER_SECONDS;
}
