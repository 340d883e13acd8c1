import type { SessionRecord } from "../../../shared/aws/sessions";
import { DEFAULT_AGENT_ID } from "../../../shared/protocol/limits";

/** `provider/model` as OpenClaw's rows carry it (`modelProvider` + `model`). */
export function splitModel(model: string): { modelProvider: string; model: string } {
  const slash = model.indexOf("/");
  return slash < 0 ? { modelProvider: "", model } : { modelProvider: model.slice(0, slash), model: model.slice(slash + 1) };
}

/** The `defaults` OpenClaw's session answers carry: the model a session without overrides runs. */
export function sessionDefaults(configuredModel: string) {
  return { ...splitModel(configuredModel), agentId: DEFAULT_AGENT_ID };
}

/**
 * One session as OpenClaw's session rows describe it (the fields its TUI
 * reads: key, sessionId, updatedAt, model, activity). Our own fields
 * (`sessionKey`, `createdAt`, `lastRunId`) stay for our clients. The
 * activity fields are there only when the lane was read (`lane` given):
 * OpenClaw's rule is that an absent `activeRunIds` means "not known".
 */
export function sessionRow(session: SessionRecord, configuredModel: string, lane?: { activeRunId?: string }) {
  return {
    key: session.sessionKey,
    sessionKey: session.sessionKey,
    sessionId: session.sessionId,
    agentId: DEFAULT_AGENT_ID,
    kind: "direct",
    createdAt: session.createdAt,
    updatedAt: session.updatedAt,
    ...(session.lastRunId ? { lastRunId: session.lastRunId } : {}),
    ...splitModel(configuredModel),
    ...(lane ? { hasActiveRun: lane.activeRunId !== undefined, activeRunIds: lane.activeRunId ? [lane.activeRunId] : [] } : {}),
  };
}
