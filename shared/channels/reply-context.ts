import type { AttemptRecord } from "../aws/attempts";
import type { Db } from "../aws/dynamo";
import type { RunRecord } from "../aws/runs";
import type { ChannelsConfig } from "../config/channels-config";
import type { ChannelTarget } from "../core/channel-target";
import type { ReplyInput } from "../core/reply";
import { readLedger } from "./ledger";

/**
 * What reply shaping needs to know about the conversation a run answers:
 * the texts the messaging tool already delivered (the attempts' records and
 * the delivery ledger: a send replayed by a later attempt is only in the
 * ledger), and, for a `verbose` account, the tool calls to summarize.
 */
export async function channelReplyContext(
  deps: { db: Db; channels: ChannelsConfig },
  run: RunRecord,
  attempts: readonly AttemptRecord[],
): Promise<Pick<ReplyInput, "messagingTexts" | "verbose">> {
  const fromAttempts = attempts.flatMap((attempt) => attempt.messagingToolTexts ?? []);
  if (!run.channelTarget) return fromAttempts.length > 0 ? { messagingTexts: fromAttempts } : {};
  const ledger = await readLedger(deps.db, run.runId);
  const messagingTexts = [...new Set([...fromAttempts, ...(ledger?.toolSends ?? []).map((send) => send.text)])];
  if (!isVerbose(deps.channels, run.channelTarget)) return { messagingTexts };
  const tools = attempts[attempts.length - 1]?.tools ?? [];
  return { messagingTexts, verbose: { tools: tools.map((tool) => ({ name: tool.name, isError: tool.isError })) } };
}

function isVerbose(channels: ChannelsConfig, target: ChannelTarget): boolean {
  if (target.kind === "telegram") return channels.telegram.accounts[target.accountId]?.verbose === true;
  if (target.kind === "slack") return channels.slack.accounts[target.accountId]?.verbose === true;
  return false;
}
