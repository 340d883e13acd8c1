import { agentMethod, agentsListMethod, agentWaitMethod } from "./methods/agent";
import { approvalResolveMethod } from "./methods/approvals";
import { connectMethod } from "./methods/connect";
import { toolsResultMethod } from "./methods/tool-results";
import { chatAbortMethod, eventsReplayMethod, runsAbortMethod } from "./methods/runs";
import { sessionsHistoryMethod, sessionsListMethod, sessionsSubscribeMethod, sessionsUnsubscribeMethod } from "./methods/sessions";
import { commandsListMethod, configGetMethod, modelsListMethod, statusMethod } from "./methods/catalog";
import { chatHistoryMethod, chatSendMethod } from "./methods/chat";
import { sessionsDescribeMethod, sessionsPatchMethod, sessionsResetMethod, sessionsResolveMethod } from "./methods/session-control";
import type { Method } from "./methods/types";

export { DEFAULT_WAIT_MS } from "./methods/agent";
export { FrameReply, type Method, type MethodInput } from "./methods/types";

/** Methods that need an authenticated connection. docs/protocol.md documents each. */
export const AUTHENTICATED_METHODS: Record<string, Method> = {
  agent: agentMethod,
  "agent.wait": agentWaitMethod,
  "agents.list": agentsListMethod,
  "sessions.subscribe": sessionsSubscribeMethod,
  "sessions.unsubscribe": sessionsUnsubscribeMethod,
  "sessions.list": sessionsListMethod,
  "sessions.history": sessionsHistoryMethod,
  "runs.abort": runsAbortMethod,
  "chat.abort": chatAbortMethod,
  "events.replay": eventsReplayMethod,
  // OpenClaw's approval resolve methods (docs/approvals.md).
  "plugin.approval.resolve": approvalResolveMethod,
  "exec.approval.resolve": approvalResolveMethod,
  // A client tool's result (docs/client-tools.md).
  "tools.result": toolsResultMethod,
  // OpenClaw's TUI (docs/protocol.md, "OpenClaw TUI").
  "chat.send": chatSendMethod,
  "chat.history": chatHistoryMethod,
  "sessions.resolve": sessionsResolveMethod,
  "sessions.describe": sessionsDescribeMethod,
  "sessions.reset": sessionsResetMethod,
  "sessions.patch": sessionsPatchMethod,
  "models.list": modelsListMethod,
  "commands.list": commandsListMethod,
  status: statusMethod,
  "config.get": configGetMethod,
};

/** Everything `connect` announces in `hello-ok.features.methods`. */
export const METHOD_NAMES: readonly string[] = ["connect", ...Object.keys(AUTHENTICATED_METHODS)];

export const CONNECT_METHOD: Method = connectMethod(() => METHOD_NAMES);
