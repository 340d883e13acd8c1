import type { AttemptSink } from "../agent/attempt";
import type { Db } from "../aws/dynamo";
import type { RunRecord } from "../aws/runs";
import type { ChannelsConfig } from "../config/channels-config";
import type { HookRegistry } from "../hooks/registry";
import type { Log } from "../ports/run-deps";
import { messengerFor } from "./messenger";
import { ChannelPreview } from "./preview";

/** A streamed preview for a Telegram / Slack run whose account can send; none otherwise. */
export function channelPreviewFor(deps: { db: Db; log: Log; channels: ChannelsConfig; hooks?: HookRegistry }, run: RunRecord): ChannelPreview | undefined {
  const target = run.channelTarget;
  if (!target || target.kind === "hook") return undefined;
  try {
    const messenger = messengerFor(deps.channels, target);
    const ref = { runId: run.runId, sessionKey: run.sessionKey, channel: target.kind, hooks: deps.hooks };
    return messenger ? new ChannelPreview(deps, run.runId, messenger, ref) : undefined;
  } catch (error) {
    deps.log.warn("no channel preview", { runId: run.runId, error: (error as Error).message });
    return undefined;
  }
}

/** The attempt's sink, also feeding the preview: text deltas grow it, a tool call starts the next message. */
export function withPreview<S extends AttemptSink>(sink: S, preview: ChannelPreview | undefined): S {
  if (!preview) return sink;
  return {
    ...sink,
    assistantDelta(delta: string) {
      sink.assistantDelta(delta);
      preview.add(delta);
    },
    toolStart(call) {
      sink.toolStart(call);
      preview.restart();
    },
  };
}
